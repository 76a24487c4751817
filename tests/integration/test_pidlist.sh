#!/bin/bash
# -p A,B,C,D on four busy processes allocating 24 frames deep without
# frame pointers (tests/workloads/deepwork.c): each is probed only once
# its unwind tables are made, so no stack of any is cut, in the first
# report as in the last; and only the processes named are probed, with a
# process filter each: a fifth running the same program and C library has
# no breakpoint in its code.
# test: serial (another script's --comm, --all or --follow-forks run probes
# every process's C library, this one's unnamed process's too)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/deepwork"

N=4

# tracing_all: the tool says it traces each of the N processes.
tracing_all() {
	[[ $(grep -c 'tracing pid' "$TMP/plist.err" 2>/dev/null) == "$N" ]]
}

# expect_whole NAME REPORT PID: PID's stacks in REPORT, none cut.
expect_whole() {
	local p
	p=$(proc_of "$2" "$3")
	expect_eq "$1 pid $3: stacks_cut, unwind_misses, stacks_complete" '[0,0,true]' \
		"$(report_get "$p" '[.counters.stacks_cut, .counters.unwind_misses, .stacks_complete]')"
}

# first_report: the run's first report, on one line (empty if none yet).
first_report() {
	jq -c 'select(.type == "report")' "$TMP/plist.out" 2>/dev/null | head -n 1
}

# A function, for wait_for to call again each time: "$(first_report)" in
# its arguments would be read once, before the wait.
reported() {
	[[ -n $(first_report) ]]
}

pid_list() {
	local pids=() i counts
	for ((i = 0; i < N; i++)); do
		start_workload "$TMP/p$i" "$WL/deepwork" "$TMP/p$i" busy ||
			{ fail "pid_list: deepwork $i" "not ready in 10 s"; return; }
		pids+=("$WPID")
	done
	start_workload "$TMP/other" "$WL/deepwork" "$TMP/other" busy ||
		{ fail "pid_list: the process not named" "not ready in 10 s"; return; }
	other=$WPID
	start_tool plist 240 --format json -T 0 -i 1 -p "$(IFS=,; echo "${pids[*]}")"
	wait_for 60 tracing_all || { fail "pid_list: tracing" "no $N 'tracing pid' lines in 60 s"; return; }
	# Each with a filter of its own: as many probes as the first, its own
	# (a running total would say N, 2N, 3N, 4N).
	counts=$(grep -o 'tracing pid [0-9]* ([^)]*): [0-9]* probes' "$TMP/plist.err" |
		grep -o '[0-9]* probes$' | sort -u)
	expect_true "pid_list: each 'tracing pid' line counts that process's probes alone" \
		"$(paste -sd '|' <<<"$counts")" test "$(wc -l <<<"$counts")" = 1 -a "$counts" != "0 probes"
	expect_true "pid_list: the first process named has breakpoints" "none in its malloc or free" \
		test -n "$(breakpoints "${pids[0]}")"
	expect_eq "pid_list: the process not named has no breakpoint" "" "$(breakpoints "$other")"
	wait_for 90 reported || { fail "pid_list: first report" "none in 90 s"; return; }
	R=$(first_report)
	for p in "${pids[@]}"; do
		expect_whole "first report" "$R" "$p"
		expect_true "first report pid $p: its calls counted" "no allocs" \
			test "$(report_get "$(proc_of "$R" "$p")" .totals.allocs)" -gt 0
	done
	kill -USR1 "${pids[@]}"
	for ((i = 0; i < N; i++)); do
		wait_for 20 test -e "$TMP/p$i/done" || { fail "pid_list: deepwork $i" "no done file"; return; }
	done
	kill -USR1 "${pids[@]}"
	wait_tool
	expect_tool_ok plist || return
	for p in "${pids[@]}"; do
		# An exited process is in the reports up to the first after its exit.
		R=$(jq -c --argjson p "$p" 'select(.type == "report") | {processes: [.processes[] | select(.pid == $p)]}' \
			"$TMP/plist.out" | grep -v '"processes":\[\]' | tail -n 1)
		expect_whole "last report" "$R" "$p"
		expect_leak "$(proc_of "$R" "$p")" deep_leak 5000 5 5
		expect_eq "last report pid $p: deep_leak's stack, 24 frames of deep to main" \
			'[24,true]' \
			"$(report_get "$(proc_of "$R" "$p")" '[.stacks[] | select(.frames[0].function == "deep_leak") | .frames] | first | [(map(select(.function == "deep")) | length), any(.[]; .function == "main")]')"
	done
	expect_true "pid_list: the process not named is still running" "it died" alive "$other"
}

cases pid_list
finish
