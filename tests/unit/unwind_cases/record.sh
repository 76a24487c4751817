#!/bin/bash
# Record the unwind cases test_unwind_replay replays (README.md beside
# this): build each program of programs/ and stop it with
# scripts/record_unwind_case.sh. As root, after `make tests`. Cases
# depend on this machine's libraries: record again only on purpose, and
# check the new frames against gdb's (the recorder refuses a walk that
# differs). Usage: tests/unit/unwind_cases/record.sh [CASE...]
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
CASES=$ROOT/tests/unit/unwind_cases
SRC=$CASES/programs
BIN=$ROOT/build/unwind_cases
RECORD=$ROOT/scripts/record_unwind_case.sh
NOFP=(-O2 -g -fomit-frame-pointer)
mkdir -p "$BIN"

glibc_qsort() {
	gcc "${NOFP[@]}" "$SRC/qsort.c" -o "$BIN/qsort"
	STOPS='main,*malloc' WHY="malloc from strdup in a qsort callback: through libc's msort frames" \
		"$RECORD" "$CASES/glibc_qsort.case" "$BIN/qsort"
}

libstdcxx_new() {
	g++ "${NOFP[@]}" "$SRC/new.cc" -o "$BIN/new"
	STOPS='main,*_Znwm,*malloc' WHY="malloc from libstdc++'s operator new, from a template member" \
		"$RECORD" "$CASES/libstdcxx_new.case" "$BIN/new"
}

clang_llvm() {
	STOPS='main,*malloc' IGNORE=20000 \
		WHY="clang++ -O2 -c compiling programs/tiny.cc: the 20,001st malloc, deep in libLLVM and libclang-cpp" \
		"$RECORD" "$CASES/clang_llvm.case" /usr/bin/clang++ -O2 -c "$SRC/tiny.cc" -o "$BIN/tiny.o"
}

static_qsort() {
	gcc -static "${NOFP[@]}" "$SRC/qsort.c" -o "$BIN/qsort-static"
	STOPS='main,*malloc' WHY="programs/qsort.c linked with cc -static: .eh_frame without .eh_frame_hdr" \
		"$RECORD" "$CASES/static_qsort.case" "$BIN/qsort-static"
}

signal_handler() {
	gcc "${NOFP[@]}" "$SRC/signal.c" -o "$BIN/signal"
	STOPS='main,on_signal,*malloc' \
		WHY="malloc in a SIGUSR1 handler: through the kernel's signal frame at __restore_rt to main" \
		"$RECORD" "$CASES/signal_handler.case" "$BIN/signal"
}

for c in "${@:-glibc_qsort libstdcxx_new clang_llvm static_qsort signal_handler}"; do
	for one in $c; do
		"$one"
	done
done
