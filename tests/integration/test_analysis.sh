#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# Analysis over a run: leak trend (a steady leak ranked apart from a large
# flat cache), peak, per-thread breakdown, block filters, --module,
# --show-data and SIGUSR1 reports.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/trend"
require_built "$WL/leaks"
require_built "$WL/threads"

# Growing: leak_slowly keeps 2 KiB every 100 ms. Stable: a 1 MiB cache.
# A report a second over 5 s: an interval holds about ten leaks, so even a
# target starved for half a second on a loaded machine still rises in each
# (at -i 0.5 over 3 s, a load of 11 on 2 CPUs left flat intervals: "varying").
trend() {
	run_tool trend 60 --format json -i 1 -T 0 --show-data 12 -- "$WL/trend" 5
	expect_tool_ok trend || return
	local r last
	r=$(final_report "$TMP/trend.out")
	expect_leak "$r" cache_entry 1048576 64 64
	expect_leak "$r" leak_slowly 102400 50 50
	expect_eq "trend: cache is stable" stable \
		"$(jq -r '.stacks[] | select(.frames[0].function == "cache_entry") | .trend' <<<"$r")"
	expect_eq "trend: leak is growing" growing \
		"$(jq -r '.stacks[] | select(.frames[0].function == "leak_slowly") | .trend' <<<"$r")"
	expect_eq "trend: only the leak in the growing list" leak_slowly \
		"$(jq -r '[.growing[].frames[0].function] | join(",")' <<<"$r")"
	# By bytes the cache still comes first: the ranking by growth is separate.
	expect_eq "trend: stacks by bytes" cache_entry \
		"$(jq -r '.stacks[0].frames[0].function' <<<"$r")"
	expect_eq "peak: the largest total" 1150976 "$(report_get "$r" .peak.outstanding_bytes)"
	expect_eq "peak: held by the cache first" cache_entry \
		"$(jq -r '.peak.stacks[0].frames[0].function' <<<"$r")"
	# Blocks are read while the target lives: a report before the final one.
	last=$(jq -c 'select(.type == "report" and .final == false)' "$TMP/trend.out" | tail -n 1)
	expect_eq "show-data: the cache's bytes" "cache-entry." \
		"$(jq -r '.stacks[] | select(.frames[0].function == "cache_entry") | .data.text' <<<"$last")"
	expect_eq "show-data: the leak's bytes" 5345435245542d544f4b454e \
		"$(jq -r '.stacks[] | select(.frames[0].function == "leak_slowly") | .data.hex' <<<"$last")"
}

# Exact sizes from tests/workloads/leaks.c.
size_filters() {
	local r
	run_tool minsize 60 --format json -T 0 --min-size 4096 -- "$WL/leaks"
	expect_tool_ok minsize || return
	r=$(final_report "$TMP/minsize.out")
	expect_totals_exact minsize "$r" 38672 9
	expect_leak "$r" leak_medium 28672 7
	expect_leak "$r" leak_pvalloc 10000 2
	expect_match "min-size: named in the report" "4096" "$(report_get "$r" .filter)"

	run_tool maxsize 60 --format json -T 0 --max-size 100 -- "$WL/leaks"
	expect_tool_ok maxsize || return
	r=$(final_report "$TMP/maxsize.out")
	expect_totals_exact maxsize "$r" 2700 103
	expect_leak "$r" leak_small 2400 100
	expect_leak "$r" leak_posix_memalign 300 3
}

# --min-age 2 on tests/workloads/target.c, whose 9 x 1000 bytes leak when
# it is signalled (and nothing but them stays): the reports of the first
# 1.5 s after count none of them, those from 2.5 s on all of them.
age_filter() {
	local born
	trace_new_target age 60 --format json -T 0 -i 0.5 --min-age 2 || return
	kill -USR1 "$TARGET"
	wait_for 10 test -e "$TMP/age/done" || { fail "age: target" "not done in 10 s"; return; }
	born=$(stat -c %.9Y "$TMP/age/done")
	sleep 4
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok age || return
	expect_eq "min-age: young blocks left out" '[[0,0]]' "$(jq -sc --argjson t "$born" \
		'[.[] | select(.type == "report" and .time > $t + 0.1 and .time < $t + 1.5)
			| [.totals.outstanding_bytes, .totals.outstanding_allocs]] | unique' "$TMP/age.out")"
	expect_eq "min-age: old blocks counted" '[[9000,9]]' "$(jq -sc --argjson t "$born" \
		'[.[] | select(.type == "report" and .time > $t + 2.5)
			| [.totals.outstanding_bytes, .totals.outstanding_allocs]] | unique' "$TMP/age.out")"
	expect_leak "$(final_report "$TMP/age.out")" target_leak 9000 9
}

