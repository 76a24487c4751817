#!/bin/bash
# Record an unwind case (tests/unit/unwind_cases/README.md): run PROGRAM
# under gdb, stop at each breakpoint of STOPS in turn (comma-separated gdb
# locations; "*malloc" stops at malloc's first instruction, where a uprobe
# fires), passing the last one IGNORE times, and hand the registers and
# gdb's frames (without its inline and tail-call frames, which have no
# stack frame of their own) to unwind_record,
# which writes the case to OUT. With UNTIL=SYMBOL, the frames the walk
# must find end at SYMBOL's frame (gdb's whole backtrace is kept as notes).
# PROGRAM runs with an environment of PATH alone: the stack's top, which
# holds it, is often in the window a case keeps. Run as root (it reads
# /proc/PID/mem). Usage:
#   STOPS=main,*malloc [IGNORE=N] [UNTIL=SYMBOL] [WHY=text] \
#     scripts/record_unwind_case.sh OUT PROGRAM [ARGS...]
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# >= 2)) || { echo "usage: STOPS=LOC,... $0 OUT PROGRAM [ARGS...]" >&2; exit 2; }
OUT=$1
shift
export RECORDER=$ROOT/build/tests/unwind_record OUT STOPS IGNORE=${IGNORE:-0} UNTIL=${UNTIL:-}
export WHY=${WHY:-} COMMAND="$*"
[[ -x $RECORDER ]] || { echo "record_unwind_case: build $RECORDER first (make tests)" >&2; exit 1; }
gdb -q -batch -nx -ex 'set pagination off' -ex 'set confirm off' -ex 'set backtrace past-main on' \
	-ex 'handle SIGUSR1 nostop noprint pass' \
	-ex 'unset environment' -ex 'set environment PATH=/usr/bin:/bin' \
	-x "$ROOT/scripts/record_unwind_case.py" --args "$@"
[[ -s $OUT ]] || { echo "record_unwind_case: no case written to $OUT" >&2; exit 1; }
