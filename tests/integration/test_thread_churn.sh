#!/bin/bash
# Threads made one after another (tests/workloads/threadchurn.c) cost what
# their ptrace stops cost, and no stop is left unanswered: 100 threads
# made and joined under `-- CMD`, `--leak-check -- CMD` and
# `--follow-forks -- sh -c 'CMD; CMD'` (a child that makes threads and
# forks again) each finish within 30 s (a functional bound: natively
# 0.01 s) with their leaks counted exactly; a --follow-forks child's
# threads are never left stopped; and alloctrace killed (SIGKILL) at
# random moments while its command and a child make threads and fork
# leaves every thread running, the command ending as it would have,
# nothing attached.
# KILL_TRIALS sets the number of SIGKILL trials (20 by default).
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/threadchurn"
CHURN=$WL/threadchurn
TRIALS=${KILL_TRIALS:-20}

# expect_churn NAME REPORT: a threadchurn 100's process: 10 of 72 bytes
# kept (every tenth thread's), 10 allocated there in all.
expect_churn() {
	expect_eq "$1: churn_leak outstanding_bytes" 720 "$(fn_sum "$2" outstanding_bytes churn_leak)"
	expect_eq "$1: churn_leak outstanding_allocs" 10 "$(fn_sum "$2" outstanding_allocs churn_leak)"
	expect_eq "$1: churn_leak allocs" 10 "$(fn_sum "$2" allocs churn_leak)"
	expect_eq "$1: churn_pair holds nothing" 0 "$(fn_stacks "$2" churn_pair)"
}

# report NAME: the run NAME ended well, its command said "done N" (each
# line of $2), and its final report (-o $TMP/NAME.json) is in R.
report() {
	R=$(final_report "$TMP/$1.json")
	expect_eq "$1: exit status" 0 "$RC"
	expect_eq "$1: the command's output" "$2" "$(cat "$TMP/$1.out")"
	expect_true "$1: a final report" "$(head -c 300 "$TMP/$1.err")" test -n "$R"
}

launched() {
	run_tool churn 30 --format json -T 0 -o "$TMP/churn.json" -- "$CHURN" 100
	report churn "done 100" && expect_churn "-- CMD" "$R"
}

leak_check() {
	run_tool lc 30 --leak-check --format json -T 0 -o "$TMP/lc.json" -- "$CHURN" 100
	report lc "done 100" || return
	expect_churn "--leak-check -- CMD" "$R"
	expect_eq "--leak-check -- CMD: the kept blocks reachable" 720 \
		"$(fn_sum "$R" reachable_bytes churn_leak)"
}

# sh, two threadchurn and the child the first one forks: the three churn
# 100 threads each, all exit 0.
follow_forks() {
	local p n=0
	run_tool ff 30 --follow-forks --format json -T 0 -o "$TMP/ff.json" -- \
		sh -c "$CHURN 100 100; $CHURN 100"
	report ff "done 100
done 100" || return
	# Each process as the last report that has it says (one that ended is
	# left out of the reports after the first one since its end).
	jq -c 'select(.type == "report") | .processes[]' "$TMP/ff.json" |
		jq -s -c 'group_by(.pid)[] | last' >"$TMP/ff.procs"
	expect_eq "--follow-forks: four processes, each exited 0" "0 0 0 0" \
		"$(jq -r '.exit.status' "$TMP/ff.procs" | xargs)"
	while read -r p; do
		expect_churn "--follow-forks: process $((++n))" "$p"
	done < <(jq -c 'select(.comm == "threadchurn")' "$TMP/ff.procs")
	expect_eq "--follow-forks: three processes churned" 3 "$n"
}

# The threads but the first of every process running COMM, "tid state"
# a line, for those stopped (t or T).
stopped_threads() {
	local pid f line
	for pid in $(pgrep -x "$1"); do
		for f in /proc/"$pid"/task/*/stat; do
			[[ ${f%/stat} == */task/"$pid" ]] && continue
			read -r line 2>/dev/null <"$f" || continue
			line=${line##*) }
			[[ $line == [tT]* ]] && echo "${f%/stat} ${line%% *}"
		done
	done
}

