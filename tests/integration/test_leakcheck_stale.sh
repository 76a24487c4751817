#!/bin/bash
# What is below the stack pointer of a thread blocked in a system call is
# not a root: tests/workloads/stalezone.c leaves its block's only pointer
# below its stack pointer in a function that returned, then blocks in
# read(0) (LSan's exit_atexit_stale_stack). A live -p check says definitely
# lost, and assumes no red zone: x86-64's red zone is not one of a thread
# in a system call (before that rule, alloctrace called the block
# reachable), and arm64 has none. The control: the stale word is there,
# within 128 bytes below the stack pointer of the read, read from /proc
# (else the check could not fail).
# Not compared with valgrind yet (the leak check of a live valgrind run
# goes through vgdb; see docs/reliability.md).
set -u
source "$(dirname "$0")/../lib.sh"
require_built "$WL/stalezone"

# The offsets below the stack pointer of process $1's system call where a
# word points into the block at $2 (64 bytes), within the red zone.
stale_words() {
	local sp
	sp=$(awk '{ print $(NF - 1) }' "/proc/$1/syscall")
	python3 - "$1" "$sp" "$2" <<'PY'
import struct, sys
pid, sp, blk = int(sys.argv[1]), int(sys.argv[2], 16), int(sys.argv[3], 16)
with open(f"/proc/{pid}/mem", "rb") as f:
    f.seek(sp - 128)
    d = f.read(128)
print(" ".join(str(128 - 8 * i) for i in range(16)
               if blk <= struct.unpack_from("<Q", d, 8 * i)[0] < blk + 64))
PY
}

live() {
	local r blk words
	mkfifo "$TMP/in"
	sleep 120 >"$TMP/in" &
	track $!
	HOLD=$!
	"$WL/stalezone" <"$TMP/in" >"$TMP/wl" &
	track $!
	W=$!
	start_tool pid 60 --leak-check -T 0 --format json -i 3600 -p "$W"
	wait_tracing pid 30 || fail "live: tracing" "no 'tracing pid' line in 30 s"
	# Not a plain echo: with the workload gone, opening the FIFO would block.
	timeout 30 sh -c 'echo g >"$1"' sh "$TMP/in" || fail "live: go" "$(cat "$TMP/wl")"
	wait_for 30 grep -q '^ready$' "$TMP/wl" || fail "live: ready" "not ready in 30 s"
	wait_for 30 grep -q "^$(by_arch 0 63) " "/proc/$W/syscall" ||
		fail "live: blocked in read" "not in read(2) in 30 s: $(cat "/proc/$W/syscall")"
	blk=$(awk '/^block /{ print $2 }' "$TMP/wl")
	words=$(stale_words "$W" "$blk")
	expect_match "control: the block's pointer is within 128 bytes below the read's stack pointer" '^[0-9]' "$words"
	kill -INT "$(loader_pid)"
	wait_tool
	r=$(final_report "$TMP/pid.out")
	expect_eq "live: exit status" 0 "$RC"
	expect_eq "live: the block below the stack pointer definitely lost" \
		"leave_below definitely lost 64 1" \
		"$(leak_classes "$r" '.stacks[] | [.frames[0].function, .]')"
	expect_eq "live: no red zone assumed (its thread was in a system call)" \
		'["untracked_blocks_as_roots"]' "$(jq -c '.leak_check.assumptions' <<<"$r")"
	expect_eq "control: the word still there after the check" "$words" "$(stale_words "$W" "$blk")"
	kill "$HOLD" 2>/dev/null
	wait "$W"
	expect_eq "live: the target exits 0" 0 "$?"
}

cases live
plan
finish
