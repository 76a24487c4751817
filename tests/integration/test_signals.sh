#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# Signals, to the target and to the tool. A target stopped with SIGSTOP
# does not hold the tool up: periodic reports keep coming, a SIGINT still
# gets its final report at once, and after SIGCONT the target goes on and
# the numbers are exact, whether attached (-p) or launched. SIGHUP ends the
# tool like SIGINT; a reader that goes away (| head) ends it quietly, with
# status 0. Whatever ends it, no probe stays on the target, which goes on
# allocating and exits 0 when told to (tests/workloads/target.c).
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/target"

# state PID: its state letter (T: stopped, t: stopped by its tracer).
state() {
	awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null
}

stopped() {
	[[ "$(state "$1")" == [Tt] ]]
}

# reports NAME: how many reports the tool started as NAME has written.
reports() {
	count_lines "$TMP/$1.out" '.type == "report"'
}

# more_reports NAME N: at least N reports.
more_reports() {
	(($(reports "$1") >= $2))
}

# expect_reports_while_stopped NAME PID: 3 more reports come while PID is
# stopped (-i 0.2: 0.6 s; 10 s allowed).
expect_reports_while_stopped() {
	local before
	kill -STOP "$2"
	wait_for 5 stopped "$2" || { fail "$1: stopped" "state $(state "$2")"; return 1; }
	before=$(reports "$1")
	expect_true "$1: reports go on while the target is stopped" \
		"$(reports "$1") reports, $before when it stopped" \
		wait_for 10 more_reports "$1" $((before + 3))
	expect_true "$1: target still stopped" "state $(state "$2")" stopped "$2"
}

# trigger NAME PID: the target allocates (see target.c), and has.
trigger() {
	kill -USR1 "$2" && wait_for 10 test -e "$TMP/$1/done"
}

# expect_unharmed NAME PID: no probe left on the target; it allocates when
# told to and exits 0 on the next SIGUSR1.
expect_unharmed() {
	local rc=0
	expect_eq "$1: no probe left on the target" "" "$(uprobe_links "$2")"
	[[ -e "$TMP/$1/done" ]] || trigger "$1" "$2"
	expect_true "$1: the target still allocates" "no done file" test -e "$TMP/$1/done"
	kill -USR1 "$2"
	wait "$2" || rc=$?
	expect_eq "$1: the target exits 0" 0 "$rc"
}

# -p, the target stopped and continued while traced: exact numbers.
attached_stop() {
	trace_new_target pstop 60 --format json -T 0 -i 0.2 || return
	expect_true "pstop: probes on the target while tracing" "none in any process's fdinfo" \
		test -n "$(uprobe_links "$TARGET")"
	expect_reports_while_stopped pstop "$TARGET" || return
	kill -USR1 "$TARGET"
	kill -CONT "$TARGET"
	wait_for 10 test -e "$TMP/pstop/done" || { fail "pstop: target" "not done after SIGCONT"; return; }
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok pstop || return
	expect_totals_lost pstop "$(final_report "$TMP/pstop.out")" 9000 9 14 5 12 0
	expect_unharmed pstop "$TARGET"
}

# -p, SIGINT while the target is stopped: the final report at once, and the
# target, still stopped, goes on when continued.
attached_interrupt() {
	local start
	trace_new_target pint 60 --format json -i 0.2 || return
	kill -STOP "$TARGET"
	wait_for 5 stopped "$TARGET" || { fail "pint: stopped" "state $(state "$TARGET")"; return; }
	start=$SECONDS
	kill -INT "$TOOL_PID"
	wait_tool
	expect_true "pint: ends within 5 s" "took $((SECONDS - start)) s" test $((SECONDS - start)) -le 5
	expect_tool_ok pint
	expect_true "pint: target still stopped" "state $(state "$TARGET")" stopped "$TARGET"
	kill -CONT "$TARGET"
	expect_unharmed pint "$TARGET"
}

# Launched: a SIGSTOP to the command is job control, passed on; reports go
# on, and after SIGCONT the whole run is exact, the command's exit included.
launched_stop() {
	mkdir -p "$TMP/lstop"
	start_tool lstop 60 --format json -T 0 -i 0.2 -- "$WL/target" "$TMP/lstop" 60
	wait_tracing lstop 30 || { fail "lstop: tracing" "no 'tracing pid' line in 30 s"; return; }
	TARGET=$TRACED
	wait_for 10 test -e "$TMP/lstop/ready" || { fail "lstop: target" "not ready"; return; }
	expect_reports_while_stopped lstop "$TARGET" || return
	kill -USR1 "$TARGET"
	kill -CONT "$TARGET"
	wait_for 10 test -e "$TMP/lstop/done" || { fail "lstop: target" "not done after SIGCONT"; return; }
	kill -USR1 "$TARGET"
	wait_tool
	expect_tool_ok lstop || return
	local r
	r=$(final_report "$TMP/lstop.out")
	expect_totals lstop "$r" 9000 9 26 17
	expect_eq "lstop: exit" '{"status":0,"signal":null}' "$(report_get "$r" '.exit | {status, signal}')"
}

# SIGHUP (the terminal went away): the final report, status 0, and the
# target left alone.
hangup() {
	trace_new_target hup 60 --format json -T 0 || return
	trigger hup "$TARGET" || { fail "hup: target" "not done"; return; }
	kill -HUP "$TOOL_PID"
	wait_tool
	expect_tool_ok hup || return
	expect_leak "$(final_report "$TMP/hup.out")" target_leak 9000 9 9
	expect_unharmed hup "$TARGET"
}

# | head -n 1: the reader leaves after the first report; the next write
# fails with EPIPE and the tool stops, quietly, with status 0.
broken_pipe() {
	local first rc
	start_target pipe || { fail "pipe: target" "not ready in 10 s"; return; }
	first=$(timeout -k 5 20 "$TOOL" --format json -i 0.2 -p "$TARGET" 2>"$TMP/pipe.err" | head -n 1)
	rc=${PIPESTATUS[0]}
	expect_eq "pipe: exit status" 0 "$rc"
	expect_eq "pipe: head got a report" report "$(jq -r .type <<<"$first")"
	expect_eq "pipe: nothing said but the tracing line" "" "$(unsaid "$TMP/pipe.err")"
	expect_unharmed pipe "$TARGET"
}

cases attached_stop attached_interrupt launched_stop hangup broken_pipe
finish
