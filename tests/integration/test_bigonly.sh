#!/bin/bash
# --big-only (issue #4): no uprobes at all; big blocks are seen where they
# reach the kernel, as anonymous mmap (glibc maps requests above its mmap
# threshold), with stacks that start at the code that asked. Sizes are the
# kernel's: the request plus the allocator's header, in whole pages.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/bigallocs"

run_tool bigonly 60 -v --format json -T 0 --big 2M --big-only -- "$WL/bigallocs"
expect_tool_ok bigonly || finish
expect_eq "no uprobe attached" "" "$(grep -E '^alloctrace: (uprobe|uretprobe) ' "$TMP/bigonly.err")"
expect_true "both syscall tracepoints attached" "$(cat "$TMP/bigonly.err")" \
	grep -q 'raw tracepoint sys_exit' "$TMP/bigonly.err"

# Every block of 2 MiB or more, from the function that asked, by mmap;
# the 1 MiB ones and the 500 small allocations are not seen at all.
expect_eq "alerts: the functions that asked, in order" \
	'["big_calloc_2m","big_memalign_3m","big_aligned_alloc_4m","big_valloc_5m","big_pvalloc_6m","big_reallocarray_7m","big_malloc_8m_minus_1","big_malloc_8m","big_realloc_9m","big_posix_memalign_16m"]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | .frames[0].function]' "$TMP/bigonly.out")"
expect_eq "alerts: all by mmap" '["mmap"]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | .func] | unique' "$TMP/bigonly.out")"
# Requested 2, 3, ... 16 MiB: the mapping is that plus at most a few pages.
expect_eq "alerts: sizes are the requests rounded up to the mapping" \
	'[2,3,4,5,6,7,8,8,9,16]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | select(.size % 4096 == 0)
		| (.size / 1048576 | floor)]' "$TMP/bigonly.out")"
expect_eq "alerts: stacks reach main" '[true]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | .frames[1].function == "main"] | unique' \
		"$TMP/bigonly.out")"

r=$(final_report "$TMP/bigonly.out")
expect_eq "the report says what it saw" 2097152 "$(report_get "$r" .big_only)"
expect_eq "allocs: only the 10 big mappings" 10 "$(report_get "$r" .totals.allocs)"
expect_eq "every big block still held" 10 "$(report_get "$r" .totals.outstanding_allocs)"
expect_eq "held by the functions that asked" 10 \
	"$(jq '[.stacks[] | select(.frames[0].function | startswith("big_"))
		| .outstanding_allocs] | add' <<<"$r")"

finish
