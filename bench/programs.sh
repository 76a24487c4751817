#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/programs.sh: what tracing costs programs shaped as real ones
# (issue 40), where the pair loop of bench/run.sh cannot tell:
#   7. a live ring in a created thread: malloc/free pairs whose blocks stay
#      live for 64 calls, in a thread of pthread_create's, timed from its
#      creation to its join; launched, attached with -p, and the empty-probe
#      floor (bench/floor best), against native;
#   8. thread churn: threads made one after another (and 4 at a time), each
#      one malloc/free; ms added a thread under a launched command,
#      --leak-check and --follow-forks -- sh -c, against native;
#   9. bystanders: an untraced process's own malloc+free and getppid(),
#      alone and while each mode traces something else.
# Every run is bounded (timeout(1)): a run that hangs is cut, said with
# its figure (at least so many ms a thread) and fails its row; what it
# leaves behind is said and ended. A variant cut, failed, or above 50 times
# its target is not run again in later rounds: its one run fails the
# target plainly, and repeating it would cost minutes. Another alloctrace
# on the host (another user's tests) probing every process slows even the
# native runs: each run waits up to 20 s for it to end (2 minutes in all,
# 1 with BENCH_QUICK=1),
# and each table says how many of its runs had one all the same.
# Run by bench/run.sh (`make bench`), or alone: `make bench-programs`.
#
# Environment: BENCH_QUICK=1 (3 rounds, smaller sizes), BENCH_PROGRAM_ROUNDS,
# BENCH_KEEP=1, ALLOCTRACE.
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
B=$ROOT/bench/build
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
TMP=$(mktemp -d /tmp/alloctrace-programs.XXXXXX)
RESULTS=$TMP/programs.tsv # round variant key figure
if [[ ${BENCH_QUICK:-0} == 1 ]]; then
	ROUNDS=${BENCH_PROGRAM_ROUNDS:-3} RING_PAIRS=100000 NTHREADS=100 BY_MS=200 CHURN_LIMIT=20
	QUIET_BUDGET=60
else
	ROUNDS=${BENCH_PROGRAM_ROUNDS:-5} RING_PAIRS=200000 NTHREADS=1000 BY_MS=500 CHURN_LIMIT=120
	QUIET_BUDGET=120
fi
# Native pairs take nanoseconds: more of them for a readable clock.
RING_NATIVE=$((RING_PAIRS * 50))
RUN_LIMIT=120 # seconds a ring or bystander run may take
RING_LIMIT=1.25
MS_LIMIT=2 # ms added a thread
BY_LIMIT=1.15
PARS=(1 4)
COMM=nosuchproc-40 # no process has this name
declare -A NA=() SKIP=() CUT=() FAILED=() FAR=() FOREIGN=() RUNS=()

RING_VARIANTS=(ring_native ring_floor ring_full ring_pid)
CHURN_VARIANTS=(th_native th_launch th_leak th_forks)
BY_MODES=(alone pid comm cgroup forks bigonly growth all)
declare -A LABEL=(
	[ring_native]="native (no tracing)"
	[ring_floor]="empty probes, best places (floor)"
	[ring_full]="alloctrace -- ring (launched)"
	[ring_pid]="alloctrace -p (attached)"
	[th_native]="native, ms for the threads"
	[th_launch]="alloctrace -- threads"
	[th_leak]="alloctrace --leak-check -- threads"
	[th_forks]="alloctrace --follow-forks -- sh -c"
	[by_alone]="alone (no tracer)"
	[by_pid]="-p A"
	[by_comm]="--comm $COMM"
	[by_cgroup]="--cgroup EMPTY"
	[by_forks]="--follow-forks -- sleep"
	[by_bigonly]="--big 1M --big-only -p A"
	[by_growth]="--growth -p A"
	[by_all]="--all (costs everyone by design)"
)

