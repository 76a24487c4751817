#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/run.sh: what alloctrace costs, measured against the floor of its
# approach (empty uprobes at the same places) and against its peers, all in
# one run. Run through `make bench` (as root), which builds bench/build/.
#
# These VMs are noisy: every variant runs in every round, rounds rotate the
# order, and what is reported is the median of the rounds with the range.
# Comparisons are medians of per-round ratios, so that a slow minute hits
# both sides of a ratio alike.
#
# The unwind tables of clang's libraries (bench/tables.sh) run after the
# pair loops; programs' threads and bystanders (bench/programs.sh), --growth
# on a churning leaker (bench/churn.sh) and the real-service part
# (bench/services.sh) run last.
#
# Environment: BENCH_QUICK=1 (about 2 minutes instead of 5),
# BENCH_GUEST=1 (the pair loops alone, with counts that fit an emulated
# guest: scripts/vmtest.sh bench), BENCH_ROUNDS, BENCH_PAIRS, BENCH_THREADS
# (the thread counts of the pair loops, "1 2"), BENCH_NO_INSTALL=1 (never apt-get a peer),
# BENCH_KEEP=1 (keep the scratch directory), ALLOCTRACE (another build),
# BENCH_SAMPLE_ARGS, BENCH_BIGONLY_ARGS (the options of those two rows).
set -u
export LC_ALL=C	# join, sort and printf agree on order and decimal points

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
B=$ROOT/bench/build
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
TMP=$(mktemp -d /tmp/alloctrace-bench.XXXXXX)
RESULTS=$TMP/pairs.tsv		# round variant threads ns_per_pair

# Under QEMU's TCG a traced malloc/free pair takes about 40 us, and a
# guest of 2 CPUs on a shared host makes 2 threads noise: 1 thread, 50,000
# pairs (big-only and native 12,500,000), 5 rounds of about 1.5 minutes in
# the arm64 guest. At 20,000 pairs (under a second a run) full / floor
# swung 0.70-1.41 between rounds; at 50,000, 1.22-1.43.
if [[ ${BENCH_GUEST:-0} == 1 ]]; then
	ROUNDS=${BENCH_ROUNDS:-5} PAIRS=${BENCH_PAIRS:-50000} THREADS=${BENCH_THREADS:-1}
elif [[ ${BENCH_QUICK:-0} == 1 ]]; then
	ROUNDS=${BENCH_ROUNDS:-3} PAIRS=${BENCH_PAIRS:-100000} SCALE_ROUNDS=1 IDLE_SECS=5
else
	ROUNDS=${BENCH_ROUNDS:-7} PAIRS=${BENCH_PAIRS:-200000} SCALE_ROUNDS=3 IDLE_SECS=10
fi
# The native loop, and big-only's, take nanoseconds a pair: more of them for a
# readable clock. At 25 times the traced loops' pairs (30 ms) the big-only
# ratio swung 0.5-2.0 between rounds; at 250 times (about 0.3 s) it holds.
NATIVE_PAIRS=$((PAIRS * 250))
read -r -a THREADS <<<"${THREADS:-${BENCH_THREADS:-1 2}}"
# What a peer's row says when its program is missing.
MISSING=$([[ ${BENCH_GUEST:-0} == 1 ]] && echo "not in the guest" || echo "not installed")
BLOCKS=${BENCH_BLOCKS:-1000000}
MANY_STACKS=${BENCH_STACKS:-100000}
REPORT_STACKS=${BENCH_REPORT_STACKS:-10000}

# Other allocators, each preloaded into the same loop: X_native and X_full.
ALLOCATORS=(jemalloc tcmalloc mimalloc)
declare -A ALLOC_LIB=(
	[jemalloc]=libjemalloc.so.2
	[tcmalloc]=libtcmalloc_minimal.so.4
	[mimalloc]=libmimalloc.so.2
)
VARIANTS=(native naive floor walk live full multi sample bigonly bpftrace heaptrack valgrind
	jemalloc_native jemalloc_full tcmalloc_native tcmalloc_full mimalloc_native mimalloc_full)
