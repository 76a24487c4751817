#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/tables.sh: what the unwind tables of a big C++ program cost to build
# and keep. `clang++ --version` maps libLLVM-14 and libclang-cpp (950,000
# and 1,000,000 rows); alloctrace -v builds every mapped object's tables
# at launch and says, per object, the time to build them, the part of it
# spent storing them in the BPF maps, and the kernel memory of all tables
# so far. The loader's peak RSS comes from time(1). Run by bench/run.sh
# (`make bench`), or alone: `make bench-tables`.
#
# Environment: BENCH_QUICK=1 (3 rounds instead of 5), BENCH_TABLE_ROUNDS,
# ALLOCTRACE (another build), BENCH_CLANG (another clang++).
set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
CLANG=${BENCH_CLANG:-$(command -v clang++-14 || command -v clang++)}
TMP=$(mktemp -d /tmp/alloctrace-tables.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
if [[ ${BENCH_QUICK:-0} == 1 ]]; then
	ROUNDS=${BENCH_TABLE_ROUNDS:-3}
else
	ROUNDS=${BENCH_TABLE_ROUNDS:-5}
fi
LIBS=(libLLVM-14.so.1 libclang-cpp.so.14)

[[ $(id -u) == 0 ]] || die "run as root: the tracer loads BPF programs"
[[ -x $TOOL ]] || die "no $TOOL: run make"
[[ -n $CLANG ]] || die "no clang++ (Debian's clang-14): run make deps"
[[ -x /usr/bin/time ]] || die "no /usr/bin/time (Debian package time)"

# One run: "lib rows pages ms store_ms" per library, then "all MiB peak_kib"
# from the last object's line and time(1).
one_round() {
	local err=$TMP/err

	/usr/bin/time -f 'peak %M' -o "$TMP/time" "$TOOL" -v -T 0 -- "$CLANG" --version \
		>/dev/null 2>"$err" || die "alloctrace failed: $(tail -n 1 "$err")"
	for lib in "${LIBS[@]}"; do
		sed -n "s|.*unwind tables for [^ ]*/$lib: \([0-9]*\) rows, \([0-9]*\) pages in \([0-9.]*\) ms, \([0-9.]*\) ms of it to store.*|$lib \1 \2 \3 \4|p" "$err"
	done
	echo "all $(grep -o 'in [0-9.]* MiB of kernel memory' "$err" | tail -n 1 | cut -d' ' -f2)" \
		"$(awk '/^peak/ { print $2 }' "$TMP/time")"
}

for ((r = 1; r <= ROUNDS; r++)); do
	echo "bench: unwind tables of clang's libraries, round $r of $ROUNDS" >&2
	one_round >>"$TMP/rounds"
done

# col NAME N: column N of NAME's lines, median [min-max].
col() {
	awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$TMP/rounds" | summarize
}

echo "== unwind tables of clang's libraries: median [min-max] of $ROUNDS runs =="
echo "   alloctrace -v -- $CLANG --version; build includes the store into the BPF maps"
printf '%-20s %-10s %-10s %-22s %s\n' object rows "index" "ms, built and stored" "ms to store"
for lib in "${LIBS[@]}"; do
	printf '%-20s %-10s %-10s %-22s %s\n' "$lib" "$(col "$lib" 2 | cut -d' ' -f1)" \
		"$(col "$lib" 3 | cut -d' ' -f1)" "$(fmt %.0f "$(col "$lib" 4)")" \
		"$(fmt %.0f "$(col "$lib" 5)")"
done
echo "kernel memory of every object's tables (MiB): $(fmt %.1f "$(col all 2)")"
echo "loader peak RSS (MiB): $(fmt %.0f "$(col all 3 | awk '{ print $1 / 1024, $2 / 1024, $3 / 1024 }')")"