cleanup() {
	[[ -n ${APID:-} ]] && kill -INT "$APID" 2>/dev/null && wait "$APID"
	[[ -n ${PEER:-} ]] && kill "$PEER" 2>/dev/null && wait "$PEER" 2>/dev/null
	[[ -n ${CGROUP:-} ]] && rmdir "$CGROUP"
	drop_scratch
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- runs ----------------------------------------------------------------------

# record ROUND VARIANT KEY FIGURE
record() {
	printf '%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"
}

# failed VARIANT KEY STATUS BASE SECS: why a run gave no figure, kept for its
# row; a cut run's time is the least it would have taken.
failed() {
	local v=$1 k=$2 rc=$3 base=$4 why

	SKIP[$v $k]=1
	export BENCH_KEEP=1
	if ((rc == 124 || rc == 137)); then
		CUT[$v $k]=$5
		echo "bench: $v ($k) cut at $5 s; see $base.err" >&2
		return
	fi
	why=$(grep -v '^$' "$base.err" | tail -n 1 | cut -c1-60)
	FAILED[$v $k]="status $rc: ${why:-no figure}"
	echo "bench: $v ($k) failed: ${FAILED[$v $k]}; see $base.err" >&2
}

# tracked BASE N: the final report of alloctrace's JSON in BASE.out saw at
# least N allocations, and nothing was left behind.
tracked() {
	local allocs

	allocs=$(jq -r 'select(.final) | .totals.allocs' "$1.out" 2>/dev/null | tail -n 1)
	if ((${allocs:-0} < $2)); then
		echo "bench: alloctrace saw ${allocs:-no} allocations of $2" >>"$1.err"
		return 1
	fi
	! grep -q '^bench: left behind' "$1.err"
}

# tracer_start BASE ARGS...: alloctrace ARGS in the background, bounded by
# RUN_LIMIT, until it says it traces (60 s at most). Sets APID.
tracer_start() {
	local base=$1
	shift

	timeout -k 5 "$RUN_LIMIT" "$TOOL" "$@" >"$base.out" 2>"$base.err" &
	APID=$!
	wait_until 60 "$APID" grep -qs '^alloctrace: tracing' "$base.err"
}

# tracer_stop BASE: SIGINT to the tracer itself (timeout(1) would pass it
# to the whole group too, and a second SIGINT ends alloctrace at once); its
# status, 124 if it was cut. STOP_S: the seconds it took. What it launched
# runs on by design and is ended; a process left stopped is said.
tracer_stop() {
	local rc t0=$EPOCHREALTIME

	kill -INT $(pgrep -P "$APID") 2>/dev/null
	wait "$APID"
	rc=$?
	STOP_S=$(elapsed "$t0" "$EPOCHREALTIME")
	reap_group "$APID" "$1.err" '[tTD]'
	APID=''
	return "$rc"
}

# foreign: 0 when an alloctrace that is not this bench's runs on the host
# (another user's, whose probes for every process tax this bench's
# programs, native ones too, as they tax any bystander).
foreign() {
	local p

	for p in $(pgrep -x alloctrace); do
		[[ $(ps -o pgid= -p "$p" 2>/dev/null | tr -d " ") == "${APID:-none}" ]] || return 0
	done
	return 1
}

# quiet VARIANT: wait up to 20 s for the host to have no other alloctrace
# (QUIET_BUDGET seconds in all), and count VARIANT's runs that had one.
quiet() {
	local t0=$SECONDS

	while foreign && ((QUIET_BUDGET > 0 && SECONDS - t0 < 20)); do
		sleep 1
		((QUIET_BUDGET--))
	done
	foreign && FOREIGN[$1]=$((${FOREIGN[$1]:-0} + 1))
	RUNS[$1]=$((${RUNS[$1]:-0} + 1))
}

# noisy VARIANT...: "N of M", the runs of those variants that had another
# alloctrace on the host, of all their runs.
noisy() {
	local v n=0 m=0

	for v in "$@"; do
		n=$((n + ${FOREIGN[$v]:-0})) m=$((m + ${RUNS[$v]:-0}))
	done
	echo "$n of $m"
}

# gone PID SECS: PID exits within SECS, or is killed and 1.
gone() {
	wait_until "$2" "$1" false
	kill -0 "$1" 2>/dev/null || return 0
	kill -KILL "$1"
	return 1
}

# --- 7. live ring in a created thread ----------------------------------------

# ring_attached BASE OUT: the ring held until alloctrace -p traces it.
ring_attached() {
	local base=$1 tpid rc=0 stop

	"$B/ring" "$RING_PAIRS" "$2" hold &
	tpid=$!
	if tracer_start "$base" -p "$tpid" -i 3600 --format json; then
		kill -USR1 "$tpid"
		gone "$tpid" "$RUN_LIMIT" || rc=124
	else
		kill -KILL "$tpid"
		rc=1
	fi
	wait "$tpid" 2>/dev/null
	tracer_stop "$base"
	stop=$?
	return "$((rc ? rc : stop))"
}

ring_run() {
	local r=$1 v=$2 base=$TMP/$2.$1 out=$TMP/ring.ns rc=0 whole loop
	local -a cmd=("$B/ring" "$RING_PAIRS" "$out")

	quiet "$v"
	rm -f "$out"
	case $v in
	ring_native) cmd=("$B/ring" "$RING_NATIVE" "$out") ;;
	ring_floor) cmd=("$B/floor" best -- "${cmd[@]}") ;;
	ring_full) cmd=("$TOOL" -i 3600 --format json -- "${cmd[@]}") ;;
	esac
	if [[ $v == ring_pid ]]; then
		ring_attached "$base" "$out" || rc=$?
	else
		bounded "$RUN_LIMIT" "$base" "${cmd[@]}" || rc=$?
	fi
	if ((rc == 0)) && [[ -s $out ]] && { [[ $v != ring_full && $v != ring_pid ]] ||
		tracked "$base" "$RING_PAIRS"; }; then
		read -r _ whole _ loop _ cpu <"$out"
		record "$r" "$v" whole "$whole"
		record "$r" "$v" loop "$loop"
		record "$r" "$v" cpu "$cpu"
	else
		failed "$v" whole "$((rc ? rc : 1))" "$base" "$RUN_LIMIT"
	fi
}