declare -A LABEL=(
	[native]="native (no tracing)"
	[naive]="empty probes, free at +0 (naive)"
	[floor]="empty probes, best places (floor)"
	[walk]="floor + user stack walk (64)"
	[live]="floor + live-block hash map"
	[full]="alloctrace (full tracking)"
	[multi]="alloctrace --follow-forks"
	[sample]="alloctrace --sample"
	[bigonly]="alloctrace --big-only"
	[bpftrace]="bpftrace leak tracker"
	[heaptrack]="heaptrack"
	[valgrind]="valgrind memcheck"
	[jemalloc_native]="jemalloc: native"
	[jemalloc_full]="jemalloc: alloctrace (full)"
	[tcmalloc_native]="tcmalloc: native"
	[tcmalloc_full]="tcmalloc: alloctrace (full)"
	[mimalloc_native]="mimalloc: native"
	[mimalloc_full]="mimalloc: alloctrace (full)"
)
declare -A PRELOAD=()	# allocator -> the path LD_PRELOAD gets
declare -A NA=()	# variant -> why it is not measured
declare -A FAILED=()	# variant -> "count|last reason" of runs that failed
SAMPLE_ARGS=() BIGONLY_ARGS=()

cleanup() {
	# An interrupted scale run leaves its tracer and target behind.
	[[ -n ${APID:-} ]] && kill "$APID" 2>/dev/null
	[[ -n ${TPID:-} ]] && kill "$TPID" 2>/dev/null
	drop_scratch
}
trap cleanup EXIT

# --- setup -------------------------------------------------------------------

# The options of the sampling and big-only rows: tcmalloc's default rate,
# and the threshold of the man page's example.
mode_args() {
	read -r -a SAMPLE_ARGS <<<"${BENCH_SAMPLE_ARGS:---sample 512K}"
	read -r -a BIGONLY_ARGS <<<"${BENCH_BIGONLY_ARGS:---big 1M --big-only}"
}

setup() {
	local prog

	[[ $(id -u) == 0 ]] || die "run as root: the tracers load BPF programs"
	freeze_tool
	for prog in pairs scale floor depth-cfi depth-fp; do
		[[ -x $B/$prog ]] || die "$B/$prog is not built (make bench)"
	done
	command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
	command -v bpftool >/dev/null || die "bpftool is missing (apt-get install bpftool)"
	LIBC=$(ldd "$B/pairs" | awk '$1 ~ /^libc\.so/ { print $3 }')
	[[ -r $LIBC ]] || die "cannot find the libc of $B/pairs"
	# Where the floor (and alloctrace) probe free, said in the header.
	PLACEMENT=$("$B/floor" best -- true 2>&1 >/dev/null | sed -n 's/^floor: best: //p')
	ensure_peer bpftrace bpftrace || NA[bpftrace]="n/a (bpftrace $MISSING)"
	ensure_peer heaptrack heaptrack || NA[heaptrack]="n/a (heaptrack $MISSING)"
	ensure_peer valgrind valgrind || NA[valgrind]="n/a (valgrind $MISSING)"
	find_allocators
	mode_args
	write_bpftrace_script
}

# The other allocators' libraries, as the dynamic loader finds them.
find_allocators() {
	local a lib

	for a in "${ALLOCATORS[@]}"; do
		lib=$(ldconfig -p | awk -v l="${ALLOC_LIB[$a]}" '$1 == l && /x86-64|AArch64/ { print $NF; exit }')
		if [[ -r $lib ]]; then
			PRELOAD[$a]=$lib
		else
			NA[${a}_native]="n/a (${ALLOC_LIB[$a]} $MISSING)"
			NA[${a}_full]=${NA[${a}_native]}
		fi
	done
}

# The bpftrace tracker does the same job: size and stack of every live
# block, per-stack outstanding bytes, release on free. free is probed where
# a bpftrace user would put it, on its first instruction.
write_bpftrace_script() {
	cat >"$TMP/leak.bt" <<EOF
uprobe:$LIBC:malloc /pid == cpid/ { @req[tid] = arg0; }
uretprobe:$LIBC:malloc /pid == cpid && @req[tid]/ {
	@live[retval] = @req[tid];
	@where[retval] = ustack;
	@bytes[ustack] += @req[tid];
	delete(@req[tid]);
}
uprobe:$LIBC:free /pid == cpid && @live[arg0]/ {
	@bytes[@where[arg0]] -= @live[arg0];
	delete(@live[arg0]);
	delete(@where[arg0]);
}
END { clear(@live); clear(@where); clear(@req); clear(@bytes); }
EOF
}

# --- 1. pair cost ------------------------------------------------------------

