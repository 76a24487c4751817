#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# Full maps: with --max-allocs, --max-stacks or --ringbuf-size smaller than
# a workload needs, the BPF maps are made that size, what does not fit is
# counted exactly, what fits is exact, and the report says the numbers are
# incomplete. tests/workloads/spread.c makes the blocks and stacks, in a
# known order, once attached to (-p): nothing else allocates.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/spread"

# start_spread NAME BLOCKS STACKS CHURN TOOL_ARGS...: attach to a spread
# that will make BLOCKS blocks over STACKS stacks and CHURN pairs, and let
# it go; returns once it has (the tool still runs).
start_spread() {
	local name=$1 target
	mkdir -p "$TMP/$name.d"
	"$WL/spread" "$TMP/$name.d" "$2" "$3" "$4" &
	target=$!
	track "$target"
	shift 4
	wait_for 10 test -e "$TMP/$name.d/ready" || { fail "$name: target" "not ready in 10 s"; return 1; }
	start_tool "$name" 60 -T 0 "$@" -p "$target"
	wait_tracing "$name" 30 || { fail "$name: tracing" "no 'tracing pid' line in 30 s"; return 1; }
	kill -USR1 "$target"
	wait_for 30 test -e "$TMP/$name.d/done" || { fail "$name: target" "not done in 30 s"; return 1; }
}

# stop_tool: SIGINT, for the final report.
stop_tool() {
	kill -INT "$TOOL_PID"
	wait_tool
}

# stop_json NAME: the same, and the JSON final report into R.
stop_json() {
	stop_tool
	expect_tool_ok "$1" || return
	R=$(final_report "$TMP/$1.out")
}

# expect_counted NAME COUNTER N COMPLETE: what did not fit, counted.
expect_counted() {
	expect_eq "$1: $2" "$3" "$(report_get "$R" ".counters.$2")"
	expect_eq "$1: complete" "$4" "$(report_get "$R" .complete)"
}

# map_sizes PID: the types and sizes of the maps the options set (the live
# blocks' table, the stacks and their statistics, the ring buffer) that the
# process PID holds, as bpf(2) made them, sorted.
map_sizes() {
	awk '$1 == "map_id:" { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u |
		while read -r id; do
			bpftool map show id "$id" -j
		done | jq -r 'select(.name == "allocs" or .name == "stacks" or
			.name == "stack_stats" or .name == "events")
			| "\(.type) \(.max_entries)"' |
		sort -k1,1 -k2,2n | paste -sd " "
}

# 1,000 blocks of 100 bytes, then 500 malloc/free pairs, with room for 100
# blocks: a table of 256 slots (2 x 100, rounded up to a power of two).
# The blocks fill every slot, the other 744 and every pair's malloc are
# lost, so each pair's free is untracked.
allocs() {
	start_spread allocs 1000 1 500 --format json --max-allocs 100 --max-stacks 777 \
		--ringbuf-size 64K || return
	expect_eq "allocs: maps as asked (blocks, stacks, stacks + unknown, ring)" \
		"array 256 hash 777 percpu_hash 778 ringbuf 65536" "$(map_sizes "$(loader_pid)")"
	stop_json allocs || return
	expect_totals_lost allocs "$R" 25600 256 1500 0 500 1244
	expect_counted allocs lost_allocs 1244 false
	expect_leak "$R" leak_on_path 25600 256 256
	expect_eq "allocs: one stack" 1 "$(report_get "$R" .stacks_holding)"

	start_spread allocs_text 1000 1 500 --max-allocs 100 || return
	stop_tool
	expect_eq "allocs text: warning" 1 "$(grep -cFx \
		'  warning: numbers incomplete: lost_allocs=1,244 (live-allocation map full)' \
		"$TMP/allocs_text.out")"
}

# 50 blocks through 50 stacks, of 100 + i bytes, with room for 10 stacks:
# the first 10 keep theirs, the other 40 count under the unknown stack.
stacks() {
	start_spread stacks 50 50 0 --format json --max-stacks 10 || return
	stop_json stacks || return
	expect_totals_lost stacks "$R" 6225 50 50 0 0 0
	# Complete: every block is counted, if not under its own stack.
	expect_counted stacks lost_stacks 40 true
	expect_eq "stacks: the first 10 stacks, one block each" "$(seq -s, 100 109)" \
		"$(jq -r '[.stacks[] | select(.frames | length > 0) | .outstanding_bytes] | sort
			| map(tostring) | join(",")' <<<"$R")"
	expect_eq "stacks: the other 40 under the unknown stack" \
		'{"outstanding_bytes":5180,"outstanding_allocs":40,"allocs":40}' \
		"$(jq -c '.stacks[] | select(.frames == []) | {outstanding_bytes, outstanding_allocs, allocs}' <<<"$R")"

	start_spread stacks_text 50 50 0 --max-stacks 10 || return
	stop_tool
	expect_eq "stacks text: warning" 1 "$(grep -cFx \
		'  warning: numbers incomplete: lost_stacks=40 (stack map full, counted under an unknown stack)' \
		"$TMP/stacks_text.out")"
	expect_eq "stacks text: unknown stack shown" 1 "$(grep -cFx '    (stack unknown)' "$TMP/stacks_text.out")"
}

# 1,000 allocations at or above --big into a ring buffer with room for 3
# alerts: each is either printed or counted lost, none both, none neither.
ringbuf() {
	start_spread ringbuf 1000 1 0 --format json --big 100 --ringbuf-size 4K || return
	expect_eq "ringbuf: default sizes but the ring" \
		"array 2097152 hash 65536 percpu_hash 65537 ringbuf 4096" "$(map_sizes "$(loader_pid)")"
	stop_json ringbuf || return
	local alerts lost
	alerts=$(count_lines "$TMP/ringbuf.out" \
		'.type == "big_alloc" and .size == 100 and .frames[0].function == "leak_on_path"')
	lost=$(report_get "$R" .counters.lost_events)
	expect_eq "ringbuf: alerts printed + lost" 1000 "$((alerts + lost))"
	expect_true "ringbuf: some lost" "$alerts printed, $lost lost" test "$lost" -gt 0
	expect_counted ringbuf lost_events "$lost" false
	expect_leak "$R" leak_on_path 100000 1000 1000
}

cases allocs stacks ringbuf
finish
