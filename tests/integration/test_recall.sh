#!/bin/bash
# Remembered stack walks (--unwind cfi): a thread's walk is reused only
# while the stack still holds the words it read. tests/workloads/twins.c
# calls one malloc site with the same stack pointer from twin callers, in
# runs (where the memo holds) and alternating (where it must not), the far
# ones telling apart only beyond a 6,000-byte frame (the memo's words span
# windows of the stack); every
# block must land on its own caller's stack, with and without frame
# pointers, and the memo must have answered for the runs. rbpdata saves a
# different rbp on the stack at each call from one place, which no frame
# uses: the memo must answer all the same.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/twins" "$WL/twins-nofp" "$WL/rbpdata"

# stack_of REPORT FUNCTIONS...: the stacks whose frames start with FUNCTIONS,
# as [outstanding_bytes, outstanding_allocs, allocs] each.
stack_of() {
	local r=$1
	shift
	jq -c --argjson want "$(printf '%s\n' "$@" | jq -R . | jq -sc .)" \
		'[.stacks[] | select([.frames[:($want | length)][].function] == $want)
			| [.outstanding_bytes, .outstanding_allocs, .allocs]] | sort' <<<"$r"
}

for w in twins twins-nofp; do
	run_tool "$w" 60 --unwind cfi --format json -T 0 -- "$WL/$w"
	expect_tool_ok "$w" || continue
	r=$(final_report "$TMP/$w.out")
	expect_eq "$w: grab ran at one stack address per group" \
		'{"status":0,"signal":null}' "$(report_get "$r" '.exit | {status, signal}')"
	# Two stacks each, as main calls run() from two places: runs of
	# 100 left, 60 right, 50 and 30 deep; then 20 and 10 of each alternating.
	expect_eq "$w: via_left" '[[960,20,20],[4800,100,100]]' \
		"$(stack_of "$r" grab via_left run main)"
	expect_eq "$w: via_right" '[[1600,20,20],[4800,60,60]]' \
		"$(stack_of "$r" grab via_right run main)"
	expect_eq "$w: deep_left" '[[240,10,10],[1200,50,50]]' \
		"$(stack_of "$r" grab middle deep_left run main)"
	expect_eq "$w: deep_right" '[[560,10,10],[1680,30,30]]' \
		"$(stack_of "$r" grab middle deep_right run main)"
	expect_eq "$w: far_left" '[[320,10,10],[1280,40,40]]' \
		"$(stack_of "$r" grab far_middle far_left run main)"
	expect_eq "$w: far_right" '[[720,10,10],[1440,20,20]]' \
		"$(stack_of "$r" grab far_middle far_right run main)"
	expect_eq "$w: grab has exactly those 12 stacks" 12 "$(fn_stacks "$r" grab)"
	expect_eq "$w: complete stacks" '[]' \
		"$(jq -c '[.stacks[] | select(.frames[0].function == "grab")
			| .stack_flags // [] | .[]] | unique' <<<"$r")"
	# Each run of n calls walks once and recalls n - 1 times:
	# 99 + 59 + 49 + 29 + 39 + 19. The alternating calls must walk every time.
	expect_true "$w: the memo answered for the runs" \
		"stacks_recalled=$(report_get "$r" .counters.stacks_recalled)" \
		test "$(report_get "$r" .counters.stacks_recalled)" -ge 294
done

run_tool rbpdata 60 --unwind cfi --format json -T 0 -- "$WL/rbpdata"
if expect_tool_ok rbpdata; then
	r=$(final_report "$TMP/rbpdata.out")
	expect_eq "rbpdata: 200 blocks on alloc_one's stack" '[[4800,200,200]]' \
		"$(stack_of "$r" alloc_one save_rbp hold_in_rbp main)"
	expect_eq "rbpdata: one walk, 199 recalled" 199 \
		"$(report_get "$r" .counters.stacks_recalled)"
fi

finish
