#!/bin/bash
# Bad input, a table of cases. Each exits with its documented status (2: a
# bad command line or an export file that cannot be created, 3: a target
# problem, 1: a failure while tracing), prints nothing on stdout (but the
# run that fails writing its export) and exactly one line on stderr,
# "alloctrace: " and what is wrong; and it leaves nothing behind: no
# process of its own (a launched command reaped, not a zombie), no probe on
# the target, and a target that goes on working.
# The table runs twice: with the loader, and with its ASan + UBSan build
# (build/asan/alloctrace, `make tool-asan`), which must say nothing more:
# no sanitizer report, no leak.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

ASAN_TOOL=$ROOT/build/asan/alloctrace
require_built "$WL/leaks" "$WL/target" "$ASAN_TOOL"

# Leaks in our code fail the case; libelf's and libdw's own are suppressed.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$ROOT/fuzz/lsan.supp:print_suppressions=0

# --- what the cases run on ---------------------------------------------------

# A pid that existed a moment ago: our own reaped child.
sleep 0 &
GONE=$!
wait "$GONE"
dead "$GONE" || fail "setup" "pid $GONE was reused"

# A zombie: the child of a process that execs something that never reaps.
# The child ends only once its parent is that program: one that ended
# sooner could be reaped by bash before its exec (seen under load).
# shellcheck disable=SC2016 # $$ is the inner shell's
# It and the live target below live until cleanup kills them: in QEMU
# without KVM this script took 20 minutes, and lifetimes of 120 s, then
# 600 s, ended them before the last cases ran.
bash -c '(until [ "$(cat /proc/$$/comm)" = sleep ]; do sleep 0.01; done; exec sleep 0) &
	exec sleep infinity' &
ZOMBIE_PARENT=$!
track "$ZOMBIE_PARENT"
zombie_child() {
	ZOMBIE=$(pgrep -P "$ZOMBIE_PARENT") && [[ "$(ps -o stat= -p "$ZOMBIE")" == Z* ]]
}
wait_for 10 zombie_child || fail "setup" "no zombie"

# A live target that must come through every case unharmed.
mkdir -p "$TMP/live"
"$WL/target" "$TMP/live" 86400 &
LIVE=$!
track "$LIVE"
wait_for 10 test -e "$TMP/live/ready" || fail "setup" "target not ready"

# Programs without an allocator: static and stripped (musl), and static
# without any C library. Named after this test's pid, so that what they
# leave behind is not another test's.
STATIC=static$$
NOLIBC=nolibc$$
printf '#include <stdlib.h>\nint main(void) { return malloc(1) == 0; }\n' >"$TMP/st.c"
musl-gcc -static -s "$TMP/st.c" -o "$TMP/$STATIC" ||
	fail "setup" "musl-gcc failed (make deps installs musl-tools)"
printf 'void _start(void) { for (;;) __asm__ volatile(""); }\n' >"$TMP/nolibc.c"
cc -static -nostdlib -O1 "$TMP/nolibc.c" -o "$TMP/$NOLIBC" || fail "setup" "cc -nostdlib failed"

# ELF files that are not whole: a truncated copy of libc, and random bytes
# after an ELF header's magic; and a stripped library without malloc.
head -c 4096 "$(ldd /bin/true | awk '/libc\.so/ { print $3 }')" >"$TMP/libc-truncated.so"
{ printf '\177ELF\002\001\001'; head -c 4000 /dev/urandom; } >"$TMP/garbage.so"
cp "$(ldconfig -p | awk '/libz\.so\.1 / { print $NF; exit }')" "$TMP/nomalloc.so"
strip --strip-all "$TMP/nomalloc.so"

# A file of the cgroup v2 hierarchy that is not a cgroup.
CG_FILE=$(awk '$3 == "cgroup2" { print $2 "/cgroup.procs"; exit }' /proc/mounts)

mkfifo "$TMP/fifo"
mkdir "$TMP/ro" "$TMP/small"

# --- checking one case ---------------------------------------------------------

# leftovers: processes of the tool under test (its copy has a name of its
# own) or of the commands it launched, zombies included.
leftovers() {
	ps -eo pid=,stat=,comm= | awk -v a="$COMM" -v s="$STATIC" -v n="$NOLIBC" \
		'$3 == a || $3 == s || $3 == n'
}