# --- 8. thread churn -----------------------------------------------------------

churn_run() {
	local r=$1 v=$2 par=$3 base=$TMP/$2.$3.$1 out=$TMP/threads.ms rc=0 ms
	local -a cmd=("$B/threads" "$NTHREADS" "$par" "$out")

	[[ -n ${SKIP[$v $par]:-} ]] && return
	quiet "$v"
	rm -f "$out"
	# Default reports, as a user runs it: a tracer that answers a new
	# thread only when its loop wakes for a report is what this row catches.
	case $v in
	th_launch) cmd=("$TOOL" --format json -- "${cmd[@]}") ;;
	th_leak) cmd=("$TOOL" --leak-check --format json -- "${cmd[@]}") ;;
	# A command after it, so that sh forks the program instead of exec'ing it.
	th_forks) cmd=("$TOOL" --follow-forks --format json -- sh -c '"$@"; exit $?' sh "${cmd[@]}") ;;
	esac
	bounded "$CHURN_LIMIT" "$base" "${cmd[@]}" || rc=$?
	if ((rc == 0)) && [[ -s $out ]] && { [[ $v == th_native ]] || tracked "$base" "$NTHREADS"; }; then
		read -r _ _ _ ms <"$out"
		record "$r" "$v" "$par" "$ms"
		# Far off its target: one such run says it, more cost minutes.
		[[ $v != th_native ]] && awk -v ms="$ms" -v n="$NTHREADS" -v l="$MS_LIMIT" \
			'BEGIN { exit !(ms / n > 50 * l) }' && SKIP[$v $par]=1 FAR[$v $par]=1
	else
		failed "$v" "$par" "$((rc ? rc : 1))" "$base" "$CHURN_LIMIT"
	fi
}

