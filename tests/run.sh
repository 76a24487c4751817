#!/bin/bash
# Run every test that `make tests` built: the cmocka unit binaries in
# build/tests/, the checks of the tree in tests/static/, and the
# integration scripts in tests/integration/ (which need root). Builds
# nothing. docs/testing.md describes it.
#
#   tests/run.sh                   everything
#   tests/run.sh SCRIPT...         only those scripts (paths)
#   TEST_SET=unit                  what needs no root: the unit binaries, the
#                                  static checks, the scripts marked
#                                  "# test: no root" (make unit)
#   TEST_SET=integration           the integration scripts (make integration)
#   TEST_ONLY='NAME[:CASE]...'     only those, by name: test_leaks,
#                                  test_leaks:static, test_profile:CASE
#                                  (make check T=..., make unit T=...)
#   TEST_JOBS=N                    scripts at once (make check J=N; nproc)
#   TEST_VERBOSE=1                 each script's whole output (make check V=1)
#
# Scripts run TEST_JOBS at a time, each one's output held until it ends and
# then printed whole, so that logs do not interleave; those marked
# "# test: serial" (timing-sensitive, or machine-wide: --all, cgroups, OOM,
# users) run afterwards, alone. Prints each failure, each script's count,
# the times slowest first, and ends with exactly "N passed, N failed"
# (", N skipped" only when some were skipped); exits non-zero if anything
# failed or was skipped.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PASSED=0
FAILED=0
SKIPPED=0
WORK=$(mktemp -d /tmp/alloctrace-run.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# A limit per binary or script, so that a hung test fails instead of
# hanging `make check`; a slower machine (make vmtest's QEMU without KVM)
# sets a longer one for the scripts.
UNIT_LIMIT=120
INTEGRATION_LIMIT=${INTEGRATION_LIMIT:-300}
JOBS=${TEST_JOBS:-$(nproc)}
# Each script's time of the last run here, to start the slowest first.
TIMES=$ROOT/build/tests/times

# Jobs: KIND PATH [CASE], by number; what each running pid is.
KIND=() TARGET=() CASE=() START=()
declare -A JOB_OF=()
TIMING=()

add_job() {
	KIND+=("$1")
	TARGET+=("$2")
	CASE+=("${3:-}")
}

is_serial() {
	[[ $1 == script ]] && grep -q '^# test: serial' "$2"
}

# run_job N: the job's command, its output to WORK/N.out, its status to
# WORK/N.rc.
run_job() {
	local n=$1 rc=0
	if [[ ${KIND[n]} == unit ]]; then
		# tests/unit/case_filter.c reads it.
		TEST_UNIT_CASE=${CASE[n]} timeout -k 5 "$UNIT_LIMIT" "${TARGET[n]}" \
			>"$WORK/$n.out" 2>&1 || rc=$?
	else
		TEST_CASE=${CASE[n]} timeout -k 5 "$INTEGRATION_LIMIT" bash "${TARGET[n]}" \
			>"$WORK/$n.out" 2>&1 || rc=$?
	fi
	echo "$rc" >"$WORK/$n.rc"
}

start_job() {
	run_job "$1" &
	JOB_OF[$!]=$1
	START[$1]=$EPOCHREALTIME
}

# wait_job: wait for any job to end and report it.
wait_job() {
	local pid
	wait -n -p pid
	[[ -n ${pid:-} && -n ${JOB_OF[$pid]:-} ]] || return 0
	report "${JOB_OF[$pid]}"
	unset "JOB_OF[$pid]"
}

# report N: the job's failures and count, printed in one piece.
report() {
	local n=$1 name rc secs
	name=$(basename "${TARGET[n]}")${CASE[n]:+:${CASE[n]}}
	rc=$(cat "$WORK/$n.rc" 2>/dev/null || echo 255)
	secs=$(awk -v s="${START[n]}" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }')
	TIMING+=("$secs $name")
	[[ ${TEST_VERBOSE:-} == 1 ]] && sed "s/^/$name: | /" "$WORK/$n.out"
	if [[ ${KIND[n]} == unit ]]; then
		count_unit "$name" "$rc" "$WORK/$n.out" "${CASE[n]}"
	else
		count_script "$name" "$rc" "$WORK/$n.out" "$secs"
	fi
}

# count_unit NAME RC OUT [CASE]: cmocka's summary lines; a crash, a
# missing summary or a CASE that matched no case is one failure.
count_unit() {
	local name=$1 rc=$2 out=$3 case=${4:-} pass fail
	pass=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' "$out" | tail -n 1)
	fail=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' "$out" | tail -n 1)
	PASSED=$((PASSED + ${pass:-0}))
	FAILED=$((FAILED + ${fail:-0}))
	grep '^\[  FAILED  \] [^0-9]' "$out" | sort -u | sed "s/^/$name: /"
	if [[ -z "$pass$fail" ]] || ((rc != 0 && ${fail:-0} == 0)); then
		echo "$name: exit status $rc, summary '${pass:-none} passed, ${fail:-none} failed'"
		tail -n 5 "$out" | sed "s/^/$name: | /"
		FAILED=$((FAILED + 1))
	elif [[ -n $case ]] && ((${pass:-0} + ${fail:-0} == 0)); then
		echo "$name: no case of $(basename "${name%%:*}") matches '$case'"
		FAILED=$((FAILED + 1))
	fi
	echo "# $name: ${pass:-0} passed, ${fail:-0} failed"
}

# count_script NAME RC OUT SECS: its "ok" / "not ok" lines; a script that
# dies without saying why, says nothing, or whose TAP plan ("1..N") is
# missing or disagrees with what it printed, is one failure more.
count_script() {
	local name=$1 rc=$2 out=$3 pass fail planned
	pass=$(grep -c '^ok - ' "$out")
	fail=$(grep -c '^not ok - ' "$out")
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | tail -n 1)
	PASSED=$((PASSED + pass))
	FAILED=$((FAILED + fail))
	grep '^not ok - ' "$out" | sed "s/^/$name: /"
	if ((rc != 0 && fail == 0)) || ((pass + fail == 0)); then
		echo "$name: exit status $rc with no failure reported"
		tail -n 5 "$out" | sed "s/^/$name: | /"
		FAILED=$((FAILED + 1))
	elif [[ $planned != "$((pass + fail))" ]]; then
		echo "$name: TAP plan '1..${planned:-(none)}' but $((pass + fail)) results"
		FAILED=$((FAILED + 1))
	fi
	echo "# $name: $pass passed, $fail failed ($secs s)"
}

