#!/bin/bash
# Run every test that `make tests` built: the cmocka unit binaries in
# build/tests/, the checks of the tree in tests/static/, then the
# integration scripts in tests/integration/ (which need root); with
# arguments, only the integration scripts named. Builds nothing. Prints each failure and ends with exactly
# "N passed, N failed" (", N skipped" only when some were skipped); exits
# non-zero if anything failed or was skipped.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PASSED=0
FAILED=0
SKIPPED=0
OUT=$(mktemp /tmp/alloctrace-run.XXXXXX)
trap 'rm -f "$OUT"' EXIT

# A limit per binary or script, so that a hung test fails instead of
# hanging `make check`; a slower machine (make vmtest's QEMU without KVM)
# sets a longer one for the scripts.
UNIT_LIMIT=120
INTEGRATION_LIMIT=${INTEGRATION_LIMIT:-300}

# unit BINARY: count cmocka's summary lines; a crash or a missing summary
# is one failure.
unit() {
	local bin=$1 name rc=0 pass fail
	name=$(basename "$bin")
	timeout -k 5 "$UNIT_LIMIT" "$bin" >"$OUT" 2>&1 || rc=$?
	pass=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' "$OUT" | tail -n 1)
	fail=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' "$OUT" | tail -n 1)
	PASSED=$((PASSED + ${pass:-0}))
	FAILED=$((FAILED + ${fail:-0}))
	grep '^\[  FAILED  \] [^0-9]' "$OUT" | sort -u | sed "s/^/$name: /"
	if [[ -z "$pass$fail" ]] || ((rc != 0 && ${fail:-0} == 0)); then
		echo "$name: exit status $rc, summary '${pass:-none} passed, ${fail:-none} failed'"
		tail -n 5 "$OUT" | sed "s/^/$name: | /"
		FAILED=$((FAILED + 1))
	fi
	echo "# $name: ${pass:-0} passed, ${fail:-0} failed"
}

# integration SCRIPT: count its "ok" / "not ok" lines; a script that dies
# without saying why, or says nothing, is one failure. Its time is shown, to
# see where a slower machine's run goes.
integration() {
	local script=$1 name rc=0 pass fail start=$SECONDS
	name=$(basename "$script")
	timeout -k 5 "$INTEGRATION_LIMIT" bash "$script" >"$OUT" 2>&1 || rc=$?
	pass=$(grep -c '^ok - ' "$OUT")
	fail=$(grep -c '^not ok - ' "$OUT")
	PASSED=$((PASSED + pass))
	FAILED=$((FAILED + fail))
	grep '^not ok - ' "$OUT" | sed "s/^/$name: /"
	if ((rc != 0 && fail == 0)) || ((pass + fail == 0)); then
		echo "$name: exit status $rc with no failure reported"
		tail -n 5 "$OUT" | sed "s/^/$name: | /"
		FAILED=$((FAILED + 1))
	fi
	echo "# $name: $pass passed, $fail failed ($((SECONDS - start)) s)"
}

main() {
	local t
	if (($# > 0)); then
		for t in "$@"; do
			integration "$t"
		done
		summary
		return
	fi
	for t in "$ROOT"/build/tests/test_*; do
		[[ -x "$t" && -f "$t" ]] && unit "$t"
	done
	# Checks of the source tree itself: no root needed.
	for t in "$ROOT"/tests/static/test_*.sh; do
		[[ -f "$t" ]] && integration "$t"
	done
	for t in "$ROOT"/tests/integration/test_*.sh; do
		[[ -f "$t" ]] || continue
		if ((EUID != 0)); then
			# uprobes and BPF maps need root: not running is not passing.
			echo "# $(basename "$t"): skipped, not root"
			SKIPPED=$((SKIPPED + 1))
			continue
		fi
		integration "$t"
	done
	summary
}

summary() {
	if ((SKIPPED > 0)); then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	((FAILED == 0 && SKIPPED == 0))
}

main "$@"
