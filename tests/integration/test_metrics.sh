#!/bin/bash
# --listen against a real Prometheus: a private server (its own config and
# storage in $TMP) scrapes alloctrace every second while tests/workloads/leaks
# holds its leaks; what Prometheus stored must equal the report's numbers
# exactly: outstanding bytes and blocks of the process, each top stack by
# its innermost function, the rest as "other", at most --top + 1 stack
# series. The same Prometheus scrapes a second alloctrace over TLS with
# basic authentication (--web-config: a self-signed certificate and a
# bcrypt hash made here), and its numbers too must be its report's; a
# wrong password, none, and plain HTTP to the TLS port are refused. Then
# the server's edges: 404, 405, HEAD, a request too long, idle floods
# (17 clients that reconnect when dropped, 1,000 clients) under which every
# legitimate scrape succeeds, the warning for an address beyond loopback,
# and bad web configurations refused with one line. Scrapes during leak
# checks are test_metrics_scan.sh's.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
command -v prometheus >/dev/null ||
	{ fail "prerequisites" "prometheus is not installed (make deps)"; finish; }

LOAD=$ROOT/tests/drivers/httpload.py
PORT=$(free_port)
PROM_PORT=$(free_port)
[[ $PROM_PORT != "$PORT" ]] || PROM_PORT=$((PORT + 1))
TLS_PORT=$((PORT + 2))
[[ $TLS_PORT != "$PROM_PORT" ]] || TLS_PORT=$((PORT + 3))

# The TLS endpoint's certificate (for 127.0.0.1: Go checks the address in
# subjectAltName) and user, both made here: bcrypt by Python's crypt(3),
# the same libcrypt alloctrace checks with.
PASSWORD=scrape-$RANDOM$RANDOM
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/server.key" -out "$TMP/server.crt" \
	>"$TMP/openssl.log" 2>&1 || { fail "openssl" "$(tail -n 1 "$TMP/openssl.log")"; finish; }
HASH=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$PASSWORD")
# shellcheck disable=SC2016 # a literal $
expect_match "bcrypt hash made" '^\$2b\$10\$.{53}$' "$HASH"
# Relative file names are the configuration's directory's, as in the exporter toolkit.
cat >"$TMP/web.yml" <<CONF
# as Prometheus exporters' --web.config.file
tls_server_config:
  cert_file: server.crt
  key_file: "$TMP/server.key"
basic_auth_users:
  prometheus: '$HASH'
CONF

cat >"$TMP/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: alloctrace
    static_configs:
      - targets: ['127.0.0.1:$PORT']
  - job_name: alloctrace-tls
    scheme: https
    tls_config:
      ca_file: $TMP/server.crt
    basic_auth:
      username: prometheus
      password: $PASSWORD
    static_configs:
      - targets: ['127.0.0.1:$TLS_PORT']
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

# The TLS endpoint's own run and workload, ended by cleanup.
start_tool tls 300 --format json -i 1 --listen "127.0.0.1:$TLS_PORT" --web-config "$TMP/web.yml" \
	-o "$TMP/tls.json" -- "$WL/leaks" 0 86400
wait_tracing tls 30 || { fail "tls: tracing" "no 'tracing pid' line in 30 s"; finish; }
TLS_PID=$TRACED

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
# scraped LABELS: Prometheus stored at least 3 scrapes of the series.
scraped() {
	local n
	n=$(query "count_over_time(alloctrace_outstanding_bytes{$1}[1m])")
	[[ $n =~ ^[0-9]+$ ]] && ((n >= 3))
}
wait_for 40 scraped "$L" || fail "scrapes" "fewer than 3 scrapes stored in 40 s"
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

# --- over TLS, with basic authentication -------------------------------------------

T="job=\"alloctrace-tls\",pid=\"$TLS_PID\",comm=\"leaks\""
wait_for 40 scraped "$T" || fail "tls: scrapes" "fewer than 3 scrapes stored in 40 s"
expect_eq "tls: prometheus scrapes it (up)" 1 "$(query "up{job=\"alloctrace-tls\"}")"
r=$(jq -c 'select(.type == "report")' "$TMP/tls.json" | tail -n 1)
expect_eq "tls: outstanding bytes: the report's" "$(report_get "$r" .totals.outstanding_bytes)" \
	"$(query "alloctrace_outstanding_bytes{$T}")"
expect_eq "tls: allocs: the report's" "$(report_get "$r" .totals.allocs)" \
	"$(query "alloctrace_allocs_total{$T}")"
expect_eq "tls: stack leak_small: its known bytes" 2400 \
	"$(query "alloctrace_stack_outstanding_bytes{$T,function=\"leak_small\"}")"

