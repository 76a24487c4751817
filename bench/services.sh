#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/services.sh: what tracing costs a real service, measured on that
# service. A pair loop says what one malloc costs; a server's requests/s
# say what its users would lose, which depends on its allocations per
# request, its allocator's entry instructions and its work between them.
# Run last by bench/run.sh (`make bench`), or alone: `make bench-services`.
#
# redis-server (jemalloc), nginx (one worker, glibc) and Apache 2.4 (event
# MPM, one child, mod_deflate on a 256 KiB page) are started here on
# 127.0.0.1 only, with private configs and runtime files in a scratch
# directory, and stopped at the end; so are MariaDB (one process of
# threads, traced with -p) under sysbench oltp_read_write and PostgreSQL
# (a backend forked per connection, traced by name as its operators would:
# --comm postgres) under pgbench, each with a private data directory made
# here, durability off (fsync), so that they measure CPU, not this host's
# disk. Each round measures
# every variant once, rotating the order; a variant's figure is its
# requests/s over the untraced server's in the same round. The floor
# variant is no tracer: bench/floor's empty entry probes at every site
# alloctrace probes in the server (`floor sites -p PID`; for a server traced
# by name, `floor sites --every`: attached for every process, as --comm
# attaches them), the cheapest probe set that can sample; --sample is also
# given over it. floor-returns adds the empty return probes of the
# allocating functions (`floor sites --returns`): full tracking's probe
# set, its floor. floor-session, not run unless asked for, makes the same
# sites uprobe_multi links with an empty session on each allocating
# function (`floor sites --session`, 6.13+), as --sample attaches them.
#
# Environment: BENCH_QUICK=1 (a few minutes), BENCH_SERVICE_ROUNDS,
# BENCH_NO_INSTALL=1 (never apt-get a server), BENCH_KEEP=1 (keep the
# scratch directory), ALLOCTRACE (another build), BENCH_SERVERS and
# BENCH_VARIANTS (a subset, e.g. "mariadb postgresql" and "untraced growth";
# or more: floor-session),
# BENCH_BEFORE (a second build: its --growth runs beside this one's, as
# the variant growth-before, in the same rounds).
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
B=$ROOT/bench/build
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
TMP=$(mktemp -d /tmp/alloctrace-services.XXXXXX)
RESULTS=$TMP/services.tsv	# round server variant requests_per_s loader_kib allocs_per_request loader_cpu_pct
STACKS=$TMP/stacks.tsv	# server variant reports incomplete unexplained why

# Requests per run: under full tracking a server answers about ten times
# slower, so the untraced, big-only and growth runs get ten times more, to
# last about as long.
if [[ ${BENCH_QUICK:-0} == 1 ]]; then
	ROUNDS=${BENCH_SERVICE_ROUNDS:-3} LOAD=5000
else
	ROUNDS=${BENCH_SERVICE_ROUNDS:-5} LOAD=10000
fi
LOAD_FAST=$((LOAD * 10))
LOAD_LIMIT=300		# seconds, for any one load run
REDIS_CLIENTS=50	# redis-benchmark's default
AB_CLIENTS=10
APACHE_CLIENTS=16	# as issue 23 measured it
APACHE_PAGE_KIB=256	# compressible: mod_deflate's zlib buffers are mmapped per request
DB_CLIENTS=4		# sysbench threads, pgbench clients (pgbench -j 2: this host's cores)
SYSBENCH_TABLES=4 SYSBENCH_ROWS=10000	# oltp_read_write's tables, prepared once
PGBENCH_SCALE=2		# pgbench -i -s: 200,000 accounts
# redis and redis-benchmark are one busy thread each: on a CPU each, as an
# operator pins them, they keep still from run to run (untraced 86-93k
# requests/s in 8 runs here, 72-93k left to the scheduler), so the
# tracing's cost is not lost in the spread. The other servers run more
# threads than this host has CPUs.
if (($(nproc) >= 2)); then
	REDIS_CPU=(taskset -c 0) REDIS_LOAD_CPU=(taskset -c 1)
else
	REDIS_CPU=() REDIS_LOAD_CPU=()
fi
# A transaction is tens of queries, and full tracking costs a database far
# less than it costs redis: these servers run as many transactions under
# every variant, per run. So does redis now that full tracking keeps over
# half its speed: 10,000 requests took a fifth of a second, too short to
# measure.
declare -A RUN_LOAD=([redis]=$LOAD_FAST [mariadb]=$LOAD [postgresql]=$((LOAD * 2)))
# A server traced by its process name (--comm) rather than -p: the one
# whose workers are forked per connection, after any attach by pid.
declare -A BY_NAME=([postgresql]=postgres)

