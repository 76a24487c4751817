#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# Exact accounting in -- CMD mode on tests/workloads/leaks.c: each leak
# function's outstanding bytes, blocks and allocation count; nothing from
# churn or from the calls of realloc_edges that failed or released; totals
# consistent with the stacks; frames symbolized to function, file and line.
# The same leaks in a static glibc binary without frame pointers, whose
# .eh_frame has no .eh_frame_hdr: every stack walked to _start.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks" "$WL/leaks_static"

# Each leak function of leaks.c, exactly.
expect_leaks_c() {
	#                   function           bytes  blocks allocs
	expect_leak "$1" leak_small            2400   100    100
	expect_leak "$1" leak_medium           28672  7      7
	expect_leak "$1" leak_realloc          5000   5      5
	expect_leak "$1" leak_posix_memalign   300    3      3
	expect_leak "$1" leak_aligned_alloc    512    4      4
	expect_leak "$1" leak_memalign         1000   5      5
	expect_leak "$1" leak_valloc           600    2      2
	expect_leak "$1" leak_pvalloc          10000  2      2
	expect_leak "$1" leak_reallocarray     1440   6      6
	expect_leak "$1" realloc_edges         1554   3      3
}

# Dynamic: leaks.c as built, with the C library's allocator.
dynamic() {
	run_tool leaks 60 --format json -T 0 -- "$WL/leaks"
	expect_tool_ok leaks || return
	r=$(final_report "$TMP/leaks.out")

	expect_leaks_c "$r"
	expect_no_stack "$r" churn
	expect_no_stack "$r" leak_memalign_family

	# Only the call site that made a block's final size holds it.
	expect_eq "leak_realloc: only the last realloc's stack" 1 "$(fn_stacks "$r" leak_realloc)"
	expect_eq "leak_reallocarray: only the growing call's stack" 1 \
		"$(fn_stacks "$r" leak_reallocarray)"

	# realloc_edges: realloc(NULL, 333) kept; realloc(p, 0) released p (444);
	# the failed realloc and reallocarray left their blocks at 555 and 666.
	expect_eq "realloc_edges: blocks by stack" "[333,555,666]" \
		"$(jq -c '[.stacks[] | select(.frames[0].function == "realloc_edges")
			| .outstanding_bytes] | sort' <<<"$r")"

	expect_totals_consistent leaks "$r"
	expect_eq "totals.lost" 0 "$(report_get "$r" .totals.lost)"
	# Traced from the first instruction: every free is of a block seen allocated.
	expect_eq "totals.untracked_frees" 0 "$(report_get "$r" .totals.untracked_frees)"
	# Exactly what the workload does: it allocates nothing else, not even
	# stdio buffers (the leaks above, 10000 churn pairs, 20 reallocs, 4 calls
	# in realloc_edges).
	expect_eq "totals" \
		'{"outstanding_bytes":51478,"outstanding_allocs":137,"allocs":10159,"frees":10022}' \
		"$(report_get "$r" '.totals | {outstanding_bytes, outstanding_allocs, allocs, frees}')"
	expect_eq "counters is an object" '"object"' "$(report_get "$r" '.counters | type')"

	expect_eq "comm" '"leaks"' "$(report_get "$r" .comm)"
	expect_eq "pid is the traced pid" "$(traced_pid "$TMP/leaks.err")" "$(report_get "$r" .pid)"
	expect_eq "exit" '{"status":0,"signal":null}' "$(report_get "$r" '.exit | {status, signal}')"

	# The leak_small stack, frame by frame.
	s=$(jq -c '[.stacks[] | select(.frames[0].function == "leak_small")][0]' <<<"$r")
	line=$(grep -n 'LINE:leak_small' "$ROOT/tests/workloads/leaks.c" | cut -d: -f1)
	expect_match "leak_small frame addr" '^"0x[0-9a-f]+"$' "$(report_get "$s" '.frames[0].addr')"
	expect_match "leak_small frame offset" '^"0x[0-9a-f]+"$' "$(report_get "$s" '.frames[0].offset')"
	expect_match "leak_small frame module" '/build/workloads/leaks"$' \
		"$(report_get "$s" '.frames[0].module')"
	expect_match "leak_small frame file" 'tests/workloads/leaks\.c"$' \
		"$(report_get "$s" '.frames[0].file')"
	expect_eq "leak_small frame line" "$line" "$(report_get "$s" '.frames[0].line')"
	expect_eq "leak_small frame not inlined" false "$(report_get "$s" '.frames[0].inlined')"
	expect_eq "leak_small caller" '"main"' "$(report_get "$s" '.frames[1].function')"
	expect_eq "leak_valloc callers" '["leak_memalign_family","main"]' \
		"$(jq -c '[.stacks[] | select(.frames[0].function == "leak_valloc")][0]
			| [.frames[1].function, .frames[2].function]' <<<"$r")"
}

# Static: the allocator is in the executable, and so is all its CFI.
static() {
	run_tool static 60 --format json -T 0 -- "$WL/leaks_static"
	expect_tool_ok static || return
	r=$(final_report "$TMP/static.out")
	expect_leaks_c "$r"
	expect_eq "static: leak_small's stack to _start" \
		'["leak_small","main","__libc_start_call_main","__libc_start_main","_start"]' \
		"$(jq -c '[.stacks[] | select(.frames[0].function == "leak_small")][0]
			| [.frames[].function]' <<<"$r")"
	expect_eq "static: leak_valloc's stack to _start" \
		'["leak_valloc","leak_memalign_family","main","__libc_start_call_main","__libc_start_main","_start"]' \
		"$(jq -c '[.stacks[] | select(.frames[0].function == "leak_valloc")][0]
			| [.frames[].function]' <<<"$r")"
	expect_eq "static: every stack ends at _start, none flagged" '[["_start"],[[]]]' \
		"$(jq -c '[([.stacks[].frames[-1].function] | unique), ([.stacks[].stack_flags] | unique)]' <<<"$r")"
	expect_eq "static: stacks_cut" 0 "$(report_get "$r" .counters.stacks_cut)"
	expect_eq "static: stacks_complete" true "$(report_get "$r" .stacks_complete)"
}

cases dynamic static
finish