# expect_clean_exit NAME: what every case must leave as it was: no process
# that was not there before it (LEFT), no probe on the live target.
expect_clean_exit() {
	local left
	left=$(comm -13 <(sort <<<"$LEFT") <(leftovers | sort))
	if [[ -n "$left" ]]; then
		fail "$1" "left behind: $left"
		return 1
	fi
	if [[ -n "$(uprobe_links "$LIVE")" ]]; then
		fail "$1" "probes left on pid $LIVE"
		return 1
	fi
}

# one_line NAME CODE REGEX: the run NAME (its files are $TMP/$N.*) exited
# CODE with one line on stderr matching "^alloctrace: REGEX", besides the
# "tracing pid" line of a run that got that far, and the warning about
# single-stepped probes (glibc's reallocarray) of one that attached them.
one_line() {
	local name=$1 err
	err=$(unsaid "$TMP/$N.err")
	if ((RC != $2)); then
		fail "$name" "exit status $RC, want $2: $(head -c 300 <<<"$err")"
	elif (($(wc -l <<<"$err") != 1)); then
		fail "$name" "$(wc -l <<<"$err") lines on stderr: $(head -c 300 <<<"$err")"
	elif [[ ! "$err" =~ ^alloctrace:\ $3 ]]; then
		fail "$name" "stderr '$err' does not match /alloctrace: $3/"
	else
		return 0
	fi
	return 1
}

# expect_run CODE NAME REGEX COMMAND...: a case that runs the tool through
# COMMAND (a shell, unshare).
expect_run() {
	local code=$1 name="$LABEL$2" re=$3
	shift 3
	N=$((N + 1))
	LEFT=$(leftovers)
	RC=0
	timeout -k 5 30 "$@" >"$TMP/$N.out" 2>"$TMP/$N.err" || RC=$?
	one_line "$name" "$code" "$re" || return
	if [[ -s "$TMP/$N.out" ]]; then
		fail "$name" "stdout not empty: $(head -c 200 "$TMP/$N.out")"
	elif expect_clean_exit "$name"; then
		ok "$name"
	fi
}

# expect_error CODE NAME REGEX ARGS...: the tool with ARGS.
expect_error() {
	expect_run "$1" "$2" "$3" "$TOOL" "${@:4}"
}

# --- the table -----------------------------------------------------------------

NUMBERS=(--pid --interval --count --top --max-depth --tid --show-data --min-age
	--max-allocs --max-stacks --top-processes)
SIZES=(--big --sample --min-size --max-size --ringbuf-size)

# Every option that takes a number, with a value that is not one: a word,
# a negative number, one past any range, trailing garbage, a leading blank.
bad_numbers() {
	local opt v
	for opt in "${NUMBERS[@]}"; do
		for v in abc -5 99999999999999999999 5x ' 5'; do
			expect_error 2 "$opt '$v'" "invalid value '$v' for $opt: expected " \
				"$opt" "$v" -- "$WL/leaks"
		done
	done
	for opt in "${SIZES[@]}"; do
		for v in 12Q 4KX -1K 16777216T 4K4 ' 4K'; do
			expect_error 2 "$opt '$v'" "invalid value '$v' for $opt: expected " \
				"$opt" "$v" -- "$WL/leaks"
		done
	done
}

# Values that are numbers, out of their option's range.
out_of_range() {
	local v
	for v in "--pid 0" "--pid 4294967296" "--count 0" "--interval 0.001" \
		"--interval 86401" "--interval nan" "--min-age inf" "--max-depth 0" \
		"--max-depth 128" "--show-data 257" "--max-allocs 0" "--max-allocs 16777217" \
		"--max-stacks 0" "--ringbuf-size 3K" "--ringbuf-size 2K" "--ringbuf-size 2G" \
		"--big 0" "--sample 0" "--max-size 0"; do
		# shellcheck disable=SC2086 # option and value
		expect_error 2 "$v" "invalid value '${v#* }' for ${v% *}: expected " \
			$v -- "$WL/leaks"
	done
}

