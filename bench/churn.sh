#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/churn.sh: --growth as a production mode (issues 14, 43). bench/churn
# churns millions of small blocks and leaks from leak_growth(), in two
# variants: a slow leak (1 MiB a second in 64 KiB blocks) and a fast one
# (16 MiB a second in 1 KiB blocks: 16,384 blocks and 4,096 first-touch
# page faults a second). alloctrace --growth -i 1 launches it. Each round
# runs each variant, with a native churn beside the traced one, started when
# the tool says it traces, so that both see the same minutes of a shared
# machine. Per variant and round:
#   added run time: native pairs/s over traced pairs/s, minus 1, in %;
#   time to top (slow leak only): from the tool's start to the first report
#   whose `growing` list puts leak_growth first (the tool's set-up
#   included). The fast leak's 1 KiB blocks reuse chunks the churn freed,
#   and the churn's own mallocs then take the new pages from the heap's top:
#   by pages, the stack that grows is the churn's (alloctrace(8), --growth).
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
RESULTS=$TMP/churn.tsv	# round variant native_pairs_s traced_pairs_s added_pct top_s
# variant -> bench/churn's KIB_PER_S BLOCK_KIB
declare -A LEAK=([slow]="1024 64" [fast]="16384 1")
declare -A TOP_TARGET=([slow]=1 [fast]=0)
VARIANTS=(slow fast)
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

# variant_run R V: variant V of round R, the traced churn and a native one
# beside it. 0 or 1.
variant_run() {
	local r=$1 v=$2 f=$TMP/$1.$2 start native traced rc=0
	# shellcheck disable=SC2206 # two words by design
	local leak=(${LEAK[$2]})

	start=$EPOCHREALTIME
	"$TOOL" --growth -i 1 --format json -o "$f.json" -- "$B/churn" "$SECS" "${leak[@]}" \
		>"$f.traced" 2>"$f.err" &
	APID=$!
	wait_until 60 "$APID" grep -q '^alloctrace: tracing pid' "$f.err"
	"$B/churn" "$SECS" "${leak[@]}" >"$f.native" &
	NPID=$!
	wait "$APID" || rc=$?
	wait "$NPID"
	APID='' NPID=''
	native=$(pairs_per_s "$f.native")
	traced=$(pairs_per_s "$f.traced")
	if ((rc)) || [[ -z $native || -z $traced ]]; then
		echo "bench: churn round $r ($v) failed (alloctrace status $rc); see $f.err" >&2
		BENCH_KEEP=1
		return 1
	fi
	echo "$r $v $native $traced $(awk -v n="$native" -v t="$traced" \
		'BEGIN { printf "%.1f", 100 * (n / t - 1) }') $(top_time "$f.json" "$start")" \
		>>"$RESULTS"
}

# One round: each variant once. 0 or 1.
churn_round() {
	local v rc=0

	for v in "${VARIANTS[@]}"; do
		variant_run "$1" "$v" || rc=1
	done
	return $rc
}

# col VARIANT N: summary of column N of VARIANT's lines.
col() {
	awk -v v="$1" -v c="$2" '$2 == v && $c != "-" { print $c }' "$RESULTS" | summarize
}

# median1 "median min max": the median to one decimal, "-" for none.
median1() {
	awk '{ print ($1 == "-" ? "-" : sprintf("%.1f", $1)) }' <<<"$1"
}

# verdict VALUE LIMIT: PASS when VALUE <= LIMIT; a stack never on top fails.
verdict() {
	awk -v v="$1" -v l="$2" 'BEGIN { print (v == "-" ? "FAIL" : v <= l ? "PASS" : "FAIL") }'
}

# variant_label V: what variant V leaks.
variant_label() {
	case $1 in
	slow) echo "1 MiB a second in 64 KiB blocks" ;;
	fast) echo "16 MiB a second in 1 KiB blocks" ;;
	esac
}

print_results() {
	local v added top never

	echo
	echo "== 5. --growth on a churning leaker: median [min-max] of $ROUNDS rounds =="
	echo "   bench/churn $SECS: malloc/free pairs of 16 B-2 KiB over 8192 live blocks, and"
	echo "   $LEAK_FN() keeping memory; alloctrace --growth -i 1 launches it while"
	echo "   a native churn runs beside it; load average at start: $LOADAVG"
	for v in "${VARIANTS[@]}"; do
		echo "-- $v leak: $(variant_label "$v")"
		printf '%-40s %s\n' "native pairs/s" "$(fmt %.0f "$(col "$v" 3)")"
		printf '%-40s %s\n' "traced pairs/s (--growth)" "$(fmt %.0f "$(col "$v" 4)")"
		printf '%-40s %s\n' "added run time, %" "$(fmt %.1f "$(col "$v" 5)")"
		((TOP_TARGET[$v])) || continue
		printf '%-40s %s\n' "time to top growing stack, s" "$(fmt %.1f "$(col "$v" 6)")"
		never=$(awk -v v="$v" '$2 == v && $6 == "-"' "$RESULTS" | wc -l)
		((never)) && echo "   $never round(s) never put $LEAK_FN on top"
	done
	echo
	echo "== --growth targets (medians of per-round values) =="
	printf '%-44s %-8s %-8s %s\n' target value limit verdict
	for v in "${VARIANTS[@]}"; do
		added=$(median1 "$(col "$v" 5)")
		if ((TOP_TARGET[$v])); then
			top=$(median1 "$(col "$v" 6)")
			never=$(awk -v v="$v" '$2 == v && $6 == "-"' "$RESULTS" | wc -l)
			((never * 2 > ROUNDS)) && top=-
			printf '%-44s %-8s %-8s %s\n' "churn $v: $LEAK_FN top growing stack, s" \
				"$top" "<= $TOP_LIMIT" "$(verdict "$top" "$TOP_LIMIT")"
		fi
		printf '%-44s %-8s %-8s %s\n' "churn $v: added run time under --growth, %" \
			"$added" "<= $ADDED_LIMIT" "$(verdict "$added" "$ADDED_LIMIT")"
	done
}

main() {
	[[ $(id -u) == 0 ]] || die "run as root: the tracer loads BPF programs"
	[[ -x $B/churn ]] || die "$B/churn is not built (make bench-build)"
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	freeze_tool
	run_rounds churn
}

main "$@"
