#!/bin/bash
# At a launched command's exit, a thread's stack is a root only from
# where it entered exit(): tests/workloads/deadframe.c leaves a block's
# only pointer in a frame that returned, in stack that exit()'s own
# frames passed over without writing, above the stack pointer of the
# exit stop; main then returns (return) or a function below it calls
# exit() (exit). valgrind calls that block definitely lost in both forms
# (before, alloctrace called it reachable in both); its controls as
# valgrind has them: the global's block reachable, main's local's
# reachable only while main runs, and the block exit()'s caller holds in
# a callee-saved register, which only exit()'s frames saved, reachable.
# The control of the case itself: gdb, at the exit_group call, finds the
# pointer above the stack pointer and below where alloctrace (-v) says
# exit() was entered. LSan (clang 14) is no referee here: it scans the
# stack from its own frame inside exit()'s atexit handler and calls the
# block reachable in both forms.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
source "$(dirname "$0")/../lib.sh"
require_built "$WL/deadframe"

FNS='leave_in_frame|main|exit_holding'

# "FUNCTION CLASS BYTES BLOCKS" of a report's stacks, by the function that called malloc.
report_classes() {
	leak_classes "$1" '.stacks[] | [.frames[0].function, .]'
}

# The offsets above the stack pointer of the exit_group call of
# "deadframe $1" where a word holds the block it says is lost, by gdb.
stale_offsets() {
	gdb -q -batch -nx -ex 'set pagination off' -ex 'catch syscall exit_group' \
		-ex "run $1 >$TMP/gdb.$1.out" -ex 'python
import gdb
sp = int(gdb.parse_and_eval("$sp"))
blk = int(open("'"$TMP/gdb.$1.out"'").read().split("lost ")[1].split()[0], 16)
mem = bytes(gdb.selected_inferior().read_memory(sp, 512))
print("offsets", *[i for i in range(0, 512, 8) if int.from_bytes(mem[i:i + 8], "little") == blk])
' "$WL/deadframe" 2>/dev/null | sed -n 's/^offsets *//p'
}

# form EXPECTED: the verdicts of "deadframe $FORM" at its exit, as valgrind's.
form() {
	local form=$1 want=$2 r entry offsets below=0 off
	run_tool "$form" 60 -v --leak-check -T 0 --format json -o "$TMP/$form.json" -- \
		"$WL/deadframe" "$form"
	r=$(final_report "$TMP/$form.json")
	expect_eq "$form: exit status" 0 "$RC"
	expect_eq "$form: the command exited 0" 0 "$(report_get "$r" .exit.status)"
	expect_eq "$form: classes per function" "$want" "$(report_classes "$r")"
	expect_eq "$form: assumptions as ever" '["untracked_blocks_as_roots","target_stopped_for_scan"]' \
		"$(report_get "$r" .leak_check.assumptions)"

	entry=$(sed -n 's/.* thread 0 entered exit() \(0x[0-9a-f]*\) bytes above its stack pointer.*/\1/p' \
		"$TMP/$form.err")
	expect_match "$form: exit()'s entry found above the stack pointer" '^0x[0-9a-f]+$' "$entry"
	offsets=$(stale_offsets "$form")
	for off in $offsets; do
		((off < ${entry:-0})) && below=$((below + 1))
	done
	expect_true "control: $form: the lost block's pointer left between the stack pointer and exit()'s entry" \
		"words at offsets '$offsets' above the stack pointer, exit() entered at ${entry:-?}" \
		test "$below" -gt 0

	valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
		--run-cxx-freeres=no --log-file="$TMP/vg.$form.log" "$WL/deadframe" "$form" >/dev/null
	expect_eq "$form: valgrind's classes per function" \
		"$(valgrind_leak_classes "$TMP/vg.$form.log" "$FNS")" "$(report_classes "$r")"
}

implicit() {
	form return "leave_in_frame definitely lost 48 1
main definitely lost 24 1
main reachable 32 1"
}

explicit() {
	form exit "exit_holding reachable 40 1
leave_in_frame definitely lost 48 1
main reachable 56 2"
}

cases implicit explicit
plan
finish