# A --follow-forks child's threads, looked at every 0.2 s while they are
# made: none seen stopped at every look for STUCK_SECS. A stop may wait
# while the loop does other work for a moment (a new program's unwind
# tables, under TCG a second or more); one never answered stays for good.
# The run's bound is functional, not a timing: 3,000 threads take 2 s here
# and 16-20 s in a quiet 6.1 guest under TCG, past 60 s beside the other
# guests of a CI run.
STUCK_SECS=5
never_stopped() {
	local t stuck= deadline=$((SECONDS + 240))
	local -A looks=()
	start_tool nostop 240 --follow-forks -- sh -c "$CHURN 1000 1000; $CHURN 1000"
	while alive "$TOOL_PID" && ((SECONDS < deadline)) && [[ -z $stuck ]]; do
		local -A now=()
		for t in $(stopped_threads threadchurn | cut -d' ' -f1); do
			now[$t]=$((${looks[$t]:-0} + 1))
			((now[$t] * 2 >= STUCK_SECS * 10)) && stuck=$t
		done
		looks=()
		for t in "${!now[@]}"; do
			looks[$t]=${now[$t]}
		done
		unset now
		sleep 0.2
	done
	wait_tool
	expect_eq "--follow-forks: no child's thread left stopped" "" "$stuck"
	expect_eq "--follow-forks: exit status" 0 "$RC"
	expect_eq "--follow-forks: each command ran to its end" 2 \
		"$(grep -c '^done 1000$' "$TMP/nostop.out")"
}

# Process $1 holds no probe. Perf-event uprobes (6.1) leave their
# breakpoints in a child forked while they were on until its first hit
# of each: looked at again for a while.
no_probes() {
	[[ -z $(uprobe_links "$1") ]]
}

# attached N: why a process of the workload (its command line names
# "$CHURN N") is still attached to, or nothing.
attached() {
	local pid tracer
	for pid in $(pgrep -f "$CHURN $1 "); do
		tracer=$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[[ ${tracer:-0} == 0 ]] || { echo "process $pid traced by $tracer"; return; }
		wait_for 10 no_probes "$pid" || { echo "probes left on process $pid"; return; }
	done
}

ended() {
	[[ -z $(pgrep -f "$CHURN $1 ") ]]
}

# harmed N OUT WANT: why the workload of a killed run is harmed, or
# nothing. It must be left unattached, end by itself (none of its threads
# left stopped) and OUT say WANT, what it says when it ran to its end; or
# nothing at all when it never started (alloctrace died before its exec).
harmed() {
	local n=$1 out=$2 want=$3 why
	why=$(attached "$n")
	[[ -z $why ]] || { echo "$why"; return; }
	wait_for 30 ended "$n" ||
		{ echo "still running after 30 s, stopped: $(stopped_threads threadchurn | xargs)"; return; }
	[[ ! -s $out || $(xargs <"$out") == "$want" ]] || echo "its output: $(xargs <"$out")"
}

# Trial I: alloctrace killed 0-300 ms after its start (the launch and the
# loader) on trials 0 and 1 of every 4, after it traces (the churn) on
# the others; its command, on odd trials, threadchurn itself with
# --leak-check (checks every 0.1 s: interrupts), on even ones sh running
# threadchurn, both with --follow-forks: their children make threads too.
kill_trial() {
	local i=$1 n=$((2000 + $1)) ms=$((RANDOM % 300)) out want after=start
	if ((i % 2)); then
		out=$TMP/kill$i.out want="done $n"
		start_tool "kill$i" 60 --follow-forks --leak-check -i 0.1 -o "$TMP/kill$i.txt" -- \
			"$CHURN" "$n" "$n"
	else
		out=$TMP/kill$i.cmd want="done $n rc=0"
		start_tool "kill$i" 60 --follow-forks -- sh -c "$CHURN $n $n >$out; echo rc=\$? >>$out"
	fi
	if ((i % 4 >= 2)); then
		after=tracing
		wait_tracing "kill$i" 30 || { fail "kill $i: tracing" "no 'tracing pid' line"; return; }
	fi
	sleep "$(printf '0.%03d' "$ms")"
	kill -KILL "$(loader_pid)" 2>/dev/null
	# Not said: bash's line for a job killed, timeout(1) dying as its child did.
	{ wait_tool; } 2>/dev/null
	expect_eq "SIGKILL $i, $ms ms after its $after: the workload unharmed" "" \
		"$(harmed "$n" "$out" "$want")"
}

killed() {
	for ((i = 0; i < TRIALS; i++)); do
		kill_trial "$i"
	done
}

cases launched leak_check follow_forks never_stopped killed
finish