# run_pairs VARIANT THREADS OUTFILE: the workload under one variant.
run_pairs() {
	local v=$1 t=$2 out=$3 n=$PAIRS
	local -a cmd

	[[ $v == native || $v == bigonly || $v == *_native ]] && n=$NATIVE_PAIRS
	cmd=("$B/pairs" "$n" "$t" "$out")
	# env sets LD_PRELOAD for the loop alone; alloctrace follows its exec.
	[[ $v == *_native || $v == *_full ]] && cmd=(env LD_PRELOAD="${PRELOAD[${v%_*}]}" "${cmd[@]}")
	case $v in
	native) ;;
	naive) cmd=("$B/floor" naive -- "${cmd[@]}") ;;
	floor) cmd=("$B/floor" best -- "${cmd[@]}") ;;
	walk) cmd=("$B/floor" best --stack -- "${cmd[@]}") ;;
	live) cmd=("$B/floor" best --live -- "${cmd[@]}") ;;
	full | *_full) cmd=("$TOOL" -i 3600 --format json -- "${cmd[@]}") ;;
	# The per-process map's lookups instead of the one-process filter.
	multi) cmd=("$TOOL" --follow-forks -i 3600 --format json -- "${cmd[@]}") ;;
	sample) cmd=("$TOOL" "${SAMPLE_ARGS[@]}" -i 3600 --format json -- "${cmd[@]}") ;;
	bigonly) cmd=("$TOOL" "${BIGONLY_ARGS[@]}" -i 3600 --format json -- "${cmd[@]}") ;;
	bpftrace) cmd=(bpftrace "$TMP/leak.bt" -c "${cmd[*]}") ;;
	heaptrack) cmd=(heaptrack -o "$TMP/heaptrack.$t" "${cmd[@]}") ;;
	valgrind) cmd=(valgrind -q --leak-check=full "${cmd[@]}") ;;
	esac
	timeout 600 "${cmd[@]}" >"$TMP/stdout.$v" 2>"$TMP/stderr.$v"
}

# A full alloctrace run counts only if its final report saw every pair
# (sampling and big-only modes see fewer by design).
check_tracked() {
	local v=$1 t=$2 allocs

	[[ $v == full || $v == multi || $v == *_full ]] || return 0
	allocs=$(jq -r 'select(.final) | .totals.allocs' "$TMP/stdout.$v" 2>/dev/null | tail -n 1)
	if ((${allocs:-0} < PAIRS * t)); then
		echo "bench: alloctrace saw ${allocs:-no} allocations of $((PAIRS * t))" >&2
		return 1
	fi
}

measure_pairs() {
	local r=$1 v=$2 t=$3 out=$TMP/ns ns

	rm -f "$out"
	if run_pairs "$v" "$t" "$out" && [[ -s $out ]] && check_tracked "$v" "$t"; then
		read -r _ ns <"$out"
		printf '%s\t%s\t%s\t%s\n' "$r" "$v" "$t" "$ns" >>"$RESULTS"
	else
		# A first failure finds no entry, which set -u refuses to expand.
		local why count=${FAILED[$v]:-0|}

		count=${count%%|*}
		why=$(grep -v '^$' "$TMP/stderr.$v" | tail -n 1 | cut -c1-60)
		FAILED[$v]="$((${count:-0} + 1))|$why"
		echo "bench: $v ($t threads) failed: $why" >&2
		cp "$TMP/stderr.$v" "$TMP/failed.$v.$r.$t"
		BENCH_KEEP=1
	fi
}

# Every round runs every variant once per thread count, starting one
# further along the list each time.
pair_rounds() {
	local -a jobs=()
	local r v t

	for v in "${VARIANTS[@]}"; do
		[[ -n ${NA[$v]:-} ]] && continue
		for t in "${THREADS[@]}"; do jobs+=("$v $t"); done
	done
	for ((r = 1; r <= ROUNDS; r++)); do
		echo "bench: pair cost, round $r of $ROUNDS" >&2
		rotated "$r" measure_pairs "${jobs[@]}"
	done
}

# --- statistics --------------------------------------------------------------

# A variant's figure; runs that failed are said, and with no run left the
# last failure stands in for the figure.
cell() {
	local v=$1 t=$2 f

	if [[ -n ${NA[$v]:-} ]]; then
		echo "${NA[$v]}"
		return
	fi
	f=$(fmt %.0f "$(values "$v" "$t")")
	if [[ -z ${FAILED[$v]:-} ]]; then
		echo "$f"
	elif [[ $f == - ]]; then
		echo "failed: ${FAILED[$v]#*|}"
	else
		echo "$f (${FAILED[$v]%%|*} runs failed)"
	fi
}

# row LABEL CELL...: a line of a table whose columns are THREADS.
row() {
	printf '%-36s' "$1"
	shift
	printf ' %-24s' "$@"
	echo
}