read -r -a SERVERS <<<"${BENCH_SERVERS:-redis nginx apache mariadb postgresql}"
read -r -a VARIANTS <<<"${BENCH_VARIANTS:-untraced full sample floor floor-returns bigonly growth}"
[[ -z ${BENCH_BEFORE:-} ]] || VARIANTS+=(growth-before)
FAST=" untraced bigonly growth growth-before "
# alloctrace's options in each variant, besides -p PID.
declare -A ARGS=(
	[full]=""
	[sample]="--sample 64K"
	[bigonly]="--big 1M --big-only"
	[growth]="--growth --big 8M"
	[growth-before]="--growth --big 8M"
)
declare -A NA=()	# "server" or "variant" -> why it is not measured
declare -A FAILED=()	# "server variant" -> "count|last reason"
declare -A SERVER_PID=() TRACED=()
declare -A VTOOL=()	# variant -> the build it runs, when not $TOOL

cleanup() {
	local pid

	[[ -n ${APID:-} ]] && kill -INT "$APID" 2>/dev/null && wait "$APID"
	for pid in "${SERVER_PID[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid"
	done
	drop_scratch
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- servers -----------------------------------------------------------------

redis_answers() {
	[[ $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]
}

start_redis() {
	mkdir -p "$TMP/redis"
	REDIS_PORT=$(free_port) || die "no free port for redis-server"
	"${REDIS_CPU[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$TMP/redis" --logfile "$TMP/redis/redis.log" &
	SERVER_PID[redis]=$!
	wait_until 30 "${SERVER_PID[redis]}" redis_answers ||
		die "redis-server did not answer on 127.0.0.1:$REDIS_PORT; see $TMP/redis/redis.log"
	TRACED[redis]=${SERVER_PID[redis]}
}

# One worker, a separate process from the master, so that -p traces it
# alone. The worker runs as nobody: the page must be readable by it.
write_nginx_conf() {
	local d=$TMP/nginx

	mkdir -p "$d/www"
	printf 'hello from alloctrace bench\n' >"$d/www/index.html"
	chmod 711 "$TMP" "$d" && chmod 755 "$d/www" && chmod 644 "$d/www/index.html"
	cat >"$d/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $d/client_body;
	proxy_temp_path $d/proxy;
	fastcgi_temp_path $d/fastcgi;
	uwsgi_temp_path $d/uwsgi;
	scgi_temp_path $d/scgi;
	server {
		listen 127.0.0.1:$NGINX_PORT;
		root $d/www;
	}
}
EOF
}

# serving_child SERVER PORT: its master's first child, once PORT answers,
# is the process to trace (TRACED[SERVER]).
serving_child() {
	local pid

	pid=$(pgrep -P "${SERVER_PID[$1]}" | head -n 1)
	[[ -n $pid ]] && (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && TRACED[$1]=$pid
}

start_nginx() {
	local d=$TMP/nginx

	NGINX_PORT=$(free_port) || die "no free port for nginx"
	write_nginx_conf
	nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" &
	SERVER_PID[nginx]=$!
	wait_until 30 "${SERVER_PID[nginx]}" serving_child nginx "$NGINX_PORT" ||
		die "nginx did not answer on 127.0.0.1:$NGINX_PORT; see $d/error.log"
}

# Apache's event MPM with one child process of 32 threads, so that -p
# traces every request; it runs as www-data, which must read the page.
write_apache_conf() {
	local d=$TMP/apache m=/usr/lib/apache2/modules

	mkdir -p "$d/www" "$d/logs"
	# Text that compresses, as a page would: numbered lines, not one byte.
	seq -f 'line %g of a page mod_deflate compresses for alloctrace bench' 1 4600 |
		head -c $((APACHE_PAGE_KIB * 1024)) >"$d/www/page.html"
	chmod 711 "$TMP" "$d" && chmod 755 "$d/www" && chmod 644 "$d/www/page.html"
	cat >"$d/apache2.conf" <<EOF
ServerRoot $d
ServerName 127.0.0.1
Listen 127.0.0.1:$APACHE_PORT
PidFile $d/apache2.pid
ErrorLog $d/logs/error.log
User www-data
Group www-data
LoadModule mpm_event_module $m/mod_mpm_event.so
LoadModule authz_core_module $m/mod_authz_core.so
LoadModule deflate_module $m/mod_deflate.so
ServerLimit 1
StartServers 1
ThreadsPerChild 32
MaxRequestWorkers 32
MinSpareThreads 1
MaxSpareThreads 32
MaxConnectionsPerChild 0
DocumentRoot $d/www
<Directory $d/www>
	Require all granted
	SetOutputFilter DEFLATE
</Directory>
EOF
}

start_apache() {
	APACHE_PORT=$(free_port) || die "no free port for apache"
	write_apache_conf
	apache2 -D FOREGROUND -f "$TMP/apache/apache2.conf" &
	SERVER_PID[apache]=$!
	wait_until 30 "${SERVER_PID[apache]}" serving_child apache "$APACHE_PORT" ||
		die "apache did not answer on 127.0.0.1:$APACHE_PORT; see $TMP/apache/logs/error.log"
}

# mariadb SQL...: a statement as root on the private server's socket.
mariadb_sql() {
	mariadb --no-defaults -S "$TMP/mariadb/mariadb.sock" -u root -e "$*"
}

mariadb_answers() {
	mariadb_sql 'SELECT 1' >/dev/null 2>&1
}

# A private data directory, no grant tables (nothing but this bench can
# reach 127.0.0.1:port), the binary log off and the redo log written
# once a second: what is measured is the server's CPU.
start_mariadb() {
	local d=$TMP/mariadb

	MARIADB_PORT=$(free_port) || die "no free port for mariadbd"
	mkdir -p "$d/data" && chown -R mysql: "$d" && chmod 711 "$TMP"
	mariadb-install-db --no-defaults --user=mysql --datadir="$d/data" --skip-test-db \
		>"$d/install.log" 2>&1 || die "mariadb-install-db failed; see $d/install.log"
	mariadbd --no-defaults --user=mysql --datadir="$d/data" --socket="$d/mariadb.sock" \
		--pid-file="$d/mariadbd.pid" --log-error="$d/error.log" --port="$MARIADB_PORT" \
		--bind-address=127.0.0.1 --skip-grant-tables --skip-name-resolve --skip-log-bin \
		--innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=128M &
	SERVER_PID[mariadb]=$!
	wait_until 120 "${SERVER_PID[mariadb]}" mariadb_answers ||
		die "mariadbd did not answer on $d/mariadb.sock; see $d/error.log"
	TRACED[mariadb]=${SERVER_PID[mariadb]}
	{ mariadb_sql 'CREATE DATABASE sbtest' && sysbench_oltp prepare; } >"$d/prepare.log" 2>&1 ||
		die "sysbench could not prepare its tables; see $d/prepare.log"
}

# A command as the postgres user; setpriv execs it, so that $! of a
# command run in the background with it is the command's pid.
PG_AS=(setpriv --reuid postgres --regid postgres --init-groups --)

postgresql_answers() {
	"$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$POSTGRESQL_PORT"
}

# initdb refuses root: the cluster is the postgres user's, in the scratch
# directory, its socket there too; $! is the postmaster.
start_postgresql() {
	local d=$TMP/postgresql

	POSTGRESQL_PORT=$(free_port) || die "no free port for postgres"
	mkdir -p "$d" && chown postgres: "$d" && chmod 711 "$TMP"
	"${PG_AS[@]}" "$PG_BIN/initdb" -D "$d/data" -U postgres --auth=trust >"$d/initdb.log" 2>&1 ||
		die "initdb failed; see $d/initdb.log"
	"${PG_AS[@]}" "$PG_BIN/postgres" -D "$d/data" -c listen_addresses=127.0.0.1 -c port="$POSTGRESQL_PORT" \
		-c unix_socket_directories="$d" -c fsync=off -c synchronous_commit=off \
		-c full_page_writes=off -c checkpoint_timeout=1h -c max_wal_size=8GB -c autovacuum=off \
		>"$d/server.log" 2>&1 &
	SERVER_PID[postgresql]=$!
	wait_until 120 "${SERVER_PID[postgresql]}" postgresql_answers ||
		die "postgres did not answer on 127.0.0.1:$POSTGRESQL_PORT; see $d/server.log"
	TRACED[postgresql]=${SERVER_PID[postgresql]}
	timeout "$LOAD_LIMIT" "$PG_BIN/pgbench" -h 127.0.0.1 -p "$POSTGRESQL_PORT" -U postgres -i -q \
		-s "$PGBENCH_SCALE" postgres >"$d/prepare.log" 2>&1 ||
		die "pgbench -i failed; see $d/prepare.log"
}

# A server harmed by tracing (dead, or a worker respawned by its master)
# ends the run: it is the bug to report, not a figure.
check_server() {
	local s=$1 v=$2

	kill -0 "${TRACED[$s]}" 2>/dev/null ||
		die "$s (pid ${TRACED[$s]}) is gone after the $v run"
}

# --- load --------------------------------------------------------------------

# redis_load N: N/2 SETs then N/2 GETs; prints requests/s over both.
redis_load() {
	local n=$1 out=$TMP/load.out

	timeout "$LOAD_LIMIT" "${REDIS_LOAD_CPU[@]}" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -q -t set,get \
		-n $((n / 2)) -c "$REDIS_CLIENTS" --csv >"$out" 2>"$TMP/load.err" || return 1
	# Equal counts: the rate over both is the harmonic mean of the two.
	awk -F'"' '$2 == "SET" { s = $4 } $2 == "GET" { g = $4 }
		END { if (s > 0 && g > 0) printf "%.0f\n", 2 / (1 / s + 1 / g); else exit 1 }' "$out"
}

# ab_load N CLIENTS URL [AB_ARGS...]: N GETs, each on a new connection
# (ab's default); prints requests/s when every one was answered 200.
ab_load() {
	local n=$1 c=$2 url=$3 out=$TMP/load.out

	shift 3
	timeout "$LOAD_LIMIT" ab -q -n "$n" -c "$c" "$@" "$url" >"$out" 2>"$TMP/load.err" ||
		return 1
	if ! grep -q "^Complete requests: *$n$" "$out" || ! grep -q '^Failed requests: *0$' "$out" ||
		grep -q '^Non-2xx' "$out"; then
		echo "ab: not every request answered 200; see $out" >"$TMP/load.err"
		return 1
	fi
	awk '/^Requests per second:/ { printf "%.0f\n", $4 }' "$out"
}

nginx_load() {
	ab_load "$1" "$AB_CLIENTS" "http://127.0.0.1:$NGINX_PORT/index.html"
}

# The page compressed on every request, as a browser asks for it.
apache_load() {
	ab_load "$1" "$APACHE_CLIENTS" "http://127.0.0.1:$APACHE_PORT/page.html" \
		-H 'Accept-Encoding: gzip'
}

# sysbench_oltp COMMAND [ARGS...]: oltp_read_write on the private server.
sysbench_oltp() {
	timeout "$LOAD_LIMIT" sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 \
		--mysql-port="$MARIADB_PORT" --mysql-user=root --mysql-db=sbtest \
		--tables="$SYSBENCH_TABLES" --table-size="$SYSBENCH_ROWS" --threads="$DB_CLIENTS" "$@"
}

# mariadb_load N: N transactions; prints transactions/s when all N ran
# (a deadlock InnoDB reports is retried by sysbench, an "ignored error").
mariadb_load() {
	local n=$1 out=$TMP/load.out

	sysbench_oltp run --events="$n" --time=0 >"$out" 2>"$TMP/load.err" || return 1
	if ! grep -q "^ *total number of events: *$n$" "$out"; then
		echo "sysbench: not $n transactions; see $out" >"$TMP/load.err"
		return 1
	fi
	sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)$/\1/p' "$out" |
		awk '{ printf "%.0f\n", $1 }'
}

# postgresql_load N: N pgbench (TPC-B like) transactions over DB_CLIENTS
# connections; prints transactions/s when all ran and none failed. Every
# run starts from the same tables: pgbench vacuums all four first (-v,
# outside its clock), and the server has no autovacuum, checkpoint or
# full-page image to land in one run and not the next (untraced 4,693-4,960
# transactions/s in 8 runs here; 4,256-5,335 without).
postgresql_load() {
	local t=$(($1 / DB_CLIENTS)) out=$TMP/load.out

	timeout "$LOAD_LIMIT" "$PG_BIN/pgbench" -h 127.0.0.1 -p "$POSTGRESQL_PORT" -U postgres -v \
		-c "$DB_CLIENTS" -j 2 -t "$t" postgres >"$out" 2>"$TMP/load.err" || return 1
	if ! grep -q "^number of transactions actually processed: $((t * DB_CLIENTS))/" "$out" ||
		! grep -q '^number of failed transactions: 0 ' "$out"; then
		echo "pgbench: not every transaction processed; see $out" >"$TMP/load.err"
		return 1
	fi
	awk '/^tps = / { printf "%.0f\n", $3 }' "$out"
}

# requests_of SERVER VARIANT: requests (transactions) in one run.
requests_of() {
	if [[ -n ${RUN_LOAD[$1]:-} ]]; then
		echo "${RUN_LOAD[$1]}"
	elif [[ $FAST == *" $2 "* ]]; then
		echo "$LOAD_FAST"
	else
		echo "$LOAD"
	fi
}

# --- tracer ------------------------------------------------------------------

# target_of SERVER: alloctrace's target options for SERVER.
target_of() {
	if [[ -n ${BY_NAME[$1]:-} ]]; then
		echo "--comm ${BY_NAME[$1]}"
	else
		echo "-p ${TRACED[$1]}"
	fi
}

tracing() {
	local said="tracing pid ${TRACED[$1]}"

	# --big-only's line names no process name: the start of every one.
	[[ -z ${BY_NAME[$1]:-} ]] || said="tracing every process"

	grep -q "$said" "$TMP/trace.err" 2>/dev/null
}

floor_attached() {
	grep -q "^floor: sites: .* in process ${TRACED[$1]}," "$TMP/trace.err" 2>/dev/null
}

# start_floor SERVER VARIANT: the empty entry probes, and with
# floor-returns the allocating functions' return probes (floor-session:
# their sessions), attached when this returns 0; for every process when
# alloctrace traces SERVER by name.
start_floor() {
	local opts=()

	[[ -z ${BY_NAME[$1]:-} ]] || opts+=(--every)
	[[ $2 != floor-returns ]] || opts+=(--returns)
	[[ $2 != floor-session ]] || opts+=(--session)
	rm -f "$TMP/trace.out" "$TMP/trace.err"
	"$B/floor" sites "${opts[@]}" -p "${TRACED[$1]}" >"$TMP/trace.out" 2>"$TMP/trace.err" &
	APID=$!
	await_tracer floor_attached "$1"
}

# await_tracer READY SERVER: 0 once READY SERVER says the tracer just
# started (APID) is attached, within 120 s; else it is stopped, APID
# emptied, and 1.
await_tracer() {
	wait_until 120 "$APID" "$1" "$2" && return 0
	kill -INT "$APID" 2>/dev/null
	wait "$APID"
	APID=''
	return 1
}

# start_tracer SERVER VARIANT: alloctrace on the server, as a user would
# run it, ready (its probes attached) when this returns 0. Sets APID.
start_tracer() {
	local -a args

	[[ $2 != floor* ]] || { start_floor "$1" "$2"; return; }
	read -r -a args <<<"${ARGS[$2]} $(target_of "$1")"
	# The last run's "tracing pid N" (the same pid) must not pass for this
	# one's: the background job truncates the file only some time after.
	rm -f "$TMP/trace.out" "$TMP/trace.err"
	"${VTOOL[$2]:-$TOOL}" "${args[@]}" --format json >"$TMP/trace.out" 2>"$TMP/trace.err" &
	APID=$!
	await_tracer tracing "$1"
}

# Detach; sets HWM (peak RSS in KiB) and ALLOCS (allocations its final
# report counted), or fails when alloctrace did not exit 0. Not in a
# subshell: only this shell can wait for alloctrace.
stop_tracer() {
	local rc=0 before

	# The peak so far: a quick exit leaves watch_exit nothing to read.
	before=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$APID/status" 2>/dev/null)
	kill -INT "$APID"
	read -r HWM _ < <(watch_exit "$APID")
	((HWM >= ${before:-0})) || HWM=$before
	wait "$APID" || rc=$?
	APID=''
	((rc == 0)) || { echo "alloctrace exited with status $rc" >>"$TMP/trace.err"; return 1; }
	[[ -s $TMP/trace.out ]] || return 0	# the floor reports nothing
	ALLOCS=$(jq -r 'select(.type == "report" and .final) | .totals.allocs' "$TMP/trace.out" |
		tail -n 1)
	ALLOCS=${ALLOCS:--}
}

# The counters that say why a report's stacks are not all whole.
STACK_COUNTERS='["stacks_cut", "unwind_misses", "lost_stacks", "stack_errors", "unwind_full", "unopened"]'

# stack_check SERVER VARIANT: one line in $STACKS for the run's reports:
# how many, how many with stacks_complete false, how many of those with
# no counter saying why, and the counters seen above 0 in the final one.
stack_check() {
	jq -s -r --argjson why "$STACK_COUNTERS" --arg s "$1" --arg v "$2" '
		[.[] | select(.type == "report")] as $r
		| [$r[] | select(.stacks_complete == false)] as $bad
		| ($r | map(select(.final)) | last | .counters // {}) as $c
		| [$s, $v, ($r | length), ($bad | length),
		   ([$bad[] | select([.counters[$why[]] // 0] | add == 0)] | length),
		   ([$why[] | select(($c[.] // 0) > 0) | "\(.)=\($c[.])"] | join(",") | if . == "" then "-" else . end)]
		| @tsv' "$TMP/trace.out" >>"$STACKS"
}

# --- rounds ------------------------------------------------------------------

last_line() {
	grep -v '^$' "$1" 2>/dev/null | tail -n 1 | cut -c1-70
}

# failed ROUND SERVER VARIANT WHY: counted, said, and its files kept.
failed() {
	local key="$2 $3" count

	count=${FAILED[$key]:-}
	count=${count%%|*}
	FAILED[$key]="$((${count:-0} + 1))|$4"
	echo "bench: $2, $3, round $1 failed: $4" >&2
	cp "$TMP/trace.err" "$TMP/failed.$2.$3.$1" 2>/dev/null
	BENCH_KEEP=1
}

# measure ROUND SERVER VARIANT: one load run under one variant, the tracer
# attached before the load starts and detached after it ends.
measure() {
	local r=$1 s=$2 v=$3 n rps mark

	n=$(requests_of "$s" "$v")
	if [[ $v != untraced ]] && ! start_tracer "$s" "$v"; then
		failed "$r" "$s" "$v" "not tracing: $(last_line "$TMP/trace.err")"
		return
	fi
	# The loader's CPU while the load runs, not its attach's: that is the
	# time it takes from the server's on a machine of few CPUs.
	[[ $v == untraced ]] || mark=$(cpu_mark "$APID")
	rps=$("${s}_load" "$n") || rps=''
	HWM=- ALLOCS=- CPU=-
	[[ $v == untraced ]] || CPU=$(cpu_share "$mark" "$(cpu_mark "$APID")")
	if [[ $v != untraced ]] && ! stop_tracer; then
		failed "$r" "$s" "$v" "$(last_line "$TMP/trace.err")"
		return
	fi
	check_server "$s" "$v"
	# The floor writes nothing; the untraced run finds the last one's file.
	[[ $v == untraced || ! -s $TMP/trace.out ]] || stack_check "$s" "$v"
	[[ -n $rps ]] || { failed "$r" "$s" "$v" "$(last_line "$TMP/load.err")"; return; }
	# Full tracking counts every allocation and sampling estimates them:
	# either way at least one a request, or the probes were not there.
	if [[ $v == full || $v == sample ]] && ((${ALLOCS/-/0} < n)); then
		failed "$r" "$s" "$v" "alloctrace saw $ALLOCS allocations in $n requests"
		return
	fi
	[[ $ALLOCS == - ]] || ALLOCS=$(awk -v a="$ALLOCS" -v n="$n" 'BEGIN { print a / n }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$v" "$rps" "$HWM" "$ALLOCS" "$CPU" \
		>>"$RESULTS"
}

# Every round runs every variant on each server, starting one further along
# the list each time.
service_rounds() {
	local r i s n=${#VARIANTS[@]} v

	for ((r = 1; r <= ROUNDS; r++)); do
		for s in "${SERVERS[@]}"; do
			[[ -n ${NA[$s]:-} ]] && continue
			echo "bench: $s, round $r of $ROUNDS" >&2
			for ((i = 0; i < n; i++)); do
				v=${VARIANTS[$(((i + r) % n))]}
				[[ -n ${NA[$v]:-} ]] || measure "$r" "$s" "$v"
			done
		done
	done
}

# --- statistics --------------------------------------------------------------

label() {
	case $1 in
	untraced) echo untraced ;;
	growth-before) echo "${ARGS[$1]} (BENCH_BEFORE)" ;;
	full) echo "alloctrace -p PID" ;;
	floor) echo "floor: empty entries" ;;
	floor-returns) echo "floor: + returns" ;;
	floor-session) echo "floor: sessions" ;;
	*) echo "${ARGS[$1]}" ;;
	esac
}

# col SERVER VARIANT COLUMN [DIVISOR]: summary of one column of the results.
col() {
	awk -F'\t' -v s="$1" -v v="$2" -v c="$3" -v d="${4:-1}" \
		'$2 == s && $3 == v && $c != "-" { print $c / d }' "$RESULTS" | summarize
}

# ratio SERVER VARIANT [BASE]: per-round ratios of VARIANT's requests/s to
# BASE's (the untraced server's by default), summarized.
ratio() {
	awk -F'\t' -v s="$1" -v v="$2" -v b="${3:-untraced}" '
		$2 == s && $3 == v { x[$1] = $4 }
		$2 == s && $3 == b { y[$1] = $4 }
		END { for (r in x) if ((r in y) && y[r] > 0) print x[r] / y[r] }' "$RESULTS" | summarize
}

# A row's cells after its variant, or why there are none.
cells() {
	local s=$1 v=$2 why=${NA[$1]:-${NA[$2]:-}} f

	if [[ -n $why ]]; then
		echo "$why"
		return
	fi
	f=${FAILED["$s $v"]:-}
	if [[ $(col "$s" "$v" 4) == - ]]; then
		echo "failed: ${f#*|}"
		return
	fi
	printf '%-22s %-19s %-21s %-21s %s' "$(fmt %.0f "$(col "$s" "$v" 4)")" \
		"$(fmt %.2f "$(ratio "$s" "$v")")" "$(fmt %.1f "$(col "$s" "$v" 5 1024)")" \
		"$(fmt %.1f "$(col "$s" "$v" 6)")" "$(fmt %.0f "$(col "$s" "$v" 7)")"
	[[ -z $f ]] || printf ' (%s runs failed: %s)' "${f%%|*}" "${f#*|}"
	echo
}

print_services() {
	local s v

	echo
	echo "== 4. real services, requests/s: median [min-max] of $ROUNDS rounds =="
	echo "   ratio: to the untraced server's requests/s in the same round;"
	echo "   loader MiB: alloctrace's peak RSS (VmHWM) from attach to exit;"
	echo "   allocs/req: allocations alloctrace counted over the requests sent;"
	echo "   loader CPU %: its user and system time while the load ran (not its attach),"
	echo "   in % of one CPU (the floor's: bench/floor's)"
	printf '%-10s %-20s %-22s %-19s %-21s %-21s %s\n' server variant requests/s ratio \
		"loader MiB" allocs/req "loader CPU %"
	for s in "${SERVERS[@]}"; do
		for v in "${VARIANTS[@]}"; do
			printf '%-10s %-20s %s\n' "$s" "$(label "$v")" "$(cells "$s" "$v")"
		done
	done
}

# median_ratio SERVER VARIANT BASE: the median of the per-round ratios, or -.
median_ratio() {
	median_of ratio "$@"
}

# target_row SERVER VARIANT LIMIT [BASE [LIMIT2 BASE2]]: the median ratio
# to BASE (untraced); with a second limit and base, either one passes.
target_row() {
	local s=$1 v=$2 limit=$3 base=${4:-untraced} value what
	local -a alt=("${@:5}")

	value=$(median_ratio "$s" "$v" "$base")
	what="$s: $(label "$v") / $base"
	if ((${#alt[@]})); then
		value+=" $(median_ratio "$s" "$v" "${alt[1]}")"
		what+=" or ${alt[1]}" limit+=" ${alt[0]}"
	fi
	awk -v w="$what" -v x="$value" -v l="$limit" 'BEGIN {
		n = split(x, xs, " "); split(l, ls, " "); verdict = "n/a"
		for (i = 1; i <= n; i++)
			if (xs[i] != "-")
				verdict = xs[i] >= ls[i] ? "PASS" : verdict == "PASS" ? "PASS" : "FAIL"
		gsub(" ", " | ", x); gsub(" ", " | >= ", l)
		printf "%-44s %-12s %-16s %s\n", w, x, ">= " l, verdict
	}'
}

print_targets() {
	local s

	echo
	echo "== real-service targets (medians of per-round ratios) =="
	printf '%-44s %-12s %-16s %s\n' target value limit verdict
	target_row redis full 0.5
	target_row nginx full 0.7
	# Or, when the floor itself is below that, within 1.15x of it: the
	# floor of full tracking's probes, entries and returns.
	for s in mariadb postgresql; do
		target_row "$s" full 0.7 untraced 0.87 floor-returns
	done
	# Within 1.1x of the sampling floor: at least 1/1.1 of its requests/s.
	for s in redis nginx mariadb postgresql; do
		target_row "$s" sample 0.91 floor
	done
	for s in redis nginx apache mariadb postgresql; do
		target_row "$s" growth 0.95
	done
	# Each figure both ways: what full tracking adds to its probes' traps.
	echo
	echo "== full tracking / its floor (entries and returns): median [min-max] =="
	for s in redis nginx mariadb postgresql; do
		! described "$s" || printf '%-11s %s\n' "$s" "$(fmt %.2f "$(ratio "$s" full floor-returns)")"
	done
}

# Every traced run's reports: stacks_complete false is fine only with a
# counter (STACK_COUNTERS) above 0 that says why.
print_stacks() {
	echo
	echo "== stacks in every report of every traced run =="
	printf '%-11s %-20s %-8s %-11s %-12s %s\n' server variant reports incomplete unexplained \
		"counters above 0 in final reports"
	awk -F'\t' '{ k = $1 "\t" $2; if (!(k in r)) o[++n] = k; r[k] += $3; b[k] += $4; u[k] += $5
			if ($6 != "-") c[k] = c[k] (c[k] == "" ? "" : "; ") $6 }
		END { for (i = 1; i <= n; i++) { k = o[i]; split(k, sv, "\t")
			printf "%-11s %-20s %-8d %-11d %-12d %s\n", sv[1], sv[2], r[k], b[k], u[k],
				c[k] == "" ? "-" : c[k] } }' "$STACKS"
}

# --- main --------------------------------------------------------------------

# The allocator a server's binary links, as ldd says.
allocator_of() {
	local lib

	lib=$(ldd "$(command -v "$1")" | grep -o -E 'lib(jemalloc|tcmalloc[a-z_]*|mimalloc)\.so[.0-9]*' |
		head -n 1)
	echo "${lib:-glibc malloc}"
}

# chosen SERVER: BENCH_SERVERS names it.
chosen() {
	[[ " ${SERVERS[*]} " == *" $1 "* ]]
}

# described SERVER: the header has a line for SERVER: chosen and installed.
described() {
	chosen "$1" && [[ -z ${NA[$1]:-} ]]
}

# need SERVER COMMAND PACKAGE...: each COMMAND a chosen SERVER runs, from
# its Debian PACKAGE, installed if missing (ensure_peer); if one cannot
# be, the server's rows say so. A server not chosen installs nothing.
need() {
	local server=$1

	chosen "$server" || return 0
	shift
	while (($# >= 2)); do
		ensure_peer "$1" "$2" || {
			NA[$server]="n/a ($2 not installed)"
			return 0
		}
		shift 2
	done
}

print_header() {
	echo "alloctrace real-service benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r)," \
		"$(nproc) CPUs; load average at start: $LOADAVG"
	echo "tool: $TOOL_BUILD"
	! described redis || echo "redis: $(redis-server --version | cut -d' ' -f1-3) ($(allocator_of redis-server))," \
		"redis-benchmark -q -t set,get -c $REDIS_CLIENTS, ${RUN_LOAD[redis]} requests a run, every variant," \
		"${REDIS_CPU[*]:-unpinned}${REDIS_LOAD_CPU:+ and ${REDIS_LOAD_CPU[*]}}"
	! described nginx || echo "nginx: $(nginx -v 2>&1 | cut -d' ' -f3), one worker ($(allocator_of nginx))," \
		"ab -c $AB_CLIENTS of a 28-byte page, $LOAD / $LOAD_FAST requests a run likewise"
	! described apache || echo "apache: $(apache2 -v | sed -n 's/^Server version: //p')," \
		"event MPM, one child ($(allocator_of apache2)), ab -c $APACHE_CLIENTS of a" \
		"${APACHE_PAGE_KIB} KiB page gzipped by mod_deflate, $LOAD / $LOAD_FAST requests a run likewise"
	! described mariadb || echo "mariadb: $(mariadbd --version | awk '{ print $3 }')," \
		"-p its one process ($(allocator_of mariadbd)), $(sysbench --version)" \
		"oltp_read_write --threads $DB_CLIENTS, $SYSBENCH_TABLES tables of $SYSBENCH_ROWS rows," \
		"${RUN_LOAD[mariadb]} transactions a run, every variant"
	! described postgresql || echo "postgresql: $("$PG_BIN/postgres" --version | cut -d' ' -f3)," \
		"--comm postgres (a backend per connection; $(allocator_of "$PG_BIN/postgres"))," \
		"pgbench -s $PGBENCH_SCALE -v -c $DB_CLIENTS -j 2, ${RUN_LOAD[postgresql]} transactions a run," \
		"every variant; its floor: the probes for every process"
	[[ -z ${BENCH_BEFORE:-} ]] || echo "growth-before: $BENCH_BEFORE"
}

setup() {
	[[ $(id -u) == 0 ]] || die "run as root: alloctrace loads BPF programs"
	freeze_tool
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	need redis redis-server redis-server redis-benchmark redis-tools
	need nginx nginx nginx-light ab apache2-utils
	need apache apache2 apache2 ab apache2-utils
	need mariadb mariadbd mariadb-server sysbench sysbench
	# Debian's postgresql: its binaries under a directory of its version.
	need postgresql pg_ctlcluster postgresql
	PG_BIN=$(find /usr/lib/postgresql -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)
	"$TOOL" --help 2>&1 | grep -q -- '--growth' || NA[growth]="n/a: not built"
	if [[ -n ${BENCH_BEFORE:-} ]]; then
		cp "$BENCH_BEFORE" "$TMP/alloctrace-before" || die "cannot copy $BENCH_BEFORE"
		VTOOL[growth-before]=$TMP/alloctrace-before
	fi
	mkdir -p "$B"
}

main() {
	local s

	LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
	setup
	for s in "${SERVERS[@]}"; do
		[[ -n ${NA[$s]:-} ]] || "start_$s"
	done
	service_rounds
	{
		print_header
		print_services
		print_targets
		[[ ! -s $STACKS ]] || print_stacks
	} | tee "$B/services.txt"
}

main "$@"
