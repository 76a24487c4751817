#!/bin/bash
# Record the unwind cases test_unwind_replay replays (README.md beside
# this): build each program of programs/ and stop it with
# scripts/record_unwind_case.sh. As root, after `make tests`. Cases
# depend on this machine's libraries: record again only on purpose, and
# check the new frames against gdb's (the recorder refuses a walk that
# differs). Usage: tests/unit/unwind_cases/record.sh [CASE...]
#
# On arm64 each case is NAME_arm64.case, and pacret_qsort is arm64's own.
# arm64's are recorded in the arm64 guest of scripts/vmtest.sh, from a
# tree built by make ARCH=arm64 (README.md): there the tree is read-only
# under an overlay, so the cases go to the output share (TEST_KEEP_DIR's
# unwind_cases/; CASES_OUT=DIR elsewhere), and each prints "ok - NAME" for
# tests/run.sh.
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
CASES=$ROOT/tests/unit/unwind_cases
SRC=$CASES/programs
BIN=$ROOT/build/unwind_cases
RECORD=$ROOT/scripts/record_unwind_case.sh
NOFP=(-O2 -g -fomit-frame-pointer)
OUT=${CASES_OUT:-${TEST_KEEP_DIR:+$TEST_KEEP_DIR/unwind_cases}}
OUT=${OUT:-$CASES}
if [[ $("$ROOT/scripts/host-arch.sh") == arm64 ]]; then
	SUFFIX=_arm64
	DEFAULT="glibc_qsort libstdcxx_new static_qsort signal_handler pacret_qsort"
else
	SUFFIX=
	DEFAULT="glibc_qsort libstdcxx_new clang_llvm static_qsort signal_handler"
fi
mkdir -p "$BIN" "$OUT"

glibc_qsort() {
	gcc "${NOFP[@]}" "$SRC/qsort.c" -o "$BIN/qsort"
	STOPS='main,*malloc' WHY="malloc from strdup in a qsort callback: through libc's msort frames" \
		"$RECORD" "$OUT/glibc_qsort$SUFFIX.case" "$BIN/qsort"
}

libstdcxx_new() {
	g++ "${NOFP[@]}" "$SRC/new.cc" -o "$BIN/new"
	STOPS='main,*_Znwm,*malloc' WHY="malloc from libstdc++'s operator new, from a template member" \
		"$RECORD" "$OUT/libstdcxx_new$SUFFIX.case" "$BIN/new"
}

clang_llvm() {
	STOPS='main,*malloc' IGNORE=20000 \
		WHY="clang++ -O2 -c compiling programs/tiny.cc: the 20,001st malloc, deep in libLLVM and libclang-cpp" \
		"$RECORD" "$OUT/clang_llvm$SUFFIX.case" /usr/bin/clang++ -O2 -c "$SRC/tiny.cc" -o "$BIN/tiny.o"
}

static_qsort() {
	gcc -static "${NOFP[@]}" "$SRC/qsort.c" -o "$BIN/qsort-static"
	STOPS='main,*malloc' WHY="programs/qsort.c linked with cc -static: .eh_frame without .eh_frame_hdr" \
		"$RECORD" "$OUT/static_qsort$SUFFIX.case" "$BIN/qsort-static"
}

signal_handler() {
	gcc "${NOFP[@]}" "$SRC/signal.c" -o "$BIN/signal"
	STOPS='main,on_signal,*malloc' \
		WHY="malloc in a SIGUSR1 handler: through the kernel's signal frame (x86-64's __restore_rt, arm64's vDSO __kernel_rt_sigreturn) to main" \
		"$RECORD" "$OUT/signal_handler$SUFFIX.case" "$BIN/signal"
}

# arm64 only: return addresses signed by paciasp, saved with their PAC bits.
pacret_qsort() {
	gcc "${NOFP[@]}" -mbranch-protection=pac-ret "$SRC/qsort.c" -o "$BIN/qsort-pacret"
	STOPS='main,*malloc' \
		WHY="programs/qsort.c built with -mbranch-protection=pac-ret: saved x30 carries PAC bits the walk strips" \
		"$RECORD" "$OUT/pacret_qsort$SUFFIX.case" "$BIN/qsort-pacret"
}

# The cases to record (all by default), and the TAP plan tests/run.sh
# checks: one line each.
read -ra RECORDING <<<"${*:-$DEFAULT}"
echo "1..${#RECORDING[@]}"
for one in "${RECORDING[@]}"; do
	if "$one"; then
		echo "ok - $one$SUFFIX"
	else
		echo "not ok - $one$SUFFIX: not recorded"
	fi
done
