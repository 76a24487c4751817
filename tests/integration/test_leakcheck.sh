#!/bin/bash
# The leak-check engine (user/leakcheck/) on a real process: the classes of
# tests/workloads/leakclasses.c's blocks, per function, exactly as known
# and as valgrind memcheck finds them at the same waiting point; the
# target left running, unharmed and without a zombie; an already-traced
# target refused. Driven by build/tests/leakscan, without the BPF side.
set -u
source "$(dirname "$0")/../lib.sh"
SCAN=$ROOT/build/tests/leakscan

EXPECTED="hold_register reachable 72 1
hold_thread_stack reachable 88 1
hold_tls reachable 56 1
hold_untracked reachable 24 1
keep_reachable reachable 300 3
leak_cycle definitely lost 40 1
leak_cycle indirectly lost 80 2
leak_definite definitely lost 128 2
leak_interior possibly lost 200 1
leak_list definitely lost 48 1
leak_list indirectly lost 144 3
stale_fastbin definitely lost 136 1
stale_tcache definitely lost 120 1"

classes() {
	grep -E ' (reachable|lost) [0-9]+ [0-9]+$' "$1" | sort
}

# scan NAME ARGS...: leakscan's output in $TMP/NAME.out, its status in RC.
scan() {
	local name=$1
	shift
	RC=0
	timeout -k 5 60 "$SCAN" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
}

scan fork "$WL/leakclasses"
expect_eq "snapshot scan: exits 0, target exits cleanly" 0 "$RC"
expect_eq "snapshot scan: classes per function" "$EXPECTED" "$(classes "$TMP/fork.out")"
expect_eq "snapshot scan: three threads stopped" "threads 3" "$(grep '^threads' "$TMP/fork.out")"
# Only untracked in-use chunks as roots: the glibc heap was walked whole.
expect_eq "snapshot scan: verdicts rest only on untracked chunks as roots" \
	"assumptions 0x1" "$(grep '^assumptions' "$TMP/fork.out")"
expect_eq "snapshot scan: no warning" "" "$(cat "$TMP/fork.err")"
pause=$(sed -n 's/^pause_us \([0-9]*\).*/\1/p' "$TMP/fork.out")
expect_true "snapshot scan: pause under 50 ms (${pause:-?} us)" "pause ${pause:-?} us" \
	test "${pause:-999999}" -lt 50000

scan stopped --no-fork "$WL/leakclasses"
expect_eq "stopped scan: exits 0" 0 "$RC"
expect_eq "stopped scan: the same classes" "$EXPECTED" "$(classes "$TMP/stopped.out")"
expect_eq "stopped scan: says the target stayed stopped" "assumptions 0x11" \
	"$(grep '^assumptions' "$TMP/stopped.out")"

scan traced strace -f -o /dev/null "$WL/leakclasses"
expect_eq "traced target: refused" 1 "$RC"
expect_match "traced target: one clear line" "process [0-9]+ is already traced by process [0-9]+" \
	"$(head -n 1 "$TMP/traced.err")"

# valgrind memcheck's leak search at the same waiting point, through vgdb.
mkfifo "$TMP/in"
sleep 120 >"$TMP/in" &
track $!
HOLD=$!
valgrind --vgdb=yes --log-file="$TMP/vg.log" "$WL/leakclasses" <"$TMP/in" >"$TMP/vg.out" &
track $!
for _ in $(seq 600); do
	grep -q '^ready$' "$TMP/vg.out" 2>/dev/null && break
	sleep 0.1
done
VPID=$(sed -n 's/^pid //p' "$TMP/vg.out")
timeout 60 vgdb --pid="${VPID:-0}" leak_check full kinds all >"$TMP/vgdb.out" 2>&1
kill "$HOLD" 2>/dev/null

# Loss records of blocks malloc'd by tracked(), per function calling it,
# in leakscan's form; the direct bytes of a record that has indirect ones too.
valgrind_classes() {
	sed -e 's/^==[0-9]*== //' -e 's/ (+[0-9]*)//g' "$1" | awk '
	/ blocks are .* in loss record / {
		bytes = $1
		if ($2 ~ /^\(/) { bytes = substr($2, 2) }
		kind = $0; sub(/.* blocks are /, "", kind); sub(/ in loss record.*/, "", kind)
		sub(/^still /, "", kind)
		blocks = $0; sub(/ blocks are .*/, "", blocks); sub(/.* in /, "", blocks)
		first = 1; want = 0; next
	}
	first && /^ *by 0x/ { want = $3 == "tracked"; first = 0; next }
	want && /^ *by 0x/ {
		fn = $3; if (fn == "alloc_for_register") fn = "hold_register"
		key = fn " " kind; b[key] += bytes; n[key] += blocks; want = 0
	}
	END { for (k in b) print k, b[k], n[k] }' | sort
}
expect_eq "valgrind memcheck: the same classes per function" "$EXPECTED" \
	"$(valgrind_classes "$TMP/vgdb.out")"
finish
