#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# -p mode on tests/workloads/target.c: only what happens after attaching
# is counted (14 allocs, 5 frees, 9000 bytes in 9 blocks), and frees of
# blocks allocated before it are untracked_frees (12). The tracer leaves
# the target alive when it stops (SIGINT, SIGTERM, -n), and ends by itself
# when the target exits.
# The same target launched with -- CMD sees its startup blocks too.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/target"

# trigger NAME: make the target allocate, and wait until it has.
trigger() {
	kill -USR1 "$TARGET" && wait_for 10 test -e "$TMP/$1/done"
}

# Attach, trigger, then stop the tracer with SIGINT.
attach_and_interrupt() {
	trace_new_target attach 60 --format json -T 0 || return
	expect_eq "attach: tracing pid" "$TARGET" "$TRACED"
	trigger attach || { fail "attach: target" "no done file 10 s after SIGUSR1"; return; }
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok attach || return
	local r
	r=$(final_report "$TMP/attach.out")
	expect_leak "$r" target_leak 9000 9 9
	expect_no_stack "$r" target_churn
	expect_no_stack "$r" pre_attach_alloc
	expect_eq "attach: totals" \
		'{"outstanding_bytes":9000,"outstanding_allocs":9,"allocs":14,"frees":5,"untracked_frees":12,"lost":0}' \
		"$(report_get "$r" '.totals | {outstanding_bytes, outstanding_allocs, allocs, frees, untracked_frees, lost}')"
	expect_totals_consistent attach "$r"
	expect_eq "attach: pid" "$TARGET" "$(report_get "$r" .pid)"
	expect_eq "attach: comm" '"target"' "$(report_get "$r" .comm)"
	expect_eq "attach: no exit while the target lives" null "$(report_get "$r" .exit)"
	expect_true "attach: target still alive after SIGINT" "tracer killed it" alive "$TARGET"
}

# Attach, trigger, then let the target exit: the tracer must follow.
attach_until_exit() {
	trace_new_target exit 30 --format json -T 0 || return
	trigger exit || { fail "attach-exit: target" "no done file 10 s after SIGUSR1"; return; }
	kill -USR1 "$TARGET"
	wait_tool
	expect_tool_ok exit || return
	local r
	r=$(final_report "$TMP/exit.out")
	expect_leak "$r" target_leak 9000 9 9
	expect_eq "attach-exit: untracked_frees" 12 "$(report_get "$r" .totals.untracked_frees)"
}

# SIGTERM ends the tracer like SIGINT: a final report, status 0.
attach_and_terminate() {
	trace_new_target term 60 --format json || return
	trigger term || { fail "attach-term: target" "no done file 10 s after SIGUSR1"; return; }
	kill -TERM "$TOOL_PID"
	wait_tool
	expect_tool_ok term || return
	expect_leak "$(final_report "$TMP/term.out")" target_leak 9000 9 9
}

# -i/-n while attached: two reports, the tracer leaves, the target stays.
attach_periodic() {
	start_target periodic || { fail "attach-periodic: target" "not ready in 10 s"; return; }
	start_tool periodic 30 --format json -i 1 -n 2 -p "$TARGET"
	wait_tool
	expect_eq "attach-periodic: exit status" 0 "$RC"
	expect_eq "attach-periodic: finals" "false true" \
		"$(jq -r 'select(.type == "report") | .final' "$TMP/periodic.out" | xargs)"
	expect_true "attach-periodic: target still alive" "tracer killed it" alive "$TARGET"
}

# The same target launched: its startup blocks are tracked and freed.
launch_target() {
	mkdir -p "$TMP/launch"
	start_tool launch 30 --format json -T 0 -- "$WL/target" "$TMP/launch" 25
	wait_tracing launch 20 || { fail "launch: tracing" "no 'tracing pid' line in 20 s"; return; }
	TARGET=$TRACED
	wait_for 10 test -e "$TMP/launch/ready" || { fail "launch: target" "not ready"; return; }
	trigger launch || { fail "launch: target" "no done file 10 s after SIGUSR1"; return; }
	kill -USR1 "$TARGET"
	wait_tool
	expect_tool_ok launch || return
	local r
	r=$(final_report "$TMP/launch.out")
	expect_leak "$r" target_leak 9000 9 9
	expect_no_stack "$r" pre_attach_alloc
	expect_eq "launch: untracked_frees" 0 "$(report_get "$r" .totals.untracked_frees)"
	expect_eq "launch: exit" '{"status":0,"signal":null}' \
		"$(report_get "$r" '.exit | {status, signal}')"
}

cases attach_and_interrupt attach_until_exit attach_and_terminate attach_periodic \
	launch_target
finish
