#!/bin/bash
# Hardening: the cmocka unit tests built with ASan + UBSan (build/asan/,
# `make unit-asan`) run clean, and each libFuzzer target (build/fuzz/,
# `make fuzz-build`) survives FUZZ_SECONDS (default 10) of fuzzing on a copy
# of its seeds. Missing binaries fail: `make check` builds them first.
# Unit tests are those `make tests` built for this ARCH (test_cfi is
# x86-64's).
# About a minute in all: the fuzzers run two at a time.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

FUZZ_SECONDS=${FUZZ_SECONDS:-10}
ASAN_DIR=$ROOT/build/asan
SANITIZER_RE='ERROR: AddressSanitizer|runtime error:|LeakSanitizer'

# Leaks in our code are failures; libdw/libelf/debuginfod's own are
# suppressed (fuzz/lsan.supp lists third-party libraries only).
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$ROOT/fuzz/lsan.supp:print_suppressions=0

# asan_unit NAME: run build/asan/NAME; it passes when it exits 0 and
# neither stream holds a sanitizer report.
asan_unit() {
	local name=$1 bin=$ASAN_DIR/$1 out=$TMP/$1.asan rc=0
	if [[ ! -x "$bin" ]]; then
		fail "asan $name" "$bin is not built (run make unit-asan)"
		return
	fi
	timeout -k 5 60 "$bin" >"$out" 2>&1 || rc=$?
	if ((rc == 0)) && ! grep -Eq "$SANITIZER_RE" "$out"; then
		ok "asan $name"
		return
	fi
	fail "asan $name" "exit status $rc: $(grep -E -m1 "$SANITIZER_RE|FAILED" "$out")"
	grep -E -A 8 "$SANITIZER_RE" "$out" | head -n 12 | sed 's/^/# /'
}

# The ASan twin of each unit test `make tests` built for this ARCH.
have_unit=0
for bin in "$ROOT"/build/tests/test_*; do
	[[ -x "$bin" && -f "$bin" ]] || continue
	have_unit=1
	asan_unit "$(basename "$bin")"
done
((have_unit)) || fail "asan" "no unit tests in build/tests (run make tests)"

# fuzz/run.sh prints the "ok - fuzz NAME" / "not ok - fuzz NAME" lines,
# including for a fuzzer that is not built. Crashing inputs stay in
# build/fuzz/artifacts/; the logs of a failed run are kept in build/fuzz/logs/.
# A cross build has no fuzzers (fuzz/fuzz.mk): make vmtest says so
# (TEST_FUZZ_ON_HOST), and the build host's own run fuzzes.
if [[ -n ${TEST_FUZZ_ON_HOST:-} ]]; then
	echo "# fuzz: not here: the build was a cross build, without libFuzzer for this ARCH; the build host's run fuzzes"
elif [[ ! -x "$ROOT/fuzz/run.sh" ]]; then
	fail "fuzz" "fuzz/run.sh is missing"
elif ! "$ROOT/fuzz/run.sh" "$FUZZ_SECONDS" "$TMP/corpus" 2; then
	FAILS=$((FAILS + 1))
	mkdir -p "$ROOT/build/fuzz/logs" &&
		cp "$TMP"/corpus/*.log "$ROOT/build/fuzz/logs/" 2>/dev/null
	echo "# fuzz logs: $ROOT/build/fuzz/logs/"
fi

finish