# --- 9. bystanders -------------------------------------------------------------

# The cgroup2 hierarchy's root: /sys/fs/cgroup, or /sys/fs/cgroup/unified
# on a hybrid host.
cgroup2_root() {
	awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts
}

by_setup() {
	local root

	sleep 3600 &
	PEER=$!
	root=$(cgroup2_root)
	if [[ -n $root ]] && mkdir "$root/alloctrace-bench.$$"; then
		CGROUP=$root/alloctrace-bench.$$
	else
		NA[by_cgroup]="n/a (no cgroup2 to make an empty cgroup in)"
	fi
}

# by_args MODE: alloctrace's arguments in MODE, into ARGS.
by_args() {
	ARGS=(-i 3600 --format json)
	case $1 in
	pid) ARGS+=(-p "$PEER") ;;
	comm) ARGS+=(--comm "$COMM") ;;
	cgroup) ARGS+=(--cgroup "$CGROUP") ;;
	forks) ARGS+=(--follow-forks -- sleep "$RUN_LIMIT") ;;
	bigonly) ARGS+=(--big 1M --big-only -p "$PEER") ;;
	growth) ARGS+=(--growth -p "$PEER") ;;
	all) ARGS+=(--all) ;;
	esac
}

by_run() {
	local r=$1 v=by_$2 base=$TMP/by_$2.$1 out=$TMP/by.ns rc=0 stop m g mw gw

	[[ -n ${NA[$v]:-} || -n ${SKIP[$v malloc]:-} ]] && return
	# --all's final report covers every process of the host: once.
	[[ $2 == all ]] && (($1 > 1)) && return
	quiet "$v"
	rm -f "$out"
	if [[ $2 == alone ]]; then
		bounded "$RUN_LIMIT" "$base.by" "$B/bystander" "$BY_MS" "$out" || rc=$?
	else
		by_args "$2"
		if tracer_start "$base" "${ARGS[@]}"; then
			bounded "$RUN_LIMIT" "$base.by" "$B/bystander" "$BY_MS" "$out" || rc=$?
		else
			rc=1
		fi
		tracer_stop "$base"
		stop=$?
		((rc)) || rc=$stop
	fi
	if ((rc == 0)) && [[ -s $out ]]; then
		read -r _ m _ g _ mw _ gw <"$out"
		record "$r" "$v" malloc "$m"
		record "$r" "$v" getppid "$g"
		record "$r" "$v" malloc_wall "$mw"
		record "$r" "$v" getppid_wall "$gw"
		[[ $2 == alone ]] || record "$r" "$v" exit "$STOP_S"
	else
		[[ -e $base.err ]] || base=$base.by
		failed "$v" malloc "$((rc ? rc : 1))" "$base" "$RUN_LIMIT"
	fi
}

programs_round() {
	local -a jobs=()
	local v p

	echo "bench: programs, round $1 of $ROUNDS" >&2
	rotated "$1" ring_run "${RING_VARIANTS[@]}"
	for v in "${CHURN_VARIANTS[@]}"; do
		for p in "${PARS[@]}"; do jobs+=("$v $p"); done
	done
	rotated "$1" churn_run "${jobs[@]}"
	rotated "$1" by_run "${BY_MODES[@]}"
}

# --- tables --------------------------------------------------------------------

# why VARIANT KEY: what stands in for a figure: not measured, cut, failed.
why() {
	if [[ -n ${NA[$1]:-} ]]; then
		echo "${NA[$1]}"
	elif [[ -n ${CUT[$1 $2]:-} ]]; then
		echo "cut at ${CUT[$1 $2]} s"
	elif [[ -n ${FAILED[$1 $2]:-} ]]; then
		echo "failed: ${FAILED[$1 $2]}"
	elif [[ -n ${FAR[$1 $2]:-} ]]; then
		echo "over 50x the target: not run again"
	fi
}

