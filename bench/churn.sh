#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/churn.sh: --growth as a production mode (issue 14). bench/churn
# churns millions of small blocks and leaks 1 MiB a second from
# leak_growth(); alloctrace --growth -i 1 launches it. Each round runs a
# native churn beside the traced one, started when the tool says it traces,
# so that both see the same minutes of a shared machine. Per round:
#   added run time: native pairs/s over traced pairs/s, minus 1, in %;
#   time to top: from the tool's start to the first report whose `growing`
#   list puts leak_growth first (the tool's set-up included).
# Run by bench/run.sh (`make bench`), or alone: `make bench-growth`.
#
# Environment: BENCH_QUICK=1 (3 rounds instead of 5), BENCH_CHURN_ROUNDS,
# BENCH_CHURN_SECS (seconds a run, default 15), BENCH_KEEP=1, ALLOCTRACE.
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
B=$ROOT/bench/build
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
TMP=$(mktemp -d /tmp/alloctrace-churn.XXXXXX)
RESULTS=$TMP/churn.tsv	# round native_pairs_s traced_pairs_s added_pct top_s
if [[ ${BENCH_QUICK:-0} == 1 ]]; then
	ROUNDS=${BENCH_CHURN_ROUNDS:-3}
else
	ROUNDS=${BENCH_CHURN_ROUNDS:-5}
fi
SECS=${BENCH_CHURN_SECS:-15}
LEAK_FN=leak_growth
TOP_LIMIT=10	# seconds
ADDED_LIMIT=5	# percent

cleanup() {
	[[ -n ${APID:-} ]] && kill -INT "$APID" 2>/dev/null && wait "$APID"
	[[ -n ${NPID:-} ]] && kill "$NPID" 2>/dev/null && wait "$NPID"
	drop_scratch
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# pairs_per_s FILE: bench/churn's "pairs N seconds S" as pairs a second.
pairs_per_s() {
	awk '$1 == "pairs" && $4 > 0 { printf "%.0f", $2 / $4 }' "$1"
}

# top_time JSON START: seconds from START to the first report whose top
# growing stack goes through LEAK_FN; "-" if none did.
top_time() {
	jq -r --arg f "$LEAK_FN" --argjson t0 "$2" 'select(.type == "report"
		and ([.growing[0].frames[]?.function] | index($f)))
		| .time - $t0' "$1" 2>/dev/null | head -n 1 | awk '{ printf "%.1f", $1 } END { if (!NR) print "-" }'
}

# One round: the traced churn and a native one beside it. 0 or 1.
churn_round() {
	local r=$1 start native traced rc=0

	start=$EPOCHREALTIME
	"$TOOL" --growth -i 1 --format json -o "$TMP/$r.json" -- "$B/churn" "$SECS" \
		>"$TMP/$r.traced" 2>"$TMP/$r.err" &
	APID=$!
	wait_until 60 "$APID" grep -q '^alloctrace: tracing pid' "$TMP/$r.err"
	"$B/churn" "$SECS" >"$TMP/$r.native" &
	NPID=$!
	wait "$APID" || rc=$?
	wait "$NPID"
	APID='' NPID=''
	native=$(pairs_per_s "$TMP/$r.native")
	traced=$(pairs_per_s "$TMP/$r.traced")
	if ((rc)) || [[ -z $native || -z $traced ]]; then
		echo "bench: churn round $r failed (alloctrace status $rc); see $TMP/$r.err" >&2
		BENCH_KEEP=1
		return 1
	fi
	echo "$r $native $traced $(awk -v n="$native" -v t="$traced" \
		'BEGIN { printf "%.1f", 100 * (n / t - 1) }') $(top_time "$TMP/$r.json" "$start")" \
		>>"$RESULTS"
}

col() {
	awk -v c="$1" '$c != "-" { print $c }' "$RESULTS" | summarize
}

# median1 "median min max": the median to one decimal, "-" for none.
median1() {
	awk '{ print ($1 == "-" ? "-" : sprintf("%.1f", $1)) }' <<<"$1"
}

# verdict VALUE LIMIT: PASS when VALUE <= LIMIT; a stack never on top fails.
verdict() {
	awk -v v="$1" -v l="$2" 'BEGIN { print (v == "-" ? "FAIL" : v <= l ? "PASS" : "FAIL") }'
}

print_results() {
	local added top never

	added=$(col 4)
	top=$(col 5)
	never=$(awk '$5 == "-"' "$RESULTS" | wc -l)
	echo
	echo "== 5. --growth on a churning leaker: median [min-max] of $ROUNDS rounds =="
	echo "   bench/churn $SECS: malloc/free pairs of 16 B-2 KiB over 8192 live blocks, and"
	echo "   $LEAK_FN() keeping 1 MiB a second; alloctrace --growth -i 1 launches it while"
	echo "   a native churn runs beside it; load average at start: $LOADAVG"
	printf '%-40s %s\n' "native pairs/s" "$(fmt %.0f "$(col 2)")"
	printf '%-40s %s\n' "traced pairs/s (--growth)" "$(fmt %.0f "$(col 3)")"
	printf '%-40s %s\n' "added run time, %" "$(fmt %.1f "$added")"
	printf '%-40s %s\n' "time to top growing stack, s" "$(fmt %.1f "$top")"
	((never)) && echo "   $never round(s) never put $LEAK_FN on top"
	echo
	echo "== --growth targets (medians of per-round values) =="
	printf '%-44s %-8s %-8s %s\n' target value limit verdict
	added=$(median1 "$added")
	top=$(median1 "$top")
	((never * 2 > ROUNDS)) && top=-
	printf '%-44s %-8s %-8s %s\n' "churn: $LEAK_FN top growing stack, s" "$top" \
		"<= $TOP_LIMIT" "$(verdict "$top" "$TOP_LIMIT")"
	printf '%-44s %-8s %-8s %s\n' "churn: added run time under --growth, %" "$added" \
		"<= $ADDED_LIMIT" "$(verdict "$added" "$ADDED_LIMIT")"
}

main() {
	[[ $(id -u) == 0 ]] || die "run as root: the tracer loads BPF programs"
	[[ -x $B/churn ]] || die "$B/churn is not built (make bench-build)"
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	freeze_tool
	run_rounds churn
}

main "$@"
