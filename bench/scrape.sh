#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/scrape.sh: how fast the metrics endpoint answers while the loader
# is busy. A --leak-check of a 256 MB heap every second keeps the main loop
# in scans and reports; the endpoint's own threads answer scrapes meanwhile
# (the old in-loop server: p99 0.96 s, max 2.05 s). Per round: 15 s of
# scrapes every 0.1 s, their slowest and p99 latency. The integration test
# (tests/integration/test_metrics_scan.sh) asserts that every scrape is
# answered; how fast is measured here, not in a timed test.
# Run by bench/run.sh (`make bench`), or alone: `make bench-scrape`.
#
# Environment: BENCH_QUICK=1 (2 rounds instead of 3), BENCH_KEEP=1, ALLOCTRACE.
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
BIGHEAP=$ROOT/build/workloads/bigheap
LOAD=$ROOT/tests/drivers/httpload.py
B=$ROOT/bench/build
TMP=$(mktemp -d /tmp/alloctrace-scrape.XXXXXX)
RESULTS=$TMP/scrape.tsv	# round scrapes ok max_ms p99_ms scans
ROUNDS=3
[[ ${BENCH_QUICK:-0} == 1 ]] && ROUNDS=2
MAX_LIMIT=1000	# ms
P99_LIMIT=500	# ms

cleanup() {
	[[ -n ${APID:-} ]] && kill -INT "$APID" 2>/dev/null && wait "$APID"
	[[ -n ${HOLD:-} ]] && kill "$HOLD" 2>/dev/null
	drop_scratch
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# One round: bigheap held until the tool traces it, then 15 s of scrapes.
scrape_round() {
	local r=$1 port got scans

	port=$(free_port) || die "no free port for --listen"
	mkfifo "$TMP/$r.in"
	sleep 120 >"$TMP/$r.in" &
	HOLD=$!
	"$BIGHEAP" 256 60 <"$TMP/$r.in" >"$TMP/$r.ticks" &
	"$TOOL" --leak-check -T 0 --format json -i 1 --listen "127.0.0.1:$port" -p $! \
		>"$TMP/$r.json" 2>"$TMP/$r.err" &
	APID=$!
	wait_until 60 "$APID" grep -q '^alloctrace: tracing pid' "$TMP/$r.err"
	echo go >"$TMP/$r.in"
	wait_until 150 "$APID" grep -q '^tick 1$' "$TMP/$r.ticks"
	got=$(python3 "$LOAD" scrape "http://127.0.0.1:$port/metrics" 15 0.1 2>/dev/null)
	kill -INT "$APID" 2>/dev/null
	wait "$APID"
	kill "$HOLD" 2>/dev/null
	APID='' HOLD=''
	scans=$(jq -c 'select(.type == "report") | .leak_check.bytes_scanned // empty' \
		"$TMP/$r.json" 2>/dev/null | wc -l)
	# "scrapes N ok N max_ms N p99_ms N"
	read -r _ made _ good _ max _ p99 <<<"$got"
	if [[ -z ${p99:-} ]] || ((scans < 3)); then
		echo "bench: scrape round $r failed ($scans scans); see $TMP/$r.err" >&2
		BENCH_KEEP=1
		return 1
	fi
	echo "$r $made $good $max $p99 $scans" >>"$RESULTS"
}

col() {
	awk -v c="$1" '{ print $c }' "$RESULTS" | summarize
}

verdict() {
	awk -v v="$1" -v l="$2" 'BEGIN { print (v == "-" ? "FAIL" : v < l ? "PASS" : "FAIL") }'
}

print_results() {
	local max p99

	echo
	echo "== /metrics during --leak-check scans of 256 MB: median [min-max] of $ROUNDS rounds =="
	echo "   15 s of scrapes every 0.1 s; load average at start: $LOADAVG"
	printf '%-40s %s\n' "scrapes answered / made" "$(fmt %.0f "$(col 3)") / $(fmt %.0f "$(col 2)")"
	printf '%-40s %s\n' "slowest scrape, ms" "$(fmt %.0f "$(col 4)")"
	printf '%-40s %s\n' "p99 scrape, ms" "$(fmt %.0f "$(col 5)")"
	printf '%-40s %s\n' "reports with a scan" "$(fmt %.0f "$(col 6)")"
	max=$(col 4 | awk '{ printf "%.0f", $1 }')
	p99=$(col 5 | awk '{ printf "%.0f", $1 }')
	echo
	printf '%-44s %-8s %-8s %s\n' target value limit verdict
	printf '%-44s %-8s %-8s %s\n' "scrape during scans: slowest, ms" "$max" "< $MAX_LIMIT" \
		"$(verdict "$max" "$MAX_LIMIT")"
	printf '%-44s %-8s %-8s %s\n' "scrape during scans: p99, ms" "$p99" "< $P99_LIMIT" \
		"$(verdict "$p99" "$P99_LIMIT")"
}

main() {
	[[ $(id -u) == 0 ]] || die "run as root: the tracer loads BPF programs"
	[[ -x $BIGHEAP ]] || die "$BIGHEAP is not built (make tests)"
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	freeze_tool
	run_rounds scrape
}

main "$@"
