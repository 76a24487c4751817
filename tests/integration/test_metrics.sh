#!/bin/bash
# --listen against a real Prometheus: a private server (its own config and
# storage in $TMP) scrapes alloctrace every second while tests/workloads/leaks
# holds its leaks; what Prometheus stored must equal the report's numbers
# exactly: outstanding bytes and blocks of the process, each top stack by
# its innermost function, the rest as "other", at most --top + 1 stack
# series. Then the server's edges: 404, 405, HEAD, a request too long, and
# a client that sends nothing, which must not stop the scrapes.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
command -v prometheus >/dev/null ||
	{ fail "prerequisites" "prometheus is not installed (make deps)"; finish; }

PORT=$(free_port)
PROM_PORT=$(free_port)
[[ $PROM_PORT != "$PORT" ]] || PROM_PORT=$((PORT + 1))
cat >"$TMP/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: alloctrace
    static_configs:
      - targets: ['127.0.0.1:$PORT']
CONF
timeout -k 5 300 prometheus --config.file="$TMP/prometheus.yml" \
	--storage.tsdb.path="$TMP/prom-data" --web.listen-address="127.0.0.1:$PROM_PORT" \
	>"$TMP/prometheus.log" 2>&1 &
PROM=$!
# timeout(1) passes SIGTERM on to prometheus; the SIGKILL of cleanup would not.
trap 'kill -TERM "$PROM" 2>/dev/null; wait "$PROM" 2>/dev/null; cleanup' EXIT
API=http://127.0.0.1:$PROM_PORT/api/v1

# query PROMQL: the value of the one series the query gives, or "none".
query() {
	curl -sf --max-time 5 --data-urlencode "query=$1" "$API/query" |
		jq -r 'if (.data.result | length) == 1 then .data.result[0].value[1] else "none" end'
}

# 5 stacks per process: fewer than leaks has, so that some go to "other".
# The workload holds its leaks until cleanup kills it, and the limits are
# generous: in QEMU without KVM on a loaded host the queries below took
# over a minute, and a workload that lived 40 s ended before them.
start_tool metrics 300 --format json -i 1 -T 5 --listen "127.0.0.1:$PORT" -o "$TMP/reports.json" \
	-- "$WL/leaks" 0 86400
wait_tracing metrics 30 || { fail "tracing" "no 'tracing pid' line in 30 s"; finish; }
PID=$TRACED
track "$PID"
wait_for 30 curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$PROM_PORT/-/ready" ||
	{ fail "prometheus" "not ready in 30 s: $(tail -n 3 "$TMP/prometheus.log")"; finish; }

# The leaks are all made at once: the numbers hold still from the second report on.
L="pid=\"$PID\",comm=\"leaks\""
scraped() {
	local n
	n=$(query "count_over_time(alloctrace_outstanding_bytes{$L}[1m])")
	[[ $n =~ ^[0-9]+$ ]] && ((n >= 3))
}
wait_for 40 scraped || fail "scrapes" "fewer than 3 scrapes stored in 40 s"
# shellcheck disable=SC2016 # jq's variables
r=$(jq -c 'select(.type == "report")' "$TMP/reports.json" | tail -n 1)

expect_eq "outstanding bytes: the report's" "$(report_get "$r" .totals.outstanding_bytes)" \
	"$(query "alloctrace_outstanding_bytes{$L}")"
expect_eq "outstanding blocks: the report's" "$(report_get "$r" .totals.outstanding_allocs)" \
	"$(query "alloctrace_outstanding_blocks{$L}")"
expect_eq "allocs: the report's" "$(report_get "$r" .totals.allocs)" \
	"$(query "alloctrace_allocs_total{$L}")"
expect_eq "lost_allocs: the report's" "$(report_get "$r" .counters.lost_allocs)" \
	"$(query "alloctrace_lost_allocs_total{$L}")"
expect_eq "growth: none while the leaks hold still" 0 \
	"$(query "alloctrace_growth_bytes_per_second{$L}")"

# Every top stack of the report, by its innermost function, and the known leaks exactly.
expect_eq "stack series: --top 5 and other" 6 \
	"$(query "count(alloctrace_stack_outstanding_bytes{$L})")"
