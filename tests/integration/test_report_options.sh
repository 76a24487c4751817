#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# Report options: -i/-n give exactly N reports of which only the last is
# final; -T cuts the stacks to the N biggest (default 10, 0 = all) without
# changing the totals.
# test: serial (asserts how long periodic reports take)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks" "$WL/target"

# Three reports a second apart from a target that would run for 25 s.
periodic() {
	local start=$SECONDS elapsed
	mkdir -p "$TMP/periodic"
	start_tool periodic 30 --format json -i 1 -n 3 -- "$WL/target" "$TMP/periodic" 25
	wait_tracing periodic 20 || fail "periodic: tracing" "no 'tracing pid' line in 20 s"
	wait_tool
	elapsed=$((SECONDS - start))
	expect_eq "periodic: exit status" 0 "$RC"
	expect_true "periodic: stdout is NDJSON" "$(head -c 300 "$TMP/periodic.out")" \
		valid_ndjson "$TMP/periodic.out"
	expect_eq "periodic: report lines" 3 "$(count_lines "$TMP/periodic.out" '.type == "report"')"
	expect_eq "periodic: only the last is final" "false false true" \
		"$(jq -r 'select(.type == "report") | .final' "$TMP/periodic.out" | xargs)"
	expect_eq "periodic: reports about a second apart" true \
		"$(jq -s '[.[] | select(.type == "report") | .time]
			| [range(1; length) as $i | .[$i] - .[$i - 1]]
			| length == 2 and all(.[]; . >= 0.5 and . <= 3)' "$TMP/periodic.out")"
	expect_true "periodic: took 2..25 s" "took $elapsed s" \
		test "$elapsed" -ge 2 -a "$elapsed" -le 25
}

# stacks_key REPORT: the stacks as [bytes, first function], in order.
stacks_key() {
	jq -c '[.stacks[] | [.outstanding_bytes, .frames[0].function]]' <<<"$1"
}

top() {
	local all cut def
	run_tool all 60 --format json -T 0 -- "$WL/leaks"
	expect_tool_ok all || return
	run_tool cut 60 --format json -T 2 -- "$WL/leaks"
	expect_tool_ok cut || return
	run_tool default 60 --format json -- "$WL/leaks"
	expect_tool_ok default || return
	all=$(final_report "$TMP/all.out")
	cut=$(final_report "$TMP/cut.out")
	def=$(final_report "$TMP/default.out")

	expect_true "-T 0: more than 10 stacks" "$(stacks_key "$all")" \
		test "$(report_get "$all" '.stacks | length')" -gt 10
	expect_eq "-T 0: biggest first" true \
		"$(jq '[.stacks[].outstanding_bytes] | . == (sort | reverse)' <<<"$all")"
	expect_eq "-T 2: the two biggest stacks" \
		"$(stacks_key "$(jq -c '{stacks: .stacks[:2]}' <<<"$all")")" "$(stacks_key "$cut")"
	expect_eq "default: the ten biggest stacks" \
		"$(stacks_key "$(jq -c '{stacks: .stacks[:10]}' <<<"$all")")" "$(stacks_key "$def")"
	expect_eq "-T 2: totals unchanged" "$(report_get "$all" .totals.outstanding_bytes)" \
		"$(report_get "$cut" .totals.outstanding_bytes)"
}

cases periodic top
finish