# by_last_time N...: the jobs, those that took longest last time first, so
# that a long script does not start last and run on alone.
by_last_time() {
	local n
	for n in "$@"; do
		awk -v name="$(basename "${TARGET[n]}")" -v n="$n" \
			'$2 == name { t = $1 } END { print t + 0, n }' "$TIMES" 2>/dev/null || echo "0 $n"
	done | sort -rn -k1,1 -s | cut -d' ' -f2
}

# run_all: the parallel jobs JOBS at a time, then the serial ones alone.
run_all() {
	local n parallel=() serial=()
	for n in "${!KIND[@]}"; do
		if is_serial "${KIND[n]}" "${TARGET[n]}"; then
			serial+=("$n")
		else
			parallel+=("$n")
		fi
	done
	for n in $(by_last_time "${parallel[@]}"); do
		while ((${#JOB_OF[@]} >= JOBS)); do
			wait_job
		done
		start_job "$n"
	done
	while ((${#JOB_OF[@]} > 0)); do
		wait_job
	done
	for n in "${serial[@]}"; do
		start_job "$n"
		wait_job
	done
}

# find_test NAME[:CASE]: the job that names.
find_test() {
	local name=${1%%:*} c='' f
	[[ $1 == *:* ]] && c=${1#*:}
	name=${name%.sh}
	for f in "$ROOT/tests/integration/$name.sh" "$ROOT/tests/static/$name.sh"; do
		[[ -f $f ]] && { add_job script "$f" "$c"; return; }
	done
	if [[ -x $ROOT/build/tests/$name ]]; then
		add_job unit "$ROOT/build/tests/$name" "$c"
		return
	fi
	echo "no test named '$1' (tests/integration/$name.sh, tests/static/$name.sh, build/tests/$name)"
	FAILED=$((FAILED + 1))
}

# no_root SCRIPT: whether the script says it needs no root, in a comment
# line beginning "# test: no root (why)" in its header.
no_root() {
	grep -q '^# test: no root' "$1"
}

# collect [SCRIPT...]: the jobs of this run: those named, or TEST_SET's,
# or everything.
collect() {
	local t set=${TEST_SET:-}
	if (($# > 0)) || [[ -n ${TEST_ONLY:-} ]]; then
		for t in "$@"; do
			add_job script "$t"
		done
		for t in ${TEST_ONLY:-}; do
			find_test "$t"
		done
		return
	fi
	if [[ $set != integration ]]; then
		for t in "$ROOT"/build/tests/test_*; do
			[[ -x "$t" && -f "$t" ]] && add_job unit "$t"
		done
		# Checks of the source tree itself: no root needed.
		for t in "$ROOT"/tests/static/test_*.sh; do
			[[ -f "$t" ]] && add_job script "$t"
		done
	fi
	for t in "$ROOT"/tests/integration/test_*.sh; do
		[[ -f "$t" ]] || continue
		if [[ $set == unit ]] && ! no_root "$t"; then
			continue
		elif ((EUID != 0)) && ! no_root "$t"; then
			# uprobes and BPF maps need root: not running is not passing.
			echo "# $(basename "$t"): skipped, not root"
			SKIPPED=$((SKIPPED + 1))
			continue
		fi
		add_job script "$t"
	done
}

# The times, slowest first; kept for the next run's order.
times() {
	((${#TIMING[@]} > 0)) || return 0
	echo "# times in seconds, slowest first ($JOBS at a time):"
	printf '%s\n' "${TIMING[@]}" | sort -rn | sed 's/^/#   /'
	if [[ -d $ROOT/build/tests && -w $ROOT/build/tests ]]; then
		{
			printf '%s\n' "${TIMING[@]}"
			# Those not run this time keep their last time (none the first time).
			[[ ! -f $TIMES ]] || awk 'NR == FNR { seen[$2] = 1; next } !($2 in seen)' \
				<(printf '%s\n' "${TIMING[@]}") "$TIMES"
		} >"$TIMES.new" && mv "$TIMES.new" "$TIMES"
	fi
}

summary() {
	if ((SKIPPED > 0)); then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	((FAILED == 0 && SKIPPED == 0))
}

main() {
	local start=$SECONDS
	collect "$@"
	run_all
	times
	echo "# $((SECONDS - start)) s in all"
	summary
}

main "$@"