while read -r fn bytes; do
	expect_eq "stack $fn: the report's bytes" "$bytes" \
		"$(query "sum(alloctrace_stack_outstanding_bytes{$L,function=\"$fn\"})")"
done < <(jq -r '.stacks[] | "\(.frames[0].function) \(.outstanding_bytes)"' <<<"$r")
for known in "leak_medium 28672 7" "leak_pvalloc 10000 2" "leak_realloc 5000 5" \
	"leak_small 2400 100"; do
	read -r fn bytes blocks <<<"$known"
	expect_eq "stack $fn: its known bytes" "$bytes" \
		"$(query "alloctrace_stack_outstanding_bytes{$L,function=\"$fn\"}")"
	expect_eq "stack $fn: its known blocks" "$blocks" \
		"$(query "alloctrace_stack_outstanding_blocks{$L,function=\"$fn\"}")"
done
expect_match "stack module: the workload" "/leaks\$" \
	"$(curl -sf --max-time 5 --data-urlencode "query=alloctrace_stack_outstanding_bytes{$L,function=\"leak_small\"}" \
		"$API/query" | jq -r '.data.result[0].metric.module')"
expect_eq "other: the rest of the bytes" \
	"$(jq '.totals.outstanding_bytes - ([.stacks[].outstanding_bytes] | add)' <<<"$r")" \
	"$(query "alloctrace_stack_outstanding_bytes{$L,stack=\"other\"}")"

# --- the HTTP server's edges --------------------------------------------------------

URL=http://127.0.0.1:$PORT
status() {
	curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@"
}
expect_eq "GET /: 404" 404 "$(status "$URL/")"
expect_eq "POST /metrics: 405" 405 "$(status -X POST "$URL/metrics")"
expect_eq "HEAD /metrics: 200" 200 "$(status -I "$URL/metrics")"
expect_eq "request too long: 431" 431 \
	"$(status -H "X-Long: $(head -c 5000 /dev/zero | tr '\0' a)" "$URL/metrics")"
expect_eq "content type" "text/plain; version=0.0.4; charset=utf-8" \
	"$(curl -s --max-time 5 -o /dev/null -w '%{content_type}' "$URL/metrics")"

# Clients that connect and say nothing, more than the server keeps: scrapes go on.
for i in {1..20}; do
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
done
before=$(query "count_over_time(up{job=\"alloctrace\"}[1m])")
sleep 3
expect_true "silent clients: scrapes go on" "up samples $before, then $(query "count_over_time(up{job=\"alloctrace\"}[1m])")" \
	test "$(query "count_over_time(up{job=\"alloctrace\"}[1m])")" -gt "$before"
expect_eq "silent clients: scrapes succeed" 1 "$(query "up{job=\"alloctrace\"}")"
expect_eq "silent clients: a GET is served" 200 "$(status "$URL/metrics")"

kill -INT "$(loader_pid)"
wait_tool
expect_eq "exit status" 0 "$RC"
expect_eq "nothing on stderr but what every run says" "" "$(unsaid "$TMP/metrics.err")"

# --- bad addresses -------------------------------------------------------------------

for bad in localhost:9464 127.0.0.1 127.0.0.1:0 127.0.0.1:65536 ::1:9464 "[::1]" 1.2.3:80 \
	"127.0.0.1:80x"; do
	run_tool bad 20 --listen "$bad" -- "$WL/leaks"
	expect_eq "--listen '$bad': exit 2, one line naming it" "2 1 1" \
		"$RC $(wc -l <"$TMP/bad.err") $(grep -cF "invalid value '$bad' for --listen: expected" \
			"$TMP/bad.err")"
done
# An address that is not this machine's: told once, before anything runs.
run_tool elsewhere 20 --listen 192.0.2.1:9464 -- "$WL/leaks"
expect_eq "--listen elsewhere: exit 2, one line" "2 alloctrace: cannot listen on 192.0.2.1:9464: Cannot assign requested address" \
	"$RC $(cat "$TMP/elsewhere.err")"
expect_eq "--listen elsewhere: nothing ran" "" "$(cat "$TMP/elsewhere.out")"

finish