TURL=https://127.0.0.1:$TLS_PORT/metrics
tls_status() {
	curl -s --max-time 5 --cacert "$TMP/server.crt" -o /dev/null -w '%{http_code}' "$@" "$TURL"
}
expect_eq "tls: the right password: 200" 200 "$(tls_status -u "prometheus:$PASSWORD")"
expect_eq "tls: a wrong password: 401" 401 "$(tls_status -u "prometheus:x$PASSWORD")"
expect_eq "tls: another user: 401" 401 "$(tls_status -u "root:$PASSWORD")"
expect_eq "tls: no authentication: 401" 401 "$(tls_status)"
expect_eq "tls: 401 asks for basic authentication" 'WWW-Authenticate: Basic realm="alloctrace"' \
	"$(curl -s --max-time 5 --cacert "$TMP/server.crt" -D - -o /dev/null "$TURL" |
		grep -i '^WWW-Authenticate' | tr -d '\r')"
rc=0
out=$(curl -s --max-time 5 -u "prometheus:$PASSWORD" "http://127.0.0.1:$TLS_PORT/metrics") || rc=$?
expect_eq "tls: plain HTTP to the TLS port: no answer" "fails, nothing" \
	"$( ((rc != 0)) && echo fails || echo "exit 0"), ${out:-nothing}"
expect_eq "tls: nothing on stderr but what every run says" "" "$(unsaid "$TMP/tls.err")"

# --- the HTTP server's edges --------------------------------------------------------

URL=http://127.0.0.1:$PORT
status() {
	curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@"
}
expect_eq "GET /: 404" 404 "$(status "$URL/")"
expect_eq "POST /metrics: 405" 405 "$(status -X POST "$URL/metrics")"
expect_eq "HEAD /metrics: 200" 200 "$(status -I "$URL/metrics")"
expect_eq "request too long: 431" 431 \
	"$(status -H "X-Long: $(head -c 10000 /dev/zero | tr '\0' a)" "$URL/metrics")"
expect_eq "content type" "text/plain; version=0.0.4; charset=utf-8" \
	"$(curl -s --max-time 5 -o /dev/null -w '%{content_type}' "$URL/metrics")"

# Clients that connect and say nothing, more than the server keeps: scrapes go on.
silent=()
for _ in {1..20}; do
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
	silent+=("$fd")
done
# The time of the last scrape moves on (a count over a minute saturates at 60).
before=$(query "timestamp(up{job=\"alloctrace\"})")
sleep 3
after=$(query "timestamp(up{job=\"alloctrace\"})")
expect_true "silent clients: scrapes go on" "last scrape at $before, then $after" \
	awk -v a="$before" -v b="$after" 'BEGIN { exit !(b + 0 > a + 0) }'
expect_eq "silent clients: scrapes succeed" 1 "$(query "up{job=\"alloctrace\"}")"
expect_eq "silent clients: a GET is served" 200 "$(status "$URL/metrics")"
# Gone before the floods: the server drops a silent client only after 5 s,
# and these 20 with the 17 below would pass 127.0.0.1's 32.
for fd in "${silent[@]}"; do
	exec {fd}>&-
done
# Idle floods, as the old server lost 40% of scrapes to (17 clients) and 64%
# (1,000): clients that send nothing and connect again whenever dropped,
# while a scraper GETs every 100 ms, each allowed 2 s. Every scrape must
# succeed: 17 clients fit in one address's allowance (the scraper's own
# here), 1,000 from another address are held to theirs.
# flood NAME SOURCE CLIENTS: the scrapes' figures under it, "N ok K ..."
flood() {
	python3 "$LOAD" flood 127.0.0.1 "$PORT" "$2" "$3" 12 >"$TMP/$1.flood" 2>&1 &
	local flooder=$!
	track "$flooder"
	sleep 1
	python3 "$LOAD" scrape "$URL/metrics" 10 0.1 2>"$TMP/$1.scrape-err"
	wait "$flooder"
}
for f in "17 127.0.0.1" "1000 127.0.0.2"; do
	read -r n src <<<"$f"
	got=$(flood "flood$n" "$src" "$n")
	echo "# $n idle clients from $src: $got; $(cat "$TMP/flood$n.flood")"
	read -r _ made _ good _ <<<"$got"
	expect_true "$n idle reconnecting clients: every scrape succeeds" \
		"$got; $(sort "$TMP/flood$n.scrape-err" | uniq -c | head -n 3)" \
		test "${made:-0}" -ge 20 -a "${good:-0}" -eq "${made:-0}"
done
expect_eq "floods: prometheus' scrapes still succeed" 1 "$(query "up{job=\"alloctrace\"}")"

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

