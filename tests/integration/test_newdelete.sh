#!/bin/bash
# C++ operator new and new[] (tests/workloads/newdelete.cc). libstdc++ has
# no frame pointers, so a stack taken at malloc's return would skip the
# function that called new: alloctrace probes libstdc++'s operator new
# too, and that function must be frames[0], with its callers after it.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/newdelete"

run_tool newdelete 60 --format json -T 0 -v -- "$WL/newdelete"
expect_tool_ok newdelete || finish
r=$(final_report "$TMP/newdelete.out")
# libstdc++'s single-stepped overloads are named apart, never "operator new"
# twice (in the start-up line -v gives). Which are stepped is the architecture's: on x86-64 the nothrow
# ones, whose first instructions the kernel does not emulate; on arm64
# the two whose size is overwritten before any instruction the kernel
# simulates (the others' returns are probed on their exits, and operator
# new[] opens with a branch to operator new).
expect_eq "single-step warning: libstdc++'s overloads named distinctly" \
	"$(by_arch "operator new(align, nothrow)|operator new(nothrow)|operator new[](align, nothrow)|operator new[](nothrow)" \
		"operator new|operator new(align)")" \
	"$(sed -n 's/.*libstdc++.* single-steps (\(.*\)): .*/\1/p' "$TMP/newdelete.err" |
		sed 's/), /)\n/g; s/\(operator new\), /\1\n/g' | sort | paste -sd '|')"

# expect_new NAME BYTES BLOCKS: exact, over stacks with NAME in any frame.
expect_new() {
	expect_eq "$1 outstanding_bytes" "$2" "$(fn_any_sum "$r" outstanding_bytes "$1")"
	expect_eq "$1 outstanding_allocs" "$3" "$(fn_any_sum "$r" outstanding_allocs "$1")"
	expect_eq "$1 allocs" "$3" "$(fn_any_sum "$r" allocs "$1")"
}

expect_new new_leak_scalar 440 11
expect_new new_leak_array 3000 3
# The caller of new first, then its caller, exactly.
expect_leak "$r" "make_widget()" 440 11 11
expect_leak "$r" "make_ints(unsigned int)" 3000 3 3
expect_eq "make_ints is called by new_leak_array" new_leak_array \
	"$(jq -r '.stacks[] | select(.frames[0].function == "make_ints(unsigned int)")
		| .frames[1].function' <<<"$r")"
expect_eq "new_delete_churn holds nothing (no stack)" 0 \
	"$(jq '[.stacks[] | select(any(.frames[]; .function == "new_delete_churn"))] | length' <<<"$r")"
expect_totals_consistent newdelete "$r"

finish
