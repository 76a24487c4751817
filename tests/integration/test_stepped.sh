#!/bin/bash
# A probe the kernel single-steps costs ~5.5 us a call on x86-64 under
# KVM (issue 43): said when its calls add up, not at every start.
# glibc's reallocarray is single-stepped on x86-64 and arm64
# (tests/workloads/stepped.c calls it N times). A run with few calls says
# nothing of it; one with 20,000 says once, at a report, the function and
# its calls counted exactly; -v says it at the start, as probe placement
# decides it.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/stepped"

# stepped_lines NAME: the run's lines about single-stepped probes.
stepped_lines() { grep -c 'single-steps' "$TMP/$1.err"; }

run_tool few 60 --format json -- "$WL/stepped" 100
expect_tool_ok few || finish
expect_eq "100 calls: nothing said of single-stepping" 0 "$(stepped_lines few)"

run_tool many 60 --format json -i 0.5 -- "$WL/stepped" 20000 1
expect_tool_ok many || finish
expect_eq "20,000 calls: said once in a run of several reports" 1 "$(stepped_lines many)"
expect_match "20,000 calls: the function, its calls and their cost" \
	'^alloctrace: warning: reallocarray: [0-9]+ calls since the start on a probe the kernel single-steps, ' \
	"$(grep 'single-steps' "$TMP/many.err")"
expect_true "20,000 calls: the count is past the threshold, at most the calls" \
	"$(grep 'single-steps' "$TMP/many.err")" awk -v n="$(sed -n \
	's/.*reallocarray: \([0-9]*\) calls.*/\1/p' "$TMP/many.err")" \
	'BEGIN { exit !(n >= 10000 && n <= 20000) }'

run_tool verbose 60 --format json -v -- "$WL/stepped" 100
expect_tool_ok verbose || finish
expect_match "-v: the start says reallocarray's probe is single-stepped" \
	'on instructions the kernel single-steps \([^)]*reallocarray[^)]*\)' "$(cat "$TMP/verbose.err")"
finish