# cell FORMAT SUMMARY VARIANT KEY: "median [min-max]", and why a run gave none.
cell() {
	local f note

	f=$(fmt "$1" "$2")
	note=$(why "$3" "$4")
	if [[ -z $note ]]; then
		echo "$f"
	elif [[ $f == - ]]; then
		echo "$note"
	else
		echo "$f ($note)"
	fi
}

# line WIDTH LABEL CELL...: a table line.
line() {
	local w=$1
	shift
	printf "%-${w}s" "$1"
	shift
	printf ' %-28s' "$@"
	echo
}

print_ring() {
	local v

	echo
	echo "== 7. live ring in a created thread: ns a pair, median [min-max] of $ROUNDS rounds =="
	echo "   bench/ring $RING_PAIRS (native $RING_NATIVE): one pthread_create'd thread, malloc of"
	echo "   32-95 bytes, each block freed 64 calls later; whole: create to join over the pairs"
	echo "   (a stall at the thread's birth or death is in it), loop: the thread's loop alone,"
	echo "   by wall time and by its own CPU time (what another helper's load leaves out);"
	echo "   alloctrace -i 3600 --format json, its final report must count every allocation"
	line 36 variant whole loop "loop, CPU time"
	for v in "${RING_VARIANTS[@]}"; do
		line 36 "${LABEL[$v]}" "$(cell %.1f "$(values "$v" whole)" "$v" whole)" \
			"$(cell %.1f "$(values "$v" loop)" "$v" whole)" \
			"$(cell %.1f "$(values "$v" cpu)" "$v" whole)"
	done
	ring_ratio "launched / floor" ring_full ring_floor
	ring_ratio "-p / floor" ring_pid ring_floor
	ring_ratio "launched / native" ring_full ring_native
	ring_ratio "floor / native" ring_floor ring_native
	echo "   runs with another alloctrace on the host: $(noisy "${RING_VARIANTS[@]}")"
}

ring_ratio() {
	line 36 "$1" "$(fmt %.2f "$(ratios "$2" "$3" whole)")" "$(fmt %.2f "$(ratios "$2" "$3" loop)")" \
		"$(fmt %.2f "$(ratios "$2" "$3" cpu)")"
}

# added VARIANT PAR: the per-round ms a thread VARIANT adds to native.
added() {
	ratios "$1" th_native "$2" "$NTHREADS"
}

print_churn() {
	local v p
	local -a cells

	echo
	echo "== 8. thread churn: ms added a thread to native, median [min-max] of $ROUNDS rounds =="
	echo "   bench/threads $NTHREADS PAR: $NTHREADS threads made and joined, PAR at a time, each"
	echo "   one malloc/free; the program's own clock from the first create to the last join;"
	echo "   default reports (--format json); each run cut at $CHURN_LIMIT s"
	line 36 variant "1 at a time" "4 at a time"
	cells=()
	for p in "${PARS[@]}"; do
		cells+=("$(cell %.1f "$(values th_native "$p")" th_native "$p")")
	done
	line 36 "${LABEL[th_native]}" "${cells[@]}"
	for v in "${CHURN_VARIANTS[@]:1}"; do
		cells=()
		for p in "${PARS[@]}"; do cells+=("$(cell %.2f "$(added "$v" "$p")" "$v" "$p")"); done
		line 36 "${LABEL[$v]}" "${cells[@]}"
	done
	echo "   runs with another alloctrace on the host: $(noisy "${CHURN_VARIANTS[@]}")"
}

