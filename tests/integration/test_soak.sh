#!/bin/bash
# Soak: tests/workloads/soak.c churns allocations from 4 threads, starts a
# short-lived thread every 100 ms and leaks one 1000-byte block every
# 100 ms, for SOAK_SECONDS (default 60), launched under -i 5. Every report
# holds exactly as many leaked blocks as the workload's log allows at its
# time and never fewer than before, and no stack outside the known ones
# holds memory; the final report has every leaked block and is complete;
# the loader's resident memory stays flat. The figures go to the output as
# '# ' lines (docs/reliability.md has those of a 10-minute run).
# test: serial (the loader's memory and CPU over a minute: a measurement)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/soak"

SECS=${SOAK_SECONDS:-60}
INTERVAL=5
LEAK_SIZE=1000
CHURN_BLOCKS=$((4 * 64)) # soak.c's CHURN_THREADS * WINDOW
# How much the loader's RSS may grow after its first report.
RSS_SLACK_KB=4096
DIR=$TMP/soak
OUT=$TMP/soak.stamped
SAMPLES=$TMP/soak.samples
mkdir -p "$DIR"

# Each line of the tool's output, prefixed with the time it was read: a
# report was taken before that.
stamp() {
	local line
	while IFS= read -r line; do
		printf '%s %s\n' "$EPOCHREALTIME" "$line"
	done
}

# sample PID: every second until it exits, "TIME RSS_KB HWM_KB CPU_TICKS".
sample() {
	local status stat
	while status=$(cat "/proc/$1/status" 2>/dev/null) && stat=$(cat "/proc/$1/stat" 2>/dev/null); do
		printf '%s %s %s %s\n' "$EPOCHREALTIME" \
			"$(awk '$1 == "VmRSS:" { print $2 }' <<<"$status")" \
			"$(awk '$1 == "VmHWM:" { print $2 }' <<<"$status")" \
			"$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' <<<"$stat")"
		sleep 1
	done
}

run_soak() {
	local loader
	mkfifo "$TMP/soak.fifo"
	stamp <"$TMP/soak.fifo" >"$OUT" &
	local stamper=$!
	timeout --foreground -k 30 $((SECS + 120)) "$TOOL" --format json -T 0 -i "$INTERVAL" \
		-- "$WL/soak" "$DIR" "$SECS" >"$TMP/soak.fifo" 2>"$TMP/soak.err" &
	TOOL_PID=$!
	TOOL_PIDS+=("$TOOL_PID")
	wait_tracing soak 30 || { fail "soak: tracing" "no 'tracing pid' line in 30 s"; return 1; }
	loader=$(loader_pid)
	sample "$loader" >"$SAMPLES"
	wait_tool
	wait "$stamper"
	sed 's/^[^ ]* //' "$OUT" >"$TMP/soak.out"
	expect_tool_ok soak
}

