#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by errors_lib.sh's table
# Bad input that reaches the kernel, a table of cases (tests/errors_lib.sh
# says what each must do, with the loader and its ASan build): targets that
# are gone, zombies, kernel threads or alloctrace itself; commands launched
# that cannot run or have no allocator; allocator files that are not whole;
# cgroups; an export file on a read-only file system, and one that fails
# at the end of a trace (both mount one); a target killed while alloctrace
# attaches. The command line's and the other export files' cases, refused
# before anything is traced, are test_errors_cli.sh's (no root).
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../errors_lib.sh
. "$(dirname "$0")/../errors_lib.sh"

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
# It and the live target (errors_lib.sh) live until cleanup kills them: in QEMU
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

# The programs the cases launch, for leftovers.
# shellcheck disable=SC2034 # read by errors_lib.sh's leftovers
LAUNCHED="$STATIC $NOLIBC"
mkdir "$TMP/small" "$TMP/ro"

# --- the table -----------------------------------------------------------------

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

# The export file cannot be created: a read-only file system, mounted in a
# mount namespace of the tool's own.
export_readonly() {
	expect_run 2 "--pprof on a read-only file system" \
		"cannot create $TMP/ro/x.pb.gz: Read-only file system" \
		unshare -m --propagation private sh -c 'mount -t tmpfs -o ro none "$1" && shift && exec "$@"' \
		sh "$TMP/ro" "$TOOL" --pprof "$TMP/ro/x.pb.gz" -- "$WL/leaks"
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
# K-th one (10 s): the feature probe's link, made before the allocator is
# looked for, takes tens of milliseconds and could be caught instead.
held_in_attach_call() {
	in_attach_call "$1" && sleep 0.5 && in_attach_call "$1"
}

# A target in a mount namespace of its own, run from a tmpfs only that
# namespace sees (alloctrace reaches its files through /proc/PID/map_files),
# killed while alloctrace attaches: strace holds alloctrace 10 s in the call
# that makes its second link (3 s, and a 10 s bound to get there, were too
# little for the ASan build under TCG beside a second guest). Its objects go with it: the process exited,
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
		-e inject=bpf:delay_enter=10000000:when="$K" \
		"$TOOL" -p "$target" >"$TMP/$N.out" 2>"$TMP/$N.err" &
	tracer=$!
	wait_for 60 eval 'tool=$(pgrep -P "$tracer") && held_in_attach_call "$tool"' ||
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

error_tables targets export_readonly export_full vanishing
live_target_end

finish
