#!/bin/bash
# --big SIZE alerts on every single allocation >= SIZE, with the allocator
# function, the size asked for and a stack whose frames[0] is the caller.
# tests/workloads/bigallocs.c straddles each threshold used here, so each
# gives an exact, different set; suffixes are powers of 1024.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/bigallocs"

M1='malloc 1048576 big_malloc_1m'
M1L='malloc 1048575 big_malloc_1m_minus_1'
C2='calloc 2097152 big_calloc_2m'
MA3='memalign 3145728 big_memalign_3m'
AA4='aligned_alloc 4194304 big_aligned_alloc_4m'
V5='valloc 5242880 big_valloc_5m'
PV6='pvalloc 6291456 big_pvalloc_6m'
RA7='reallocarray 7340032 big_reallocarray_7m'
M8L='malloc 8388607 big_malloc_8m_minus_1'
M8='malloc 8388608 big_malloc_8m'
R9='realloc 9437184 big_realloc_9m'
P16='posix_memalign 16777216 big_posix_memalign_16m'

# alerts NAME: the run's big_alloc events as sorted "func size function".
# glibc's aligned_alloc is memalign (one address): for that call alone,
# either name is right.
alerts() {
	jq -r 'select(.type == "big_alloc") | .frames[0].function as $f
		| (if $f == "big_aligned_alloc_4m" and .func == "memalign"
			then "aligned_alloc" else .func end) as $func
		| "\($func) \(.size) \($f)"' "$TMP/$1.out" | sort | paste -sd ';'
}

# expect_alerts NAME THRESHOLD EXPECTED...: run with --big THRESHOLD (none
# when empty) and compare the alert set.
expect_alerts() {
	local name=$1 big=$2 r bad
	shift 2
	if [[ -n "$big" ]]; then
		run_tool "$name" 60 --format json -T 0 --big "$big" -- "$WL/bigallocs"
	else
		run_tool "$name" 60 --format json -T 0 -- "$WL/bigallocs"
	fi
	expect_tool_ok "$name" || return
	expect_eq "$name: alerts" "$(printf '%s\n' "$@" | sed '/^$/d' | sort | paste -sd ';')" \
		"$(alerts "$name")"
	r=$(final_report "$TMP/$name.out")
	# Every alert: the target's pid, its only thread, a real address.
	bad=$(jq -c --argjson pid "$(report_get "$r" .pid)" 'select(.type == "big_alloc")
		| select(.pid != $pid or .tid != $pid or (.addr | test("^0x[0-9a-f]+$") | not)
			or .addr == "0x0" or (.time | type) != "number")' "$TMP/$name.out")
	expect_eq "$name: alert fields" "" "$bad"
}

expect_alerts big8m 8M "$M8" "$R9" "$P16"
expect_alerts big8m_bytes 8388608 "$M8" "$R9" "$P16"
expect_alerts big2m 2097152 "$C2" "$MA3" "$AA4" "$V5" "$PV6" "$RA7" "$M8L" "$M8" "$R9" "$P16"
expect_alerts big1m 1M "$M1" "$C2" "$MA3" "$AA4" "$V5" "$PV6" "$RA7" "$M8L" "$M8" "$R9" "$P16"
expect_alerts big512k 512K "$M1L" "$M1" "$C2" "$MA3" "$AA4" "$V5" "$PV6" "$RA7" "$M8L" "$M8" "$R9" "$P16"
expect_alerts big1g 1G ""
expect_alerts nobig ""

# The big blocks are leaks too; the 4096-byte block realloc grew is gone.
r=$(final_report "$TMP/big1m.out")
if [[ -n "$r" ]]; then
	expect_leak "$r" big_realloc_9m 9437184 1 1
	expect_leak "$r" big_posix_memalign_16m 16777216 1 1
	expect_leak "$r" big_calloc_2m 2097152 1 1
	expect_leak "$r" big_pvalloc_6m 6291456 1 1
	# 13 rounds of 500, keeping sizes 1 + 13101 + 26201 + 39301 + 52401.
	expect_leak "$r" small_allocs 1703065 65 6500
fi

finish
