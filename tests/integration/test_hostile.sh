#!/bin/bash
# A traced process chooses what its sections name and what lies at its
# paths; alloctrace, as root, must neither hang on it, nor read forever,
# nor inflate without bound (issue 22, "The symbolizer trusts nothing the
# target controls"). Each case is a copy of tests/workloads/target.c made
# hostile, attached with -p: a report within a deadline with the target's
# exact totals (test_attach.sh's: 9000 bytes in 9 blocks, 14 allocations,
# 5 frees, 12 untracked), and, for the xz bomb, alloctrace's peak RSS
# (VmHWM) bounded.
#   fifo     .gnu_debuglink names a FIFO beside the binary
#   devzero  .gnu_debuglink is ../../../../../../../dev/zero, no build id
#   xzbomb   .gnu_debugdata inflates to 512 MiB of zeros
#   swapped  least privilege (nobody with CAP_BPF, CAP_PERFMON and
#            CAP_SYS_PTRACE: no map_files), a root target in a mount
#            namespace that maps its own copy of libc, then covers its
#            library directory with one where libc.so.6 is an absolute
#            symlink, to the host's libc seen from our root: nothing is
#            probed there, the object is named once, one error line
#            (before 6.10, without uprobe_multi, the refusal of
#            test_privileges.sh: exit 4)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/target"
for cmd in objcopy xz mkfifo python3; do
	command -v "$cmd" >/dev/null || { fail "prerequisites" "$cmd is missing (make deps)"; finish; }
done

# debuglink FILE NAME: into FILE, a .gnu_debuglink section naming NAME
# (any bytes, which objcopy --add-gnu-debuglink would cut to a base name),
# CRC 0.
debuglink() {
	python3 -c 'import sys; n = sys.argv[2].encode() + b"\0"
open(sys.argv[1], "wb").write(n + b"\0" * (-len(n) % 4) + b"\0\0\0\0")' "$1" "$2"
}

# hostile_target NAME OBJCOPY_ARGS...: the target copied to $TMP/NAME,
# stripped of .symtab and DWARF (so that symbols are looked for elsewhere)
# and with objcopy's changes, running and ready; TARGET is its pid.
hostile_target() {
	local name=$1 dir=$TMP/$1
	shift
	mkdir -p "$dir"
	objcopy --strip-all "$@" "$WL/target" "$dir/target"
	"$dir/target" "$dir" 60 &
	TARGET=$!
	track "$TARGET"
	wait_for 10 test -e "$dir/ready"
}

# peak_rss PID: poll the tool's VmHWM (kB) until it exits; the last seen.
peak_rss() {
	local pid=$1 hwm=0 v
	while v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [[ -n $v ]]; do
		hwm=$v
		sleep 0.05
	done
	echo "$hwm"
}

# attack NAME SECONDS: attach to the hostile target NAME, make it leak,
# stop the tool with SIGINT; the report must come within SECONDS.
attack() {
	local name=$1 secs=$2 tool r
	start_tool "$name" "$secs" --format json -T 0 -p "$TARGET"
	wait_tracing "$name" 30 || { fail "$name: tracing" "no 'tracing pid' line in 30 s"; return 1; }
	tool=$(loader_pid)
	if ! { kill -USR1 "$TARGET" && wait_for 10 test -e "$TMP/$name/done"; }; then
		fail "$name: target" "no done file 10 s after SIGUSR1"
		return 1
	fi
	kill -INT "$TOOL_PID"
	HWM=$(peak_rss "$tool")
	wait_tool
	expect_eq "$name: a report within ${secs} s, status 0 (124: killed at the deadline)" 0 "$RC"
	r=$(final_report "$TMP/$name.out")
	expect_eq "$name: totals" \
		'{"outstanding_bytes":9000,"outstanding_allocs":9,"allocs":14,"frees":5,"untracked_frees":12}' \
		"$(report_get "$r" '.totals | {outstanding_bytes, outstanding_allocs, allocs, frees, untracked_frees}')"
	expect_true "$name: target alive" "it died" alive "$TARGET"
}

mkfifo_link() {
	debuglink "$TMP/fifo.link" target.debuginfo
	hostile_target fifo --add-section .gnu_debuglink="$TMP/fifo.link" || return
	mkfifo "$TMP/fifo/target.debuginfo"
	attack fifo 30
}

devzero_link() {
	debuglink "$TMP/devzero.link" ../../../../../../../dev/zero
	# Without a build id the link's CRC is what a debug file is checked by.
	hostile_target devzero --remove-section .note.gnu.build-id \
		--add-section .gnu_debuglink="$TMP/devzero.link" || return
	attack devzero 30
}