thread_heads() {
	local t

	for t in "${THREADS[@]}"; do
		echo "$t thread$( ((t > 1)) && echo s)"
	done
}

print_pairs() {
	local v t
	local -a cells

	echo
	echo "== 1. malloc(64)+free pair, ns per pair per thread: median [min-max] of $ROUNDS rounds =="
	echo "   ($PAIRS pairs per thread and run, native and big-only $NATIVE_PAIRS; 2 threads = 2 cores busy)"
	mapfile -t cells < <(thread_heads)
	row variant "${cells[@]}"
	for v in "${VARIANTS[@]}"; do
		cells=()
		for t in "${THREADS[@]}"; do cells+=("$(cell "$v" "$t")"); done
		row "${LABEL[$v]}" "${cells[@]}"
	done
}

# ratio_row A B [LABEL [FORMAT]]: A's per-round ratios to B's at each
# thread count.
ratio_row() {
	local a=$1 b=$2 t
	local -a cells=()

	for t in "${THREADS[@]}"; do
		if [[ -n ${NA[$a]:-} || -n ${NA[$b]:-} ]]; then
			cells+=(n/a)
		else
			cells+=("$(fmt "${4:-%.2f}" "$(ratios "$a" "$b" "$t")")")
		fi
	done
	row "${3:-$a / $b}" "${cells[@]}"
}

print_ratios() {
	local a
	local -a heads

	echo
	echo "== ratios, median [min-max] of per-round ratios =="
	mapfile -t heads < <(thread_heads)
	row ratio "${heads[@]}"
	ratio_row full floor
	ratio_row multi full
	ratio_row full naive
	ratio_row full bpftrace
	ratio_row full heaptrack
	ratio_row full valgrind
	ratio_row full native
	ratio_row floor native
	ratio_row naive floor
	ratio_row walk floor
	ratio_row live floor
	ratio_row sample floor
	ratio_row bigonly native
	for a in "${ALLOCATORS[@]}"; do
		ratio_row "${a}_full" floor
		ratio_row "${a}_full" "${a}_native"
	done
}

# --- 2 and 3. scale ----------------------------------------------------------

# utime + stime of a process, in clock ticks.
cpu_ticks() {
	local stat

	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }	# the name may hold spaces
	# shellcheck disable=SC2086 # fields
	set -- $stat
	echo $((${12} + ${13}))
}