usage() {
	expect_error 2 "--format xml" "invalid value 'xml' for --format" --format xml -- "$WL/leaks"
	expect_error 2 "--thread-name bad regex" "invalid value '\(' for --thread-name: not a regular" \
		--thread-name '(' -- "$WL/leaks"
	expect_error 2 "--module regex that would eat memory" "invalid value for --module: " \
		--module "a$(printf '+%.0s' {1..40})" -- "$WL/leaks"
	expect_error 2 "--allocator ''" "invalid value '' for --allocator" --allocator '' -- "$WL/leaks"
	expect_error 2 "--min-size above --max-size" "--min-size is larger than --max-size" \
		--min-size 2K --max-size 1K -- "$WL/leaks"
	expect_error 2 "an option without its value" "option --max-allocs needs a value" --max-allocs
	expect_error 2 "an unknown option" "unknown option '--bogus'" --bogus -p 1
	expect_error 2 "both -p and a command" "give either -p PID or a command" -p 1 -- "$WL/leaks"
	expect_error 2 "nothing to trace" "nothing to trace"
	expect_error 2 "--unwind dwarf" "invalid value 'dwarf' for --unwind: expected " \
		--unwind dwarf -- "$WL/leaks"
	expect_error 2 "--big-only without --big" "--big-only needs --big SIZE" \
		--big-only -- "$WL/leaks"
	expect_error 2 "--big-only with --sample" "--big-only takes neither --sample nor --mmap" \
		--big 1M --big-only --sample 64K -- "$WL/leaks"
	expect_error 2 "--all with -p" "--all traces every process: give no -p PID" --all -p 1
	# Only what was given is named; --comm and --cgroup are not --all.
	expect_error 2 "--growth with --sample" \
		"--growth takes no --sample: it counts pages, not allocations" \
		--growth --sample 64K --comm leaks
	expect_error 2 "--growth with --all and --min-age" \
		"--growth takes no --all, --min-age: it counts pages, not allocations" \
		--growth --all --min-age 1
	expect_error 2 "--leak-check with --sample" \
		"--leak-check takes no --sample: a verdict needs every block of the processes it" \
		--leak-check --sample 64K --cgroup /sys/fs/cgroup
	expect_error 2 "a pid given twice" "invalid value '1,1' for --pid: pid 1 is given twice" \
		-p 1,1
	expect_error 2 "--cgroup with -p" "--cgroup and --comm choose the processes: give no " \
		--cgroup /sys/fs/cgroup -p 1
	expect_error 2 "--comm with --all" "--cgroup and --comm choose the processes: give no " \
		--comm leaks --all
	expect_error 2 "--comm of 16 characters" \
		"invalid value 'abcdefghijklmnop' for --comm: expected a program name of 1 to 15" \
		--comm abcdefghijklmnop
	expect_error 2 "--comm a path" "invalid value '/usr/bin/leaks' for --comm: expected " \
		--comm /usr/bin/leaks
}

exports() {
	expect_error 2 "--folded into a directory" "cannot create /tmp: Is a directory" \
		--folded /tmp -- "$WL/leaks"
	expect_error 2 "--pprof /proc/version" "cannot create /proc/version: it is a file of /proc" \
		--pprof /proc/version -- "$WL/leaks"
	expect_error 2 "--html in a directory that does not exist" \
		"cannot create /nonexistent/x.html: No such file or directory" \
		--html /nonexistent/x.html -- "$WL/leaks"
	expect_error 2 "--folded a FIFO" "cannot create $TMP/fifo: it is not a regular file" \
		--folded "$TMP/fifo" -- "$WL/leaks"
	expect_error 2 "--folded-count a device" "cannot create /dev/null: it is not a regular file" \
		--folded-count /dev/null -- "$WL/leaks"
	# A read-only file system, mounted in a mount namespace of the tool's own.
	expect_run 2 "--pprof on a read-only file system" \
		"cannot create $TMP/ro/x.pb.gz: Read-only file system" \
		unshare -m --propagation private sh -c 'mount -t tmpfs -o ro none "$1" && shift && exec "$@"' \
		sh "$TMP/ro" "$TOOL" --pprof "$TMP/ro/x.pb.gz" -- "$WL/leaks"
}

