#!/bin/bash
# Usage: fuzz/run.sh SECONDS CORPUS_ROOT [JOBS [NAME...]]
# Run the libFuzzer targets that `make fuzz-build` built, each for SECONDS,
# JOBS at a time, on CORPUS_ROOT/NAME (seeded from build/fuzz/corpus/NAME).
# Prints one line per target, in order: "ok - fuzz NAME: N runs in S s
# (R/s), no crash" or "not ok - fuzz NAME: ..." followed by the start of its
# report as "# " lines. Crashing inputs go to build/fuzz/artifacts/, logs to
# CORPUS_ROOT/NAME.log (each run has its own: several may run at once).
# Exits non-zero when any target failed. Under tests/lib.sh (TAP_COUNT
# set) each result line also counts towards the script's TAP plan.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/build/fuzz
SECS=${1:?usage: run.sh SECONDS CORPUS_ROOT [JOBS [NAME...]]}
CORPUS=${2:?usage: run.sh SECONDS CORPUS_ROOT [JOBS [NAME...]]}
JOBS=${3:-1}
shift $(($# < 3 ? $# : 3))
NAMES=("$@")
((${#NAMES[@]})) || NAMES=(procmaps options elf cfi x86_insn debugfile webconfig)
SANITIZER_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|ERROR: libFuzzer|==[0-9]+==ERROR'

# Leaks of the fuzzed code are findings; libelf's own are not ours.
export ASAN_OPTIONS=detect_leaks=1:handle_abort=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$ROOT/fuzz/lsan.supp:print_suppressions=0

# run_one NAME: writes its result line(s) to CORPUS_ROOT/NAME.result.
run_one() {
	local name=$1 bin=$OUT/fuzz_$1 seeds=$OUT/corpus/$1 dir=$CORPUS/$1
	local log=$CORPUS/$1.log rc=0 runs secs speed art dict=()

	if [[ ! -x "$bin" || ! -d "$seeds" ]]; then
		echo "not ok - fuzz $name: $bin or its seeds not built (run make fuzz-build)"
		return 1
	fi
	mkdir -p "$dir" "$OUT/artifacts"
	cp -n "$seeds"/* "$dir"/
	[[ -f "$ROOT/fuzz/$name.dict" ]] && dict=(-dict="$ROOT/fuzz/$name.dict")
	timeout -k 10 $((SECS + 120)) "$bin" -max_total_time="$SECS" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$name-" \
		"${dict[@]}" "$dir" >"$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if ((rc == 0)) && [[ -n "$runs" ]] && ! grep -Eq "$SANITIZER_RE" "$log"; then
		echo "ok - fuzz $name: $runs runs in ${secs:-?} s (${speed:-?}/s), no crash"
		return 0
	fi
	art=$(grep -o "Test unit written to [^ ]*" "$log" | tail -n 1)
	echo "not ok - fuzz $name: exit status $rc after ${runs:-?} runs; ${art:-no test unit written}; log $log"
	grep -E -A 12 "$SANITIZER_RE|deadly signal|timeout after|out-of-memory" "$log" | head -n 25 | sed 's/^/# /'
	return 1
}

main() {
	local name failed=0

	mkdir -p "$CORPUS"
	for name in "${NAMES[@]}"; do
		while (($(jobs -rp | wc -l) >= JOBS)); do
			wait -n
		done
		run_one "$name" >"$CORPUS/$name.result" &
	done
	wait
	for name in "${NAMES[@]}"; do
		cat "$CORPUS/$name.result"
		[[ -n ${TAP_COUNT:-} ]] && grep -cE '^(not )?ok - ' "$CORPUS/$name.result" |
			awk '{ for (i = 0; i < $1; i++) print "" }' >>"$TAP_COUNT"
		grep -q '^not ok' "$CORPUS/$name.result" && failed=1
	done
	return "$failed"
}

main
