#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/forks.sh: fork churn, a process per request (issue 23, item 8:
# pgbench -C under --comm postgres). alloctrace --comm forks-traced -i 5
# traces bench/forks's traced copy while a native copy runs beside it, both
# started together once the tool traces the parent. Per round: children a
# second of each and their ratio; the final report's lost_stats and
# stacks_cut, the processes it counts; alloctrace's RSS, sampled every 5 s:
# the highest of the second half against the first's (flat: it holds no
# exited process; between reports it swings with what the children hold).
# Run by bench/run.sh (`make bench`), or alone: `make bench-forks`.
#
# Environment: BENCH_QUICK=1 (1 round instead of 3), BENCH_FORKS_ROUNDS,
# BENCH_FORKS_SECS (seconds a run, default 60; the issue's 5 minutes: 300),
# BENCH_KEEP=1, ALLOCTRACE.
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
B=$ROOT/bench/build
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
TMP=$(mktemp -d /tmp/alloctrace-forks.XXXXXX)
RESULTS=$TMP/forks.tsv # round native/s traced/s ratio lost cut processes rss_1st rss_2nd
if [[ ${BENCH_QUICK:-0} == 1 ]]; then
	ROUNDS=${BENCH_FORKS_ROUNDS:-1}
else
	ROUNDS=${BENCH_FORKS_ROUNDS:-3}
fi
SECS=${BENCH_FORKS_SECS:-60}
RATIO_LIMIT=0.7
RSS_LIMIT=8 # MiB, the second half's peak RSS over the first's

cleanup() {
	local pid
	for pid in ${TPID:-} ${NPID:-}; do
		kill -USR1 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[[ -n ${APID:-} ]] && kill -INT "$APID" 2>/dev/null && wait "$APID"
	drop_scratch
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# per_s FILE: bench/forks's "children N seconds S" as children a second.
per_s() {
	awk '$1 == "children" && $4 > 0 { printf "%.1f", $2 / $4 }' "$1"
}

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# One round; 0 or 1.
forks_round() {
	local r=$1 rc=0 native traced final rss
	rss=$TMP/$r.rss

	"$TOOL" -v --comm forks-traced -i 5 -T 0 --top-processes 0 --format json \
		-o "$TMP/$r.json" 2>"$TMP/$r.err" &
	APID=$!
	wait_until 90 "$APID" grep -q 'tracing every process' "$TMP/$r.err" ||
		{ echo "bench: forks round $r: alloctrace did not start" >&2; return 1; }
	"$B/forks-traced" "$SECS" >"$TMP/$r.traced" &
	TPID=$!
	"$B/forks-native" "$SECS" >"$TMP/$r.native" &
	NPID=$!
	# The parent's tables first: children forked before would inherit none.
	wait_until 90 "$APID" grep -q "tracing pid $TPID " "$TMP/$r.err" ||
		{ echo "bench: forks round $r: pid $TPID not traced in 90 s" >&2; return 1; }
	kill -USR1 "$TPID" "$NPID"
	: >"$rss"
	while kill -0 "$TPID" 2>/dev/null; do
		echo "$SECONDS $(rss_kib "$APID")" >>"$rss"
		sleep 5
	done
	wait "$TPID" "$NPID"
	TPID='' NPID=''
	sleep 6 # the last children's report
	kill -INT "$APID"
	wait "$APID" || rc=$?
	APID=''
	native=$(per_s "$TMP/$r.native")
	traced=$(per_s "$TMP/$r.traced")
	final=$(jq -sc 'map(select(.type == "report")) | last |
		[.counters.lost_stats, .counters.stacks_cut,
		 .processes_exited.processes + (.processes | length)] | join(" ")' "$TMP/$r.json")
	if ((rc)) || [[ -z $native || -z $traced || -z $final ]]; then
		echo "bench: forks round $r failed (alloctrace status $rc); see $TMP/$r.err" >&2
		export BENCH_KEEP=1
		return 1
	fi
	echo "$r $native $traced $(awk -v n="$native" -v t="$traced" 'BEGIN { printf "%.2f", t / n }') \
${final//\"/} $(awk -v n="$(wc -l <"$rss")" '{ h = NR <= n / 2 ? 1 : 2; if ($2 > m[h]) m[h] = $2 }
			END { printf "%.1f %.1f", m[1] / 1024, m[2] / 1024 }' "$rss")" \
		>>"$RESULTS"
}

col() {
	awk -v c="$1" '{ print $c }' "$RESULTS" | summarize
}

print_results() {
	local ratio lost grow

	ratio=$(col 4 | cut -d' ' -f1)
	lost=$(awk '{ s += $5 } END { print s + 0 }' "$RESULTS")
	grow=$(awk '{ g = $9 - $8; if (g > m) m = g } END { printf "%.1f", m }' "$RESULTS")
	echo
	echo "== 6. fork churn under --comm: median [min-max] of $ROUNDS rounds =="
	echo "   bench/forks $SECS: 4 children at a time, each 100 malloc/free pairs and 2,100 bytes"
	echo "   leaked six calls deep; alloctrace -v --comm forks-traced -i 5 traces one copy while a"
	echo "   native copy runs beside it; load average at start: $LOADAVG"
	printf '%-44s %s\n' "native children/s" "$(fmt %.1f "$(col 2)")"
	printf '%-44s %s\n' "traced children/s" "$(fmt %.1f "$(col 3)")"
	printf '%-44s %s\n' "traced/native" "$(fmt %.2f "$(col 4)")"
	printf '%-44s %s\n' "stacks_cut, final report" "$(fmt %.0f "$(col 6)")"
	printf '%-44s %s\n' "processes counted, final report" "$(fmt %.0f "$(col 7)")"
	printf '%-44s %s\n' "alloctrace peak RSS, first half, MiB" "$(fmt %.1f "$(col 8)")"
	printf '%-44s %s\n' "alloctrace peak RSS, second half, MiB" "$(fmt %.1f "$(col 9)")"
	echo
	echo "== fork churn targets =="
	printf '%-44s %-8s %-8s %s\n' target value limit verdict
	printf '%-44s %-8s %-8s %s\n' "forks: traced/native (median)" "$ratio" ">= $RATIO_LIMIT" \
		"$(awk -v v="$ratio" -v l="$RATIO_LIMIT" 'BEGIN { print (v >= l ? "PASS" : "FAIL") }')"
	printf '%-44s %-8s %-8s %s\n' "forks: lost_stats, all rounds" "$lost" "0" \
		"$( ((lost == 0)) && echo PASS || echo FAIL)"
	printf '%-44s %-8s %-8s %s\n' "forks: peak RSS, 2nd half - 1st, MiB (max)" "$grow" \
		"<= $RSS_LIMIT" "$(awk -v v="$grow" -v l="$RSS_LIMIT" 'BEGIN { print (v <= l ? "PASS" : "FAIL") }')"
}

main() {
	[[ $(id -u) == 0 ]] || die "run as root: the tracer loads BPF programs"
	[[ -x $B/forks-traced && -x $B/forks-native ]] || die "$B/forks-* are not built (make bench-build)"
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	run_rounds forks
}

main "$@"