# Bytes the kernel charges for the BPF maps process PID holds open.
map_bytes() {
	local pid=$1 f id

	for f in /proc/"$pid"/fdinfo/*; do
		id=$(awk '/^map_id:/ { print $2 }' "$f" 2>/dev/null)
		[[ -n $id ]] && bpftool map show id "$id" -j
	done | jq -s '[.[] | select(.name | test("inflight|allocs|stack|counters|scratch|events|rodata|bss"))
		| .bytes_memlock] | add // 0'
}

wait_file() {
	local file=$1 pid=$2 deadline=$((SECONDS + 600))

	until [[ -e $file ]]; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# start_traced BLOCKS STACKS TOP INTERVAL: launch the scale target under
# alloctrace and wait until it holds every block. Sets APID, TPID, SETUP_S.
start_traced() {
	local ready=$TMP/ready start

	rm -f "$ready"
	start=$EPOCHREALTIME
	"$TOOL" -i "$4" -T "$3" --format json -- "$B/scale" "$1" "$2" "$ready" \
		>"$TMP/scale.json" 2>"$TMP/scale.err" &
	APID=$!
	if ! wait_file "$ready" "$APID"; then
		echo "bench: scale run $1/$2 failed; see $TMP/scale.err" >&2
		kill "$APID" 2>/dev/null
		BENCH_KEEP=1
		return 1
	fi
	SETUP_S=$(elapsed "$start" "$EPOCHREALTIME")
	TPID=$(pgrep -P "$APID" | head -n 1)
}

# Share of one core the loader uses over SECS while the target sleeps.
idle_cpu() {
	local pid=$1 secs=$2 ticks

	sleep 2	# past the first report, which symbolizes: the steady state only
	ticks=$(cpu_ticks "$pid")
	sleep "$secs"
	awk -v d=$(($(cpu_ticks "$pid") - ticks)) -v hz="$(getconf CLK_TCK)" -v s="$secs" \
		'BEGIN { printf "%.2f", 100 * d / hz / s }'
}

# SIGINT to the final report written, and to exit (which adds detaching
# the probes). Prints "report_s exit_s peak_rss_kib".
stop_traced() {
	local pid=$1 t0 hwm wrote tend

	t0=$EPOCHREALTIME
	kill -INT "$pid"
	read -r hwm wrote tend < <(watch_exit "$pid")
	wait "$pid"
	echo "$(elapsed "$t0" "$wrote") $(elapsed "$t0" "$tend") $hwm"
}

# "stacks_holding stacks_listed lost output_bytes" of the final report;
# lost names the counters of what the tool could not record, or is "none".
final_report() {
	local json=$TMP/scale.json line

	line=$(jq -r 'select(.type == "report" and .final) | "\(.stacks_holding) \(.stacks | length) " +
		([.counters | to_entries[] | select((.key | test("lost|error")) and .value > 0) |
		  "\(.key)=\(.value)"] | join(",") | if . == "" then "none" else . end)' \
		"$json" | tail -n 1)
	echo "${line:-- - -} $(tail -n 1 "$json" | wc -c)"
}

# scale_run NAME BLOCKS STACKS TOP IDLE_SECS: one traced scale target.
# Appends: name setup_s report_s exit_s hwm_kib map_bytes cpu_pct holding
# listed lost output_bytes.
scale_run() {
	local name=$1 idle=$5 cpu=- mapb stop interval=3600

	((idle > 0)) && interval=1
	start_traced "$2" "$3" "$4" "$interval" || return 1
	((idle > 0)) && cpu=$(idle_cpu "$APID" "$idle")
	mapb=$(map_bytes "$APID")
	stop=$(stop_traced "$APID")
	kill "$TPID" 2>/dev/null
	APID='' TPID=''
	echo "$name $SETUP_S $stop $mapb $cpu $(final_report)" >>"$TMP/scale.tsv"
}

scale_rounds() {
	local r

	for ((r = 1; r <= SCALE_ROUNDS; r++)); do
		echo "bench: scale, round $r of $SCALE_ROUNDS" >&2
		scale_run blocks "$BLOCKS" 1000 10 "$IDLE_SECS"
		scale_run stacks "$MANY_STACKS" "$MANY_STACKS" 10 0
		scale_run report "$REPORT_STACKS" "$REPORT_STACKS" 0 0
	done
}

# scale_col NAME COLUMN: summary of one column over the runs of one scenario.
scale_col() {
	awk -v n="$1" -v c="$2" '$1 == n && $c != "-" { print $c }' "$TMP/scale.tsv" | summarize
}

scale_last() {
	awk -v n="$1" -v c="$2" '$1 == n { v = $c } END { print v }' "$TMP/scale.tsv"
}

# mib COLUMN-SUMMARY DIVISOR: "median min max" scaled to MiB.
mib() {
	awk -v d="$2" '$1 != "-" { $1 /= d; $2 /= d; $3 /= d } 1' <<<"$1"
}

scale_row() {
	local n=$1 label=$2

	printf '%-34s %-16s %-18s %-16s %-14s %-12s %s\n' "$label" \
		"$(fmt %.1f "$(scale_col "$n" 2)")" "$(fmt %.2f "$(scale_col "$n" 3)")" \
		"$(fmt %.1f "$(scale_col "$n" 4)")" "$(fmt %.0f "$(mib "$(scale_col "$n" 5)" 1024)")" \
		"$(fmt %.0f "$(mib "$(scale_col "$n" 6)" 1048576)")" \
		"$(scale_last "$n" 8)/$(scale_last "$n" 9) lost: $(scale_last "$n" 10)"
}

print_scale() {
	echo
	echo "== 2-3. scale: median [min-max] of $SCALE_ROUNDS runs; blocks of 64 bytes =="
	echo "   setup: launch until every block is allocated (traced); report: SIGINT until the"
	echo "   final report is written; exit: SIGINT until the process is gone (adds detaching);"
	echo "   stacks: holding / listed in the final report, and what the counters say was lost"
	printf '%-34s %-16s %-18s %-16s %-14s %-12s %s\n' scenario "setup s" "report s" "exit s" \
		"loader MiB" "maps MiB" stacks
	scale_row blocks "$BLOCKS blocks, 1000 stacks, -T 10"
	scale_row stacks "$MANY_STACKS blocks and stacks, -T 10"
	scale_row report "$REPORT_STACKS stacks, -T 0 (all)"
	echo "   loader MiB: peak RSS (VmHWM); maps MiB: memlock of its BPF maps, blocks held"
	echo "   the -T 0 final report is $(scale_last report 11) bytes of JSON"
	echo "   loader CPU while the target idles (-i 1, ${IDLE_SECS} s, $BLOCKS blocks):" \
		"$(fmt %.2f "$(scale_col blocks 7)") % of one core"
}

# --- 4. leak check: the target's pause and the scan ----------------------------

# The leak-check engine (build/tests/leakscan, without the BPF side) on
# bench/build/leakheap MB: MB of live 4 KiB blocks, half of them dropped.
LEAK_MBS=(10 100 1024)
LEAK_RESULTS=$TMP/leak.tsv	# mode mb pause_us clone_us reap_pause_us scan_ms classes_ok

# leak_run MODE MB: one scan; MODE "fork" (the snapshot) or "stopped" (--no-fork).
leak_run() {
	local mode=$1 mb=$2 out ok=0 half=$(($2 * 1048576 / 2)) blocks=$(($2 * 256))
	local -a args=()

	[[ $mode == stopped ]] && args=(--no-fork)
	out=$(timeout 600 "$ROOT/build/tests/leakscan" "${args[@]}" "$B/leakheap" "$mb" 2>/dev/null)
	# Exact classes, or the figures would be of a scan that went wrong.
	grep -qx "heap reachable $half $((blocks / 2))" <<<"$out" &&
		grep -qx "heap definitely lost 4096 1" <<<"$out" &&
		grep -qx "heap indirectly lost $((half - 4096)) $((blocks / 2 - 1))" <<<"$out" && ok=1
	awk -v m="$mode" -v mb="$mb" -v ok="$ok" '
		{ v[$1] = $2 }
		END { print m, mb, v["pause_us"], v["clone_us"], v["reap_pause_us"], v["scan_ms"], ok }' \
		<<<"$out" >>"$LEAK_RESULTS"
}

leak_rounds() {
	local r mb n=$((ROUNDS < 3 ? ROUNDS : 3))

	[[ -x $ROOT/build/tests/leakscan ]] || return 0
	for ((r = 0; r < n; r++)); do
		for mb in "${LEAK_MBS[@]}"; do
			leak_run fork "$mb"
		done
	done
	for mb in "${LEAK_MBS[@]}"; do
		leak_run stopped "$mb"
	done
}

# leak_col MODE MB FIELD FORMAT: "median [min-max]" of a column.
leak_col() {
	fmt "$4" "$(awk -v m="$1" -v mb="$2" -v f="$3" '$1 == m && $2 == mb { print $f }' \
		"$LEAK_RESULTS" | summarize)"
}

print_leak() {
	local mb bad

	echo
	echo "4. --leak-check on bench/build/leakheap (one thread): the target's pause and the scan"
	if [[ ! -s $LEAK_RESULTS ]]; then
		echo "   not run: build/tests/leakscan is missing (make tests)"
		return
	fi
	printf '%-10s %-22s %-22s %-18s %-22s %s\n' "live heap" "pause (us)" "of which clone (us)" \
		"reap pause (us)" "scan (ms)" "--no-fork pause (us)"
	for mb in "${LEAK_MBS[@]}"; do
		printf '%-10s %-22s %-22s %-18s %-22s %s\n' "$mb MB" \
			"$(leak_col fork "$mb" 3 %.0f)" "$(leak_col fork "$mb" 4 %.0f)" \
			"$(leak_col fork "$mb" 5 %.0f)" "$(leak_col fork "$mb" 6 %.0f)" \
			"$(leak_col stopped "$mb" 3 %.0f)"
	done
	bad=$(awk '$7 != 1' "$LEAK_RESULTS" | wc -l)
	echo "(classes exact in all but $bad of $(wc -l <"$LEAK_RESULTS") scans)"
}

# --- where the time goes ------------------------------------------------------

# "name run_time_ns run_cnt" of each BPF program process PID holds.
prog_stats() {
	local id

	# Program and link descriptors both name the program: once per id.
	awk '/^prog_id:/ { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u |
		while read -r id; do
			bpftool prog show id "$id" -j
		done | jq -r '"\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"' | sort
}

# profile_run NAME COMMAND...: the kernel's own accounting of BPF program
# time (kernel.bpf_stats_enabled) over two seconds in the middle of a long
# pair loop. Appends "name program ns_per_run runs" lines to $PROG_OUT.
PROG_OUT=$TMP/progs.tsv
profile_run() {
	local name=$1 pid child
	shift

	"$@" >/dev/null 2>&1 &
	pid=$!
	sleep 1.5
	prog_stats "$pid" >"$TMP/stats.0"
	sleep 2
	prog_stats "$pid" >"$TMP/stats.1"
	child=$(pgrep -P "$pid" | head -n 1)
	kill -INT "$pid" 2>/dev/null
	[[ -n $child ]] && kill "$child" 2>/dev/null
	wait "$pid"
	join "$TMP/stats.0" "$TMP/stats.1" | awk -v n="$name" '$5 > $3 {
		printf "%s %s %.0f %d\n", n, $1, ($4 - $2) / ($5 - $3), $5 - $3 }' >>"$PROG_OUT"
}

# Split the full tracker's cost by program, next to the empty probes'.
profile_programs() {
	local old n=3000000	# outlasts the 3.5 s window at the floor's speed

	old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) || return 0
	sysctl -qw kernel.bpf_stats_enabled=1 || return 0
	echo "bench: BPF program time (bpf_stats)" >&2
	profile_run floor "$B/floor" best -- "$B/pairs" "$n" 1 "$TMP/ns"
	profile_run walk "$B/floor" best --stack -- "$B/pairs" "$n" 1 "$TMP/ns"
	profile_run live "$B/floor" best --live -- "$B/pairs" "$n" 1 "$TMP/ns"
	profile_run full "$TOOL" -i 3600 --format json -- "$B/pairs" "$n" 1 "$TMP/ns"
	unwind_costs
	sysctl -qw kernel.bpf_stats_enabled="$old"
}

# The return probe's time at two call depths, by each walk: what one more
# frame costs. Lines "walk depth ns_per_run" in $TMP/unwind.tsv. "cfi"
# alternates twin callers, so that every call is checked against the
# remembered walk and walked; "recalled" keeps one caller, so that the
# remembered walk answers.
UNWIND_DEPTHS=(8 40)
unwind_costs() {
	local walk d n=3000000 prog
	local -a args

	echo "bench: stack walk cost per frame (bpf_stats)" >&2
	for walk in cfi recalled fp; do
		prog=depth-$walk args=()
		case $walk in
		cfi) args=(alternate) ;;
		recalled) prog=depth-cfi ;;
		esac
		for d in "${UNWIND_DEPTHS[@]}"; do
			PROG_OUT=$TMP/unwind.$walk.$d
			profile_run "$walk" "$TOOL" --unwind "${walk/recalled/cfi}" -i 3600 \
				--format json -- "$B/$prog" "$d" "$n" "${args[@]}"
			awk -v d="$d" '$2 == "alloc_return" { print $1, d, $3 }' "$PROG_OUT" \
				>>"$TMP/unwind.tsv"
		done
	done
	PROG_OUT=$TMP/progs.tsv
}

print_unwind() {
	[[ -s $TMP/unwind.tsv ]] || return 0
	echo
	echo "== stack walk cost (alloc_return, kernel.bpf_stats_enabled) =="
	echo "   the same malloc/free loop ${UNWIND_DEPTHS[0]} and ${UNWIND_DEPTHS[1]} calls deep;" \
		"frames walked = depth + 6 (a twin, main and libc's start-up)"
	printf '%-9s %-16s %-16s %s\n' walk "ns at depth ${UNWIND_DEPTHS[0]}" \
		"ns at depth ${UNWIND_DEPTHS[1]}" "ns per frame"
	awk -v lo="${UNWIND_DEPTHS[0]}" -v hi="${UNWIND_DEPTHS[1]}" '
		{ ns[$1, $2] = $3; walks[$1] = 1 }
		END { for (w in walks) if ((w, lo) in ns && (w, hi) in ns)
			printf "%-9s %-16s %-16s %.0f\n", w, ns[w, lo], ns[w, hi],
				(ns[w, hi] - ns[w, lo]) / (hi - lo) }' "$TMP/unwind.tsv" | sort
}

print_programs() {
	[[ -s $TMP/progs.tsv ]] || return 0
	echo
	echo "== BPF program time per run, 1 thread (kernel.bpf_stats_enabled, one 2 s window) =="
	echo "   the rest of a probe hit (trap, uprobe dispatch, return trampoline) is not in it"
	printf '%-10s %-22s %-12s %s\n' tracer program "ns per run" runs
	awk '{ printf "%-10s %-22s %-12s %s\n", $1, $2, $3, $4 }' "$TMP/progs.tsv"
	awk '{ ns[$1] += $3 * $4 } $2 ~ /return/ { pairs[$1] = $4 }
		END { for (t in ns) if (pairs[t])
			printf "   %-8s %5.0f ns of BPF program time per malloc/free pair\n", t, ns[t] / pairs[t] }' \
		"$TMP/progs.tsv" | sort
}

# --- summary -----------------------------------------------------------------

print_summary() {
	local cpu a

	cpu=$(scale_col blocks 7 | awk '{ print ($1 == "-" ? "-" : sprintf("%.2f", $1)) }')
	echo
	echo "== targets (medians) =="
	printf '%-52s %-10s %-8s %s\n' target value limit verdict
	target_row "full tracking / floor, 1 thread" "$(median_ratio full floor 1)" 1.25
	target_row "full tracking / floor, 2 threads" "$(median_ratio full floor 2)" 1.25
	target_row "full tracking / bpftrace tracker, 1 thread" "$(median_ratio full bpftrace 1)" 0.4
	target_row "full tracking / bpftrace tracker, 2 threads" "$(median_ratio full bpftrace 2)" 0.4
	for a in "${ALLOCATORS[@]}"; do
		target_row "$a full tracking / glibc's floor, 1 thread" \
			"$(median_ratio "${a}_full" floor 1)" 1.3
	done
	target_row "--big-only / native, 1 thread" "$(median_ratio bigonly native 1)" 1.05
	target_row "loader CPU, idle target, -i 1 (% of one core)" "$cpu" 2
}

print_header() {
	local cpu

	# arm64's /proc/cpuinfo names no model.
	cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
	echo "alloctrace benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r)," \
		"$(nproc) CPUs (${cpu:-$(uname -m)})"
	echo "tool: $TOOL_BUILD; libc: $LIBC"
	echo "other allocators (LD_PRELOAD): ${PRELOAD[*]:-none}"
	echo "probes of the floor: ${PLACEMENT:-unknown}"
	echo "load average at start: $LOADAVG"
	echo "peers: $(bpftrace --version 2>/dev/null || echo 'no bpftrace');" \
		"$({ heaptrack --version 2>/dev/null || echo 'no heaptrack'; } | head -n 1);" \
		"$(valgrind --version 2>/dev/null || echo 'no valgrind')"
}

# Every variant against the floor: in an emulated guest, where a time says
# how fast QEMU translates and not what the CPU would do, the ratios are
# the figures. Three digits, so that native's 0.004 is not 0.00.
print_floor_ratios() {
	local v
	local -a heads

	echo
	echo "== each variant / empty probes (floor): median [min-max] of per-round ratios =="
	echo "   under emulation (QEMU TCG) absolute times mean nothing: read these ratios"
	mapfile -t heads < <(thread_heads)
	row variant "${heads[@]}"
	for v in "${VARIANTS[@]}"; do
		ratio_row "$v" floor "${LABEL[$v]}" %#.3g
	done
}

# Where alloctrace put its probes in the pair loop and which the kernel
# single-steps (-v says each probe's place and why).
print_placement() {
	echo
	echo "== alloctrace's probes in the pair loop (alloctrace -v) =="
	grep -E 'u(ret)?probe |single-step' "$TMP/placement" | sed 's/^/   /'
}

# BENCH_GUEST: the pair loops and their ratios to the floor, no more.
guest_main() {
	"$TOOL" -v -- "$B/pairs" 1 1 "$TMP/ns" >/dev/null 2>"$TMP/placement"
	pair_rounds
	{
		print_header
		print_placement
		print_pairs
		print_floor_ratios
		print_ratios
	} | tee "$B/results.txt"
}

main() {
	LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
	setup
	[[ ${BENCH_GUEST:-0} == 1 ]] && {
		guest_main
		return
	}
	pair_rounds
	scale_rounds
	profile_programs
	leak_rounds
	"$ROOT/bench/tables.sh" >"$TMP/tables.txt" || echo "bench: tables.sh failed" >&2
	{
		print_header
		print_pairs
		print_ratios
		print_scale
		print_programs
		print_unwind
		print_leak
		[[ -s $TMP/tables.txt ]] && echo && cat "$TMP/tables.txt"
		print_summary
	} | tee "$B/results.txt"
	# Programs' threads and untraced bystanders, --growth as a production
	# mode would run, then the same tracer on real services, which the
	# pair loop cannot stand for.
	"$ROOT/bench/programs.sh"
	"$ROOT/bench/churn.sh"
	"$ROOT/bench/forks.sh"
	"$ROOT/bench/scrape.sh"
	"$ROOT/bench/services.sh"
}

main "$@"