# --- beyond loopback ----------------------------------------------------------------

# warned ADDR [ARGS]: "STATUS WARNINGS" of a one-report run listening on ADDR.
warned() {
	local addr=$1
	shift
	run_tool wide 60 -n 1 -i 1 --listen "$addr" "$@" -- "$WL/leaks"
	echo "$RC $(grep -cF "alloctrace: warning: --listen $addr serves beyond this machine without" \
		"$TMP/wide.err")"
}
WIDE=$(free_port)
expect_eq "0.0.0.0: warned, once" "0 1" "$(warned "0.0.0.0:$WIDE")"
expect_eq "0.0.0.0: the warning says what is missing" \
	"alloctrace: warning: --listen 0.0.0.0:$WIDE serves beyond this machine without TLS or authentication: add them with --web-config" \
	"$(grep -F -- "--listen 0.0.0.0" "$TMP/wide.err")"
expect_eq "[::]: warned" "0 1" "$(warned "[::]:$WIDE")"
expect_eq "0.0.0.0 with TLS and users: no warning" "0 0" \
	"$(warned "0.0.0.0:$WIDE" --web-config "$TMP/web.yml")"
printf 'basic_auth_users:\n  prometheus: %s\n' "$HASH" >"$TMP/auth-only.yml"
expect_eq "0.0.0.0 with users, no TLS: warned" "0 1" \
	"$(warned "0.0.0.0:$WIDE" --web-config "$TMP/auth-only.yml")"
expect_eq "0.0.0.0 with users, no TLS: it says TLS" 1 "$(grep -c "without TLS: add" "$TMP/wide.err")"
expect_eq "127.0.0.1: no warning" "0 0" "$(warned "127.0.0.1:$WIDE")"

# --- bad web configurations ---------------------------------------------------------

# bad_web NAME TEXT EXPECTED: a configuration of TEXT is refused, exit 2,
# with the one line EXPECTED, before anything runs.
bad_web() {
	printf '%b' "$2" >"$TMP/$1.yml"
	run_tool "web-$1" 20 --listen "127.0.0.1:$WIDE" --web-config "$TMP/$1.yml" -- "$WL/leaks"
	expect_eq "--web-config $1: exit 2, one line" "2 alloctrace: $3" \
		"$RC $(cat "$TMP/web-$1.err")"
	expect_eq "--web-config $1: nothing ran" "" "$(cat "$TMP/web-$1.out")"
}
bad_web client_auth "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n" \
	"$TMP/client_auth.yml:4: tls_server_config: 'client_auth_type' is not supported (only cert_file and key_file)"
bad_web http2 "# comment\nhttp_server_config:\n  http2: false\n" \
	"$TMP/http2.yml:2: 'http_server_config' is not supported (only tls_server_config and basic_auth_users)"
bad_web plain_password "basic_auth_users:\n  alice: hunter2\n" \
	"$TMP/plain_password.yml:2: basic_auth_users: the hash of 'alice' is not bcrypt (\$2y\$, \$2b\$ or \$2a\$, 60 characters: htpasswd -nbB)"
bad_web flow "basic_auth_users: {alice: x}\n" \
	"$TMP/flow.yml:1: '{': only block style with plain or quoted values is supported"
bad_web typo "tls_server_confg:\n" \
	"$TMP/typo.yml:1: unknown key 'tls_server_confg' (expected tls_server_config or basic_auth_users)"
bad_web half_tls "tls_server_config:\n  cert_file: server.crt\n" \
	"$TMP/half_tls.yml: tls_server_config needs both cert_file and key_file"
bad_web no_cert "tls_server_config:\n  cert_file: none.crt\n  key_file: none.key\n" \
	"cannot read the certificate $TMP/none.crt: No such file or directory"
bad_web bad_pem "tls_server_config:\n  cert_file: server.key\n  key_file: server.crt\n" \
	"cannot serve on 127.0.0.1:$WIDE with the certificate and key of $TMP/bad_pem.yml: Failed to initialize TLS support"
run_tool web-missing 20 --listen "127.0.0.1:$WIDE" --web-config "$TMP/none.yml" -- "$WL/leaks"
expect_eq "--web-config missing: exit 2, one line" \
	"2 alloctrace: cannot read the web configuration $TMP/none.yml: No such file or directory" \
	"$RC $(cat "$TMP/web-missing.err")"
run_tool web-alone 20 --web-config "$TMP/web.yml" -- "$WL/leaks"
expect_eq "--web-config without --listen: exit 2, one line" \
	"2 alloctrace: --web-config secures the endpoint of --listen ADDR:PORT: give it too" \
	"$RC $(cat "$TMP/web-alone.err")"

finish