xz_bomb() {
	head -c 512M /dev/zero | xz -1 -T1 >"$TMP/bomb.xz"
	hostile_target xzbomb --add-section .gnu_debugdata="$TMP/bomb.xz" || return
	attack xzbomb 60
	# 64 MiB is the bound on what .gnu_debugdata may inflate to; the
	# tool's own need is ~20 MB.
	expect_true "xzbomb: peak RSS ${HWM} kB under 160 MB" "it inflated the bomb" \
		test "$HWM" -lt 160000
	expect_eq "xzbomb: one warning naming the object" 1 \
		"$(grep -c "$TMP/xzbomb/target: .gnu_debugdata" "$TMP/xzbomb.err")"
}

swapped_lib() {
	local lib priv ctr libs ldso
	lib=/usr/lib/$(by_arch x86_64 aarch64)-linux-gnu
	ldso=$(by_arch ld-linux-x86-64.so.2 ld-linux-aarch64.so.1)
	priv=$(mktemp -d /tmp/alloctrace-hostile.XXXXXX)
	chmod 755 "$priv"
	ctr=$priv/ctr
	mkdir -p "$ctr/copy" "$ctr/over" "$ctr/state"
	# The target is nobody's too: without root, alloctrace traces only
	# what its caller could ptrace without capabilities.
	chmod 777 "$ctr/state"
	cp "$WL/target" "$ctr/target"
	# The copied directory also serves mount(8), which covers it, and
	# setpriv(1), which starts the target as nobody under it.
	mapfile -t libs < <(ldd "$(command -v mount)" "$(command -v setpriv)" |
		awk '$2 == "=>" { print $3 }' | sort -u)
	cp "$lib/libc.so.6" "$lib/$ldso" "${libs[@]}" "$ctr/copy/"
	ln -s "$lib/libc.so.6" "$ctr/over/libc.so.6"
	ln -s "$lib/$ldso" "$ctr/over/$ldso"
	cp "$TOOL" "$priv/alloctrace"
	# shellcheck disable=SC2016 # the inner shell's arguments
	unshare -m --propagation private sh -c '
		mount --bind "$1/copy" "$2" &&
			setpriv --reuid=65534 --regid=65534 --clear-groups "$1/target" "$1/state" 60 &
		while [ ! -e "$1/state/ready" ]; do sleep 0.05; done
		mount --bind "$1/over" "$2" && : >"$1/state/swapped"
		wait' sh "$ctr" "$lib" &
	track $!
	wait_for 10 test -e "$ctr/state/swapped" ||
		{ fail "swapped: target" "not ready and covered in 10 s"; return; }
	TARGET=$(pgrep -f "^$ctr/target ")
	expect_true "swapped: the target maps its copy of libc, not the host's" "it maps the host's" \
		test "$(stat -c %i "$ctr/copy/libc.so.6")" = \
		"$(awk -v p="$lib/libc.so.6" '$6 == p { print $5; exit }' "/proc/$TARGET/maps")"
	RC=0
	timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all,+bpf,+perfmon,+sys_ptrace --ambient-caps=-all,+bpf,+perfmon,+sys_ptrace \
		--bounding-set=-all,+bpf,+perfmon,+sys_ptrace \
		"$priv/alloctrace" --format json -T 0 -i 2 -n 1 -p "$TARGET" \
		>"$TMP/swapped.out" 2>"$TMP/swapped.err" || RC=$?
	if has_uprobe_multi; then
		expect_eq "swapped: refused, status" 3 "$RC"
		expect_eq "swapped: libc named once" 1 \
			"$(grep -c "^alloctrace: warning: pid $TARGET: $lib/libc.so.6: its path no longer leads to the file mapped" \
				"$TMP/swapped.err")"
		expect_eq "swapped: one error line" \
			"alloctrace: pid $TARGET: no allocator object could be opened safely (see the warnings above)" \
			"$(grep -v "^alloctrace: warning: " "$TMP/swapped.err")"
		expect_eq "swapped: no report" 0 "$(count_lines "$TMP/swapped.out" '.type == "report"')"
	else
		expect_eq "swapped, no uprobe_multi here: exit status" 4 "$RC"
		expect_match "swapped, no uprobe_multi here: says CAP_SYS_ADMIN is needed" \
			"need CAP_SYS_ADMIN" "$(cat "$TMP/swapped.err")"
	fi
	expect_eq "swapped: no probe left" "" "$(uprobe_links "$TARGET")"
	kill "$TARGET"
	rm -rf "$priv"
}

mkfifo_link
devzero_link
xz_bomb
swapped_lib
finish