targets() {
	expect_error 3 "-p a pid that is gone" "no process with pid $GONE\$" -p "$GONE"
	expect_error 3 "-p a pid above any pid_max" "no process with pid 99999999\$" -p 99999999
	expect_error 3 "-p a kernel thread" "pid 2 \(kthreadd\) is a kernel thread" -p 2
	expect_error 3 "-p a zombie" "process $ZOMBIE \(sleep\) has exited and holds no memory \(zombie\)" \
		-p "$ZOMBIE"
	expect_run 3 "-p alloctrace itself" "pid [0-9]+ is alloctrace itself" \
		sh -c 'exec "$0" -p $$' "$TOOL"
	expect_error 3 "static stripped program: no allocator" \
		"no allocator \(malloc and free\) found in process [0-9]+ \($STATIC\)" \
		-- "$TMP/$STATIC"
	expect_error 3 "static program without libc: no allocator" \
		"no allocator \(malloc and free\) found in process [0-9]+ \($NOLIBC\)" \
		-- "$TMP/$NOLIBC"
	expect_error 3 "command not found by path" "cannot run '/nonexistent/cmd': command not found" \
		-- /nonexistent/cmd
	expect_error 3 "command not found in PATH" "cannot run 'alloctrace-no-such-command': command not found" \
		-- alloctrace-no-such-command
	expect_error 3 "an empty command" "cannot run '': command not found" -- ''
	expect_error 3 "command not executable" "cannot run '/etc/passwd': permission denied" \
		-- /etc/passwd
	expect_error 3 "command is a directory" "cannot run '/tmp': permission denied" -- /tmp
	expect_error 3 "--cgroup that does not exist" "--cgroup /nonexistent: No such file or directory\$" \
		--cgroup /nonexistent
	expect_error 3 "--cgroup not a cgroup" "--cgroup /tmp: not a cgroup v2 directory " \
		--cgroup /tmp
	expect_error 3 "--cgroup a file of a cgroup" \
		"--cgroup $CG_FILE: not a cgroup v2 directory " --cgroup "$CG_FILE"
	expect_error 3 "--allocator that does not exist" "--allocator /nonexistent.so: No such file" \
		--allocator /nonexistent.so -p "$LIVE"
	expect_error 3 "--allocator not ELF" "--allocator /etc/passwd: not a valid ELF object" \
		--allocator /etc/passwd -p "$LIVE"
	expect_error 3 "--allocator a truncated libc" \
		"--allocator $TMP/libc-truncated.so: not a valid ELF object \(truncated or corrupt\)" \
		--allocator "$TMP/libc-truncated.so" -p "$LIVE"
	expect_error 3 "--allocator garbage after ELF magic" \
		"--allocator $TMP/garbage.so: not a valid ELF object \(truncated or corrupt\)" \
		--allocator "$TMP/garbage.so" -- "$WL/leaks"
	expect_error 3 "--allocator a stripped library without malloc" \
		"--allocator $TMP/nomalloc.so: it defines no malloc and free" \
		--allocator "$TMP/nomalloc.so" -p "$LIVE"
}

# The export file cannot be written at the end (a 16 KiB file system, in a
# mount namespace of the tool's own, for an HTML page of hundreds): the
# trace ran and its report is out, the failure is told once, exit 1.
export_full() {
	local name="${LABEL}--html on a full file system"
	N=$((N + 1))
	LEFT=$(leftovers)
	RC=0
	timeout -k 5 60 unshare -m --propagation private \
		sh -c 'mount -t tmpfs -o size=16k none "$1" && shift && exec "$@"' \
		sh "$TMP/small" "$TOOL" --format json --html "$TMP/small/x.html" -- "$WL/leaks" \
		>"$TMP/$N.out" 2>"$TMP/$N.err" || RC=$?
	one_line "$name" 1 "cannot write $TMP/small/x.html: No space left on device" || return
	if [[ -z "$(final_report "$TMP/$N.out")" ]]; then
		fail "$name" "no final report"
	elif expect_clean_exit "$name"; then
		ok "$name"
	fi
}