expect_totals_exact() {
	expect_eq "$1: outstanding_bytes" "$3" "$(report_get "$2" .totals.outstanding_bytes)"
	expect_eq "$1: outstanding_allocs" "$4" "$(report_get "$2" .totals.outstanding_allocs)"
}

thread_filters() {
	local r
	run_tool tname 60 --format json -T 0 -i 0.5 --thread-name '^trend$' -- "$WL/trend" 2
	expect_tool_ok tname || return
	# The final report comes after exit, when no thread has a name left.
	r=$(jq -c 'select(.type == "report" and .final == false)' "$TMP/tname.out" | tail -n 1)
	expect_leak "$r" cache_entry 1048576 64
	run_tool tnone 60 --format json -T 0 -i 0.5 --thread-name '^nothing$' -- "$WL/trend" 2
	expect_tool_ok tnone || return
	r=$(jq -c 'select(.type == "report" and .final == false)' "$TMP/tnone.out" | tail -n 1)
	expect_totals_exact tnone "$r" 0 0
	run_tool tid1 60 --format json -T 0 --tid 1 -- "$WL/leaks"
	expect_tool_ok tid1 || return
	expect_totals_exact "tid 1" "$(final_report "$TMP/tid1.out")" 0 0
}

# Four workers leak 25 x 72 bytes each in worker_leak.
threads() {
	local r
	run_tool th 60 --format json -T 0 --threads -- "$WL/threads"
	expect_tool_ok th || return
	r=$(final_report "$TMP/th.out")
	expect_eq "threads: workers holding 1800 bytes in worker_leak" 4 \
		"$(jq '[.threads[] | select(.stacks | any(.frames[0].function == "worker_leak"
			and .outstanding_bytes == 1800 and .outstanding_allocs == 25))] | length' <<<"$r")"
	expect_eq "threads: sum to the totals" "$(report_get "$r" .totals.outstanding_bytes)" \
		"$(jq '[.threads[].outstanding_bytes] | add' <<<"$r")"
}

modules() {
	local r
	run_tool modnone 60 --format json -T 0 --module 'libstdc\+\+' -- "$WL/leaks"
	expect_tool_ok modnone || return
	expect_totals_exact "module none" "$(final_report "$TMP/modnone.out")" 0 0
	run_tool modexe 60 --format json -T 0 --module '/leaks$' -- "$WL/leaks"
	expect_tool_ok modexe || return
	r=$(final_report "$TMP/modexe.out")
	expect_totals_exact "module exe" "$r" 51478 137
}

# reports_on_demand NAME: how many reports that are not the final one.
reports_on_demand() {
	jq -c 'select(.type == "report" and .final == false)' "$TMP/$1.out" | wc -l
}

has_report_on_demand() {
	(($(reports_on_demand "$1") > 0))
}

usr1() {
	local pid
	# The workload outlives the exchange, which ends with SIGINT: one that
	# ended by itself 3 s in could be gone before a slow machine's signal.
	start_tool usr1 90 --format json -i 100 -- "$WL/trend" 60
	wait_tracing usr1 20 || { fail "SIGUSR1: tracing" "no tracing line"; return; }
	# The tool runs under timeout: signal the tool itself.
	pid=$(pgrep -P "$TOOL_PID" -x alloctrace)
	kill -USR1 "$pid"
	wait_for 30 has_report_on_demand usr1
	kill -INT "$pid"
	wait_tool
	expect_eq "SIGUSR1: one report on demand" 1 "$(reports_on_demand usr1)"
	expect_eq "SIGUSR1: then the final one" 1 \
		"$(jq -c 'select(.type == "report" and .final == true)' "$TMP/usr1.out" | wc -l)"
}

cases trend size_filters age_filter thread_filters threads modules usr1
finish
