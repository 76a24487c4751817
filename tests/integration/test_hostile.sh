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
	kill -USR1 "$TARGET" && wait_for 10 test -e "$TMP/$name/done" ||
		{ fail "$name: target" "no done file 10 s after SIGUSR1"; return 1; }
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

mkfifo_link
devzero_link
xz_bomb
finish
