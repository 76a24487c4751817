#!/bin/bash
# --growth (issue 14): no uprobes; resident pages by the stack that first
# touched them. tests/workloads/growth.c: map_pages touches 64 pages that
# stay, fill_buffer's 1 MiB malloc is 258 pages first touched (256 by its
# memset, its mapping's header page by malloc, and malloc's first use of
# the heap), released touches 32 pages and unmaps them. The same numbers
# hold when the tool attaches with -p to a waiting process that then
# does the work.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/growth" "$WL/bigmaps"

# pages_of REPORT FUNCTION: resident pages of the stacks through FUNCTION.
pages_of() {
	jq --arg f "$2" '[.stacks[] | select([.frames[].function] | index($f))
		| .resident_pages] | add // 0' <<<"$1"
}

# check NAME: the final report of run NAME holds the known pages exactly.
check() {
	local r
	r=$(final_report "$TMP/$1.out")
	expect_eq "$1: labelled as growth" true "$(report_get "$r" .growth)"
	expect_eq "$1: map_pages: 64 pages resident" 64 "$(pages_of "$r" map_pages)"
	expect_eq "$1: map_pages: bytes are pages * 4096" 262144 \
		"$(jq '[.stacks[] | select(.frames[0].function == "touch_pages"
			and .frames[1].function == "map_pages" and .frames[2].function == "main")
			| .resident_bytes] | add' <<<"$r")"
	expect_eq "$1: fill_buffer: 258 pages resident" 258 "$(pages_of "$r" fill_buffer)"
	expect_eq "$1: fill_buffer's memset: 256 pages" 256 \
		"$(jq '[.stacks[] | select(.frames[0].function == "fill_buffer") | .resident_pages]
			| max' <<<"$r")"
	expect_eq "$1: released: unmapped pages drop out" 0 "$(pages_of "$r" released)"
	expect_eq "$1: nothing lost" 0 "$(report_get "$r" .totals.lost)"
	expect_eq "$1: no uprobe attached" "" "$(grep -E '^alloctrace: (uprobe|uretprobe) ' \
		"$TMP/$1.err")"
}

run_tool launched 60 -v --growth --format json -T 0 -n 2 -i 1 -- "$WL/growth" 5
expect_tool_ok launched || finish
check launched

# Attached before the work: exact pages per function, as when launched.
mkdir -p "$TMP/wait"
"$WL/growth" 30 "$TMP/wait" &
W=$!
track "$W"
if ! wait_for 10 test -e "$TMP/wait/ready"; then
	fail "attached before: target" "not ready in 10 s"
else
	start_tool attached_before 60 -v --growth --format json -T 0 -i 1 -p "$W"
	if ! wait_tracing attached_before 30; then
		fail "attached before: tracing" "no 'tracing pid' line in 30 s"
	else
		kill -USR1 "$W"
		wait_for 10 test -e "$TMP/wait/done" ||
			fail "attached before: target" "no done file 10 s after SIGUSR1"
		# A report after the work, then the final one from SIGINT.
		sleep 1.5
		kill -INT "$TOOL_PID"
		wait_tool
		expect_tool_ok attached_before && check attached_before
	fi
fi

mkdir -p "$TMP/p"
"$WL/growth" 8 &
P=$!
track "$P"
sleep 0.5
run_tool attached 60 -v --growth --format json -T 0 -n 2 -i 1 -p "$P"
expect_tool_ok attached || finish
# Attached after the pages were touched: none of them is seen.
expect_eq "attached late: the touches before attach are not counted" 0 \
	"$(pages_of "$(final_report "$TMP/attached.out")" map_pages)"

# --big alerts without the syscall tracepoints: the big anonymous
# mappings bigmaps prints, each at its address (the 8 MiB one aligned to a
# huge page by the kernel, the moved one where it went), and nothing else.
run_tool bigmaps 60 -v --growth --big 2M --format json -- "$WL/bigmaps" "$TMP/bigmaps.truth"
expect_tool_ok bigmaps || finish
expect_eq "bigmaps: alerts at the addresses the mappings got" \
	"$(sort "$TMP/bigmaps.truth" | paste -sd ';')" \
	"$(jq -r 'select(.type == "big_alloc") | "\(.frames[0].function) \(.addr) \(.size)"' \
		"$TMP/bigmaps.out" | sort | paste -sd ';')"
expect_eq "bigmaps: four alerts" 4 "$(grep -c . "$TMP/bigmaps.truth")"
expect_eq "bigmaps: no syscall tracepoint" "" "$(grep 'raw tracepoint sys_' "$TMP/bigmaps.err")"

run_tool bad 10 --growth --big-only --big 1M -- "$WL/growth" 0
expect_eq "--growth with --big-only: command-line error" 2 "$RC"
finish