print_bystanders() {
	local v k
	local -a cells

	echo
	echo "== 9. bystander: an untraced process's own ns a call, median [min-max] of $ROUNDS rounds =="
	echo "   bench/bystander $BY_MS: malloc(64)+free, then getppid(), $BY_MS ms of its own CPU"
	echo "   time each (CLOCK_THREAD_CPUTIME_ID: a trap and a BPF program run on its behalf are"
	echo "   in it, another helper's use of the CPU is not), while alloctrace -i 3600 traces"
	echo "   something else; A is a sleep of the bench's; ratio: to alone in the same round"
	line 28 mode "malloc+free ns" "ratio" "getppid ns" "ratio"
	for v in "${BY_MODES[@]/#/by_}"; do
		cells=()
		for k in malloc getppid; do
			cells+=("$(cell %.1f "$(values "$v" "$k")" "$v" malloc)"
				"$(fmt %.2f "$(ratios "$v" by_alone "$k")")")
		done
		line 28 "${LABEL[$v]}" "${cells[@]}"
	done
	echo "   by wall time, median ratios to alone (malloc, getppid); the tracer's exit after SIGINT, s:"
	for v in "${BY_MODES[@]:1}"; do
		printf '   %-34s %s, %s; exit %s\n' "${LABEL[by_$v]}" \
			"$(median_ratio "by_$v" by_alone malloc_wall)" \
			"$(median_ratio "by_$v" by_alone getppid_wall)" "$(fmt %.1f "$(values "by_$v" exit)")"
	done
	echo "   --all: one run, in the first round (its final report covers every process)"
	echo "   runs with another alloctrace on the host: $(noisy "${BY_MODES[@]/#/by_}")"
}

# figure SUMMARY VARIANT KEY [FORMAT]: a target's median, or what stands
# for it: at least LEAST for a cut run, "failed" for a failed one.
figure() {
	local least=${5:-}

	if [[ -n ${CUT[$2 $3]:-} && -n $least ]]; then
		echo ">=$least"
	elif [[ -n ${CUT[$2 $3]:-} || -n ${FAILED[$2 $3]:-} ]]; then
		echo failed
	elif [[ -n ${NA[$2]:-} ]]; then
		echo -
	else
		awk -v f="${4:-%.2f}" '{ print ($1 == "-" ? "-" : sprintf(f, $1)) }' <<<"$1"
	fi
}

# least_ms PAR: ms a thread a run cut at CHURN_LIMIT added at least.
least_ms() {
	values th_native "$1" | awk -v s="$CHURN_LIMIT" -v n="$NTHREADS" \
		'{ printf "%.0f", (s * 1000 - ($1 == "-" ? 0 : $1)) / n }'
}

print_targets() {
	local v p k

	echo
	echo "== programs targets (medians) =="
	printf '%-52s %-10s %-8s %s\n' target value limit verdict
	for v in ring_full ring_pid; do
		target_row "live ring, ${LABEL[$v]%% (*} / floor" \
			"$(figure "$(ratios "$v" ring_floor whole)" "$v" whole)" "$RING_LIMIT"
	done
	for v in "${CHURN_VARIANTS[@]:1}"; do
		for p in "${PARS[@]}"; do
			target_row "threads, ${LABEL[$v]#alloctrace }, $p at a time: ms" \
				"$(figure "$(added "$v" "$p")" "$v" "$p" %.2f "$(least_ms "$p")")" "$MS_LIMIT"
		done
	done
	for v in "${BY_MODES[@]:1:${#BY_MODES[@]}-2}"; do
		for k in malloc getppid; do
			target_row "bystander under ${LABEL[by_$v]}: $k / alone" \
				"$(figure "$(ratios "by_$v" by_alone "$k")" "by_$v" malloc)" "$BY_LIMIT"
		done
	done
}

print_results() {
	echo
	echo "programs: $TOOL_BUILD; $(nproc) CPUs; load average at start: $LOADAVG"
	print_ring
	print_churn
	print_bystanders
	print_targets
}

main() {
	local p

	[[ $(id -u) == 0 ]] || die "run as root: the tracer loads BPF programs"
	for p in ring threads bystander floor; do
		[[ -x $B/$p ]] || die "$B/$p is not built (make bench-build)"
	done
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	freeze_tool
	by_setup
	run_rounds programs
}

main "$@"