# Per report: "TIME ARRIVAL FINAL BLOCKS BYTES ALLOCS", the leak's numbers.
leak_numbers() {
	jq -r --argjson t "$1" 'select(.type == "report")
		| [$t, .time, .final,
		   ([.stacks[] | select(.frames[0].function == "leak_slowly")] as $l
		    | ($l | map(.outstanding_allocs) | add // 0), ($l | map(.outstanding_bytes) | add // 0),
		      ($l | map(.allocs) | add // 0))] | @tsv'
}

# The reports' leak numbers, each with how many blocks the workload had
# surely leaked at its time (END before it) and at most could have leaked
# when it was read (BEGIN before its arrival): "LOW COUNT HIGH BYTES ALLOCS".
bounded() {
	local arrival json
	while read -r arrival json; do
		leak_numbers "$arrival" <<<"$json"
	done <"$OUT" | while read -r arrival time _ blocks bytes allocs; do
		awk -v t="$time" -v a="$arrival" -v c="$blocks" -v b="$bytes" -v n="$allocs" '
			$1 ~ /^[0-9]+$/ { low += $3 < t; high += $2 < a }
			END { print low, c, high, b, n }' "$DIR/progress"
	done
}

check_reports() {
	local rows periodic bad
	rows=$(bounded)
	echo "# soak: leaked blocks per report (leaked by its time <= counted <= leaked by its reading):" \
		"$(awk '{ printf "%s%d<=%d<=%d", (NR > 1 ? ", " : ""), $1, $2, $3 }' <<<"$rows")"
	periodic=$(count_lines "$TMP/soak.out" '.type == "report" and .final == false')
	expect_true "soak: a report every ${INTERVAL} s" "$periodic periodic reports in $SECS s" \
		test "$periodic" -ge $((SECS / INTERVAL - 1))
	bad=$(awk '$2 < $1 || $2 > $3' <<<"$rows")
	expect_eq "soak: each report holds the blocks leaked by its time (low count high)" "" "$bad"
	bad=$(awk -v s="$LEAK_SIZE" '$4 != $2 * s || $5 != $2' <<<"$rows")
	expect_eq "soak: leaked blocks are never freed, $LEAK_SIZE bytes each" "" "$bad"
	bad=$(awk 'NR > 1 && $2 < last { print } { last = $2 }' <<<"$rows")
	expect_eq "soak: the leak never shrinks" "" "$bad"
	# Known stacks: the leak, the churn windows, the short-lived threads,
	# and glibc's thread-local storage for the threads it keeps.
	bad=$(jq -c 'select(.type == "report") | .stacks[]
		| select([.frames[].function] | any(. == "leak_slowly" or . == "churn_step"
			or . == "short_lived" or . == "allocate_dtv") | not)
		| {outstanding_bytes, frames: [.frames[].function]}' "$TMP/soak.out" | head -n 3)
	expect_eq "soak: no stack outside the known ones holds memory" "" "$bad"
	# Per stack: a report reads its stacks one after another, not as one
	# snapshot, so a block that moves from one churn stack to another
	# during the read can count in both, and their sum can pass the
	# windows' size.
	bad=$(jq -c --argjson max "$CHURN_BLOCKS" 'select(.type == "report") | .stacks[]
		| select(.frames[0].function == "churn_step" and .outstanding_allocs > $max)
		| .outstanding_allocs' "$TMP/soak.out" | head -n 3)
	expect_eq "soak: no churn stack holds more than the windows ($CHURN_BLOCKS blocks)" "" "$bad"
	echo "# soak: the churn stacks together held at most" "$(jq -s '[.[] | select(.type == "report")
		| [.stacks[] | select(.frames[0].function == "churn_step") | .outstanding_allocs]
		| add // 0] | max' "$TMP/soak.out") blocks in a report"
}

check_final() {
	local r leaked churn
	r=$(final_report "$TMP/soak.out")
	leaked=$(awk '$1 == "done" { print $2 }' "$DIR/progress")
	churn=$(awk '$1 == "churn" { print $2 }' "$DIR/progress")
	[[ -n "$leaked" ]] || { fail "soak: workload" "no 'done' line in its progress"; return; }
	expect_leak "$r" leak_slowly $((leaked * LEAK_SIZE)) "$leaked" "$leaked"
	expect_eq "soak: after the exit, only the leak and glibc's thread storage" "" \
		"$(jq -c '.stacks[] | select(.frames[0].function != "leak_slowly"
			and all(.frames[]; .function != "allocate_dtv")) | [.frames[].function]' <<<"$r")"
	expect_eq "soak: complete" true "$(report_get "$r" .complete)"
	expect_eq "soak: exit" '{"status":0,"signal":null}' "$(report_get "$r" '.exit | {status, signal}')"
	expect_true "soak: every churn call counted" \
		"$(report_get "$r" .totals.allocs) allocs for $churn churn calls and $leaked leaks" \
		test "$(report_get "$r" .totals.allocs)" -ge $((churn + leaked * 101))
	echo "# soak: $SECS s, $(report_get "$r" .totals.allocs) allocs and $(report_get "$r" .totals.frees) frees traced" \
		"($(( $(report_get "$r" .totals.allocs) / SECS ))/s), $leaked blocks leaked," \
		"$(count_lines "$TMP/soak.out" '.type == "report"') reports"
}

# RSS after the first report (symbols loaded, buffers grown) against the
# last sample; the loader's CPU time over the run.
check_rss() {
	local first base last peak cpu hz
	first=$(grep -m1 '"type":"report"' "$OUT" | cut -d' ' -f1)
	base=$(awk -v f="$first" '$1 >= f { print $2; exit }' "$SAMPLES")
	last=$(awk 'END { print $2 }' "$SAMPLES")
	peak=$(awk 'END { print $3 }' "$SAMPLES")
	cpu=$(awk 'END { print $4 }' "$SAMPLES")
	hz=$(getconf CLK_TCK)
	if [[ -z "$base" || -z "$last" ]]; then
		fail "soak: loader RSS" "no samples after the first report"
		return
	fi
	expect_true "soak: loader RSS flat (within $RSS_SLACK_KB KiB of the first report's)" \
		"$base KiB after the first report, $last KiB at the end" \
		test $((last - base)) -le "$RSS_SLACK_KB"
	echo "# soak: loader RSS $base KiB after the first report, $last KiB at the end, peak $peak KiB;" \
		"CPU $((cpu / hz)).$(printf '%02d' $((cpu % hz * 100 / hz))) s"
	awk -v s="$(head -n 1 "$SAMPLES" | cut -d' ' -f1)" \
		'NR % 60 == 1 { printf "# soak: t=%ds RSS %d KiB CPU %d ticks\n", $1 - s, $2, $4 }' "$SAMPLES"
}

if run_soak; then
	check_reports
	check_final
	check_rss
fi
finish
