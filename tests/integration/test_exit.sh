#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# How the launched command ended shows in the final report's "exit", while
# the tool itself exits 0; the command is found through PATH like a shell
# would, and its arguments reach it.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks" "$WL/target"

# leaks exits with the status given as its argument.
status() {
	run_tool status 60 --format json -- "$WL/leaks" 7
	if expect_tool_ok status; then
		r=$(final_report "$TMP/status.out")
		expect_eq "status: exit" '{"status":7,"signal":null}' "$(report_get "$r" '.exit | {status, signal}')"
		expect_leak "$r" leak_small 2400 100
	fi
}

# Found through PATH by its bare name.
path() {
	PATH="$WL:$PATH" run_tool path 60 --format json -- leaks 5
	if expect_tool_ok path; then
		r=$(final_report "$TMP/path.out")
		expect_eq "path: comm" '"leaks"' "$(report_get "$r" .comm)"
		expect_eq "path: exit" '{"status":5,"signal":null}' "$(report_get "$r" '.exit | {status, signal}')"
		expect_leak "$r" leak_medium 28672 7
	fi
}

# Killed by a signal: status null, signal 9.
killed() {
	mkdir -p "$TMP/killed"
	start_tool killed 30 --format json -- "$WL/target" "$TMP/killed" 25
	wait_tracing killed 20 || { fail "killed: tracing" "no 'tracing pid' line in 20 s"; return; }
	wait_for 10 test -e "$TMP/killed/ready" || { fail "killed: target" "not ready"; return; }
	kill -KILL "$TRACED"
	wait_tool
	expect_tool_ok killed || return
	r=$(final_report "$TMP/killed.out")
	expect_eq "killed: exit" '{"status":null,"signal":9}' "$(report_get "$r" '.exit | {status, signal}')"
}

cases status path killed
finish