# K: which bpf(2) call of a -p run makes its second probe link (the second
# BPF_LINK_CREATE that returns a link after the last program is loaded: a
# uprobe_multi link, or on kernels without them a perf-event one, before
# which libbpf probes perf links with a program of its own and a call that
# fails), found by a first run under strace; NR: the bpf syscall's number
# here. The run needs the live target: when it had exited (it lived 600 s,
# less than this script takes in QEMU without KVM) no link was made at all.
find_attach_call() {
	local log=$TMP/attach.strace
	ASAN_OPTIONS=detect_leaks=0 strace -n -o "$log" -e trace=bpf "$TOOL" -n 1 -i 0.01 \
		-p "$LIVE" >/dev/null 2>&1
	K=$(awk -v call='^\\[ *[0-9]+\\] bpf\\(' '
		NR == FNR { if ($0 ~ call) { n++; if (/BPF_PROG_LOAD/) last = n }; next }
		$0 ~ call { n2++ } n2 > last && /BPF_LINK_CREATE.* = [0-9]+$/ && ++k == 2 { print n2; exit }' \
		"$log" "$log")
	NR_BPF=$(grep -o -m1 '^\[ *[0-9]*\] bpf(' "$log" | tr -dc 0-9)
	[[ -n "$K" && -n "$NR_BPF" ]]
}

# in_attach_call PID: the process is in a bpf call BPF_LINK_CREATE (28).
in_attach_call() {
	[[ "$(cut -d' ' -f1-2 "/proc/$1/syscall" 2>/dev/null)" == "$NR_BPF 0x1c" ]]
}

# held_in_attach_call PID: still there half a second later, so held in the
# K-th one (3 s): the feature probe's link, made before the allocator is
# looked for, takes tens of milliseconds and could be caught instead.
held_in_attach_call() {
	in_attach_call "$1" && sleep 0.5 && in_attach_call "$1"
}

# A target in a mount namespace of its own, run from a tmpfs only that
# namespace sees (alloctrace reaches its files through /proc/PID/map_files),
# killed while alloctrace attaches: strace holds alloctrace 3 s in the call
# that makes its second link. Its objects go with it: the process exited,
# exit 3, and no probe stays.
vanishing() {
	local name="${LABEL}-p a target in another mount namespace, killed while attaching"
	local dir=$TMP/hidden$N ns target tracer tool
	find_attach_call || { fail "$name" "no BPF_LINK_CREATE under strace"; return; }
	mkdir -p "$dir/mnt" "$dir/state"
	unshare -m --propagation private --fork sh -c \
		'mount -t tmpfs none "$1/mnt" && cp "$2" "$1/mnt/" && exec "$1/mnt/target" "$1/state" 60' \
		sh "$dir" "$WL/target" 2>/dev/null &
	ns=$!
	track "$ns"
	wait_for 10 test -e "$dir/state/ready" || { fail "$name" "target not ready"; return; }
	target=$(pgrep -P "$ns")
	N=$((N + 1))
	LEFT=$(leftovers)
	# LeakSanitizer cannot work under ptrace (strace): no leak check here.
	ASAN_OPTIONS=detect_leaks=0 strace -o /dev/null -e trace=bpf \
		-e inject=bpf:delay_enter=3000000:when="$K" \
		"$TOOL" -p "$target" >"$TMP/$N.out" 2>"$TMP/$N.err" &
	tracer=$!
	wait_for 10 eval 'tool=$(pgrep -P "$tracer") && held_in_attach_call "$tool"' ||
		fail "$name" "not seen in its attach call (killed at some other point)"
	kill -KILL "$target"
	RC=0
	wait "$tracer" || RC=$?
	one_line "$name" 3 "process $target exited (while alloctrace attached|before alloctrace could attach)" ||
		return
	if [[ -n "$(uprobe_links "$target")" ]]; then
		fail "$name" "probes left on pid $target"
	elif expect_clean_exit "$name"; then
		ok "$name"
	fi
}

# table TOOL NAME LABEL: every case, with that build of the tool, copied
# under a name of its own (COMM) so that what it leaves behind can be told
# from other tests' processes.
table() {
	COMM=$2$$
	COMM=${COMM:0:15}
	TOOL=$TMP/$COMM
	LABEL=$3
	cp "$1" "$TOOL"
	bad_numbers
	out_of_range
	usage
	exports
	targets
	export_full
	vanishing
}

N=0
table "$TOOL" at ""
table "$ASAN_TOOL" atasan "asan: "

# The live target was -p'd, shown bad files and attached to once: it still
# allocates, and ends as asked.
kill -USR1 "$LIVE"
expect_true "live target: still works after every case" "no done file in 10 s" \
	wait_for 10 test -e "$TMP/live/done"
kill -USR1 "$LIVE"
RC=0
wait "$LIVE" || RC=$?
expect_eq "live target: exit status" 0 "$RC"

finish
