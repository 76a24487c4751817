#!/bin/bash
# Every thread's registers as roots, at a launched command's exit and in
# the checks while it runs: tests/workloads/threadexit.c returns from main
# while one thread spins in user code and another blocks in read(2), each
# with its block's only pointer in a callee-saved register. exit_group
# kills both as main's thread exits; alloctrace traces each thread and
# reads its registers at its own exit stop, so both blocks are reachable,
# as valgrind's check at exit finds them (before, alloctrace called them
# definitely lost), and leak_control's block definitely lost. The same in
# periodic checks (-i 1), where each thread is held, and in a child under
# --follow-forks; the command exits 0 and leaves no thread behind.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
source "$(dirname "$0")/../lib.sh"
require_built "$WL/threadexit"

EXPECTED="block_register reachable 80 1
leak_control definitely lost 40 1
spin_register reachable 96 1"
FNS='spin_register|block_register|leak_control'

# "FUNCTION CLASS BYTES BLOCKS" of the workload's own blocks, over the stacks JQ yields.
report_classes() {
	leak_classes "$1" "$2"' | select(.frames[0].function // "" | test("^('"$FNS"')$")) |
		[.frames[0].function, .]'
}

at_exit() {
	local r
	run_tool exit 60 --leak-check -T 0 --format json -o "$TMP/exit.json" -- "$WL/threadexit"
	r=$(final_report "$TMP/exit.json")
	expect_eq "at exit: exit status" 0 "$RC"
	expect_eq "at exit: the command exited 0" 0 "$(report_get "$r" .exit.status)"
	expect_eq "at exit: no warning" "" "$(unsaid "$TMP/exit.err")"
	expect_eq "at exit: classes per function" "$EXPECTED" "$(report_classes "$r" '.stacks[]')"
	expect_eq "at exit: the registers of 3 threads were roots" 3 \
		"$(report_get "$r" .leak_check.threads)"
	expect_eq "at exit: said to rest on each thread's registers at its exit" true \
		"$(report_get "$r" '.leak_check.assumptions | index("registers_at_each_thread_exit") != null')"

	valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
		--run-cxx-freeres=no --log-file="$TMP/vg.log" "$WL/threadexit" >/dev/null
	expect_eq "at exit: valgrind's classes per function" \
		"$(valgrind_leak_classes "$TMP/vg.log" "$FNS")" "$(report_classes "$r" '.stacks[]')"
}

text() {
	run_tool text 60 --leak-check -T 0 -- "$WL/threadexit"
	expect_eq "text: exit status" 0 "$RC"
	expect_eq "text: the threads whose registers were roots" \
		"registers of 3 threads, read at each thread's exit, were roots" \
		"$(grep -o 'registers of .* were roots' "$TMP/text.out" | tail -n 1)"
}

two_checked() {
	test "$(count_lines "$TMP/live.json" '.type == "report" and .leak_check')" -ge 2
}

# Periodic checks hold every thread (each is traced): the same verdicts,
# no error, while the threads run; then the same at exit.
periodic() {
	local r n
	mkfifo "$TMP/in"
	sleep 120 >"$TMP/in" &
	track $!
	HOLD=$!
	# Not start_tool: a background job's stdin would be /dev/null.
	timeout --foreground -k 30 90 "$TOOL" --leak-check -i 1 -T 0 --format json \
		-o "$TMP/live.json" -- "$WL/threadexit" wait <"$TMP/in" >"$TMP/live.out" \
		2>"$TMP/live.err" &
	TOOL_PID=$!
	TOOL_PIDS+=("$TOOL_PID")
	wait_for 60 two_checked || fail "periodic: reports" "no 2 reports with a leak check in 60 s"
	kill "$HOLD" 2>/dev/null
	wait_tool
	expect_eq "periodic: exit status" 0 "$RC"
	# A report's check the exit stop came before (the command saw its input
	# close as it was interrupted) has no verdicts: the final one has them.
	# Only the last report before the end may be that one.
	n=$(count_lines "$TMP/live.json" '.type == "report" and .final != true and .leak_check.error == null and .leak_check.threads == 3')
	m=$(jq -s '[.[] | select(.type == "report" and .final != true)] |
		length - (if length > 0 and .[-1].leak_check == null then 1 else 0 end)' "$TMP/live.json")
	expect_true "periodic: every report before the end checked 3 threads ($n of $m)" "$n" \
		test "$n" -eq "$m" -a "$n" -ge 1
	r=$(jq -c 'select(.type == "report" and .final != true)' "$TMP/live.json" | head -n 1)
	expect_eq "periodic: classes per function while the threads run" "$EXPECTED" \
		"$(report_classes "$r" '.stacks[]')"
	r=$(final_report "$TMP/live.json")
	expect_eq "periodic: classes per function at exit" "$EXPECTED" \
		"$(report_classes "$r" '.stacks[]')"
	expect_eq "periodic: the command exited 0" 0 "$(report_get "$r" .exit.status)"
	expect_eq "periodic: no thread of it left" "" "$(pgrep -f "$WL/threadexit")"
}

# A child under --follow-forks: its threads are traced and its own exit
# check reads them the same way.
child() {
	local r
	run_tool child 60 --follow-forks --leak-check -T 0 --format json -o "$TMP/child.json" \
		-- /bin/sh -c "$WL/threadexit; exit 0"
	expect_eq "--follow-forks: exit status" 0 "$RC"
	# threadexit from the last report that has it: the 6.1 guest's runs
	# wrote a periodic one between its end and the final one (CI's arm64
	# run, and a rehearsal's x86-64 one).
	r=$(ended_proc "$TMP/child.json" '.comm == "threadexit"')
	# On one line each: the test runner shows a failure's first line only.
	expect_eq "--follow-forks: the child's classes per function" "${EXPECTED//$'\n'/; }" \
		"$(report_classes "$r" '.stacks[]' | paste -sd ';' | sed 's/;/; /g')"
	expect_eq "--follow-forks: the child's 3 threads' registers were roots" 3 \
		"$(report_get "$r" .leak_check.threads)"
}

cases at_exit text periodic child
plan
finish
