#!/bin/bash
# The demo workload: exact leaks in JSON (also with -v, which must keep
# stdout pure NDJSON), and a smoke test of the text format.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaky"

# Two seconds at 50 ticks a second: 100 requests remembered, 10 pages cached.
run_tool json 60 --format json -v -T 0 -- "$WL/leaky"
if expect_tool_ok json; then
	r=$(final_report "$TMP/json.out")
	expect_leak "$r" load_config 1000 1 1
	expect_leak "$r" remember_request 6400 100 100
	expect_leak "$r" cache_page 40960 10 10
	expect_no_stack "$r" handle_request
	expect_no_stack "$r" rebuild_index
	expect_totals_consistent json "$r"
fi

# Text is the default format; say it explicitly once.
text() {
	run_tool text 60 --format text -- "$WL/leaky" 1
	expect_eq "text: exit status" 0 "$RC"
	expect_true "text: names a leak function" "$(head -c 300 "$TMP/text.out")" \
		grep -q 'remember_request' "$TMP/text.out"
	expect_true "text: has a bytes line" "no line with 'bytes'" \
		grep -qi 'bytes' "$TMP/text.out"
	expect_true "text: is not JSON" "first line starts with '{'" \
		test "$(head -c 1 "$TMP/text.out")" != "{"
	run_tool plain 60 -- "$WL/leaky" 1
	expect_eq "text default: exit status" 0 "$RC"
	expect_true "text default: names a leak function" "$(head -c 300 "$TMP/plain.out")" \
		grep -q 'cache_page' "$TMP/plain.out"
}
text

finish
