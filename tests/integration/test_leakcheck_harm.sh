#!/bin/bash
# --leak-check never harms its target: SIGINT during a scan of a big heap
# (once: the scan ends, the final report scans again; twice: alloctrace
# dies, but only after letting the target go), a target that exits during
# a scan, a target already under a debugger (gdb, strace), and a zombie.
# After each: the target runs on (not stopped, still ticking), no snapshot
# child is left, no probe is left.
set -u
source "$(dirname "$0")/../lib.sh"
SCAN=$ROOT/build/tests/leakscan
MB=512
# Reachable: the blocks, and stdout's buffer (a file's: 4 KiB).
HEAP="$(((MB << 20) + 4096)) $((MB * 256 + 1))"

# big NAME SECONDS: bigheap with MB megabytes, allocating once told; BIG is its pid.
big() {
	mkfifo "$TMP/$1.in"
	sleep 300 >"$TMP/$1.in" &
	track $!
	HOLD=$!
	"$WL/bigheap" "$MB" "$2" <"$TMP/$1.in" >"$TMP/$1.ticks" &
	BIG=$!
	track "$BIG"
}

# go NAME: let it allocate, and wait until it ticks.
go() {
	echo go >"$TMP/$1.in"
	wait_for 60 grep -q '^tick 1$' "$TMP/$1.ticks"
}

# The snapshot child of process $1 (its only child), if any.
snapshot_child() {
	pgrep -P "$1" | head -n 1
}

has_new_child() {
	local c
	c=$(snapshot_child "$1")
	[[ -n $c && $c != "$2" ]]
}

ticks() {
	grep -c '^tick' "$1"
}

# scanning NAME: a big heap as NAME, alloctrace checking it every second,
# and its first scan under way (the snapshot child there).
scanning() {
	big "$1" 120
	start_tool "$1" 120 --leak-check -T 0 --format json -i 1 -p "$BIG"
	wait_tracing "$1" 30 || fail "$1: tracing" "no 'tracing pid' line in 30 s"
	go "$1" || fail "$1: target" "no tick in 60 s"
	wait_for 60 has_new_child "$BIG" "" || fail "$1: scan" "no snapshot child in 60 s"
}

state() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1
}

# unharmed NAME PID: runs, ticks on, no child, no probe.
unharmed() {
	local name=$1 pid=$2 t0
	expect_true "$name: the target is alive" "pid $pid gone" alive "$pid"
	expect_match "$name: the target is not stopped" '^[RS]$' "$(state "$pid")"
	t0=$(ticks "$TMP/$name.ticks")
	sleep 0.5
	expect_true "$name: the target still ticks" "no tick in 0.5 s after $t0" \
		test "$(ticks "$TMP/$name.ticks")" -gt "$t0"
	expect_eq "$name: no snapshot child left" "" "$(snapshot_child "$pid")"
	expect_eq "$name: no probe left" "" "$(uprobe_links "$pid")"
}

reports() {
	jq -c 'select(.type == "report")' "$1"
}

# --- one SIGINT during a scan -----------------------------------------------
scanning once
kill -INT "$(loader_pid)"
wait_tool
expect_eq "once: exit status" 0 "$RC"
expect_eq "once: the scan SIGINT ended says so" '"interrupted by a signal"' \
	"$(reports "$TMP/once.out" | jq -c 'select(.final | not) | .leak_check.error' | tail -n 1)"
R=$(final_report "$TMP/once.out")
expect_eq "once: the final report scans again: the whole heap reachable" "$HEAP 0 0" \
	"$(report_get "$R" '.totals | "\(.reachable_bytes) \(.reachable_allocs) \(.definitely_lost_bytes) \(.possibly_lost_bytes)"' | tr -d '"')"
expect_eq "once: no warning" "" "$(unsaid "$TMP/once.err")"
unharmed once "$BIG"
kill "$HOLD" "$BIG" 2>/dev/null

# --- a second SIGINT during the final report's scan ----------------------------
scanning twice
kill -INT "$(loader_pid)"
# Signals coalesce: the second is sent once the first was handled (its
# scan's report is out, its child gone) and the final report's scan began.
wait_for 60 grep -q '"interrupted by a signal"' "$TMP/twice.out" ||
	fail "twice: first SIGINT" "no interrupted scan in 60 s"
wait_for 60 has_new_child "$BIG" "" || fail "twice: final scan" "no snapshot child in 60 s"
kill -INT "$(loader_pid)"
wait_tool
expect_eq "twice: killed by the second SIGINT" 130 "$RC"
unharmed twice "$BIG"
kill "$HOLD" "$BIG" 2>/dev/null

# --- the target exits during a scan --------------------------------------------
# Killed once the snapshot child is there: the check ends without verdicts
# (its blocks leave the BPF table), as for a process that had exited before.
scanning exits
kill -TERM "$BIG"
wait_tool
expect_eq "exits: exit status" 0 "$RC"
expect_eq "exits: no report says the check failed" "" \
	"$(reports "$TMP/exits.out" | jq -c 'select(.leak_check.error) | .leak_check.error')"
expect_eq "exits: after it, no verdicts, as for any exited process" "null" \
	"$(report_get "$(final_report "$TMP/exits.out")" .leak_check)"
expect_eq "exits: no warning" "" "$(unsaid "$TMP/exits.err")"
expect_eq "exits: no snapshot child left" "" "$(pgrep -f "^$WL/bigheap $MB ")"
kill "$HOLD" 2>/dev/null

# --- already under a debugger ---------------------------------------------------
MB=1
big strace 120
strace -qq -p "$BIG" -o /dev/null &
STRACE=$!
track "$STRACE"
go strace || fail "strace: target" "no tick in 60 s"
wait_for 10 grep -q "^TracerPid:[[:space:]]*$STRACE\$" "/proc/$BIG/status"
run_tool strace 60 --leak-check -T 0 --format json -i 0.3 -n 3 -p "$BIG"
expect_eq "strace: exit status" 0 "$RC"
expect_eq "strace: one clear line, once" \
	"alloctrace: process $BIG is already traced by process $STRACE: detach the debugger first" \
	"$(unsaid "$TMP/strace.err")"
expect_eq "strace: every report says why it has no verdicts" \
	'"the process is traced by another program (a debugger)" 3' \
	"$(reports "$TMP/strace.out" | jq -r '.leak_check.error' | uniq -c | awk '{ c = $1; $1 = ""; print "\"" substr($0, 2) "\" " c }')"
kill "$STRACE"
wait "$STRACE" 2>/dev/null
unharmed strace "$BIG"
kill "$HOLD" "$BIG" 2>/dev/null

# gdb stops the target while it holds it: the check must not wait for it.
big gdb 120
go gdb || fail "gdb: target" "no tick in 60 s"
gdb -q -batch -p "$BIG" -ex 'shell sleep 20' >/dev/null 2>&1 &
GDB=$!
track "$GDB"
wait_for 20 grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$BIG/status"
run_tool gdb 60 --leak-check -T 0 --format json -n 1 -p "$BIG"
expect_eq "gdb: exit status" 0 "$RC"
expect_match "gdb: one clear line" \
	"^alloctrace: process $BIG is already traced by process [0-9]+: detach the debugger first\$" \
	"$(unsaid "$TMP/gdb.err")"
expect_eq "gdb: the final report says why it has no verdicts" \
	'"the process is traced by another program (a debugger)"' \
	"$(report_get "$(final_report "$TMP/gdb.out")" .leak_check.error)"
kill "$GDB"
wait "$GDB" 2>/dev/null
wait_for 10 grep -q "^TracerPid:[[:space:]]*0$" "/proc/$BIG/status"
unharmed gdb "$BIG"
kill "$HOLD" "$BIG" 2>/dev/null

# --- a zombie: nothing to stop, "no such process", nothing touched -------------
# sh forks `true` and becomes cat, which never reaps it.
timeout -k 5 30 "$SCAN" sh -c 'true & echo "pid $!"; sleep 0.2; echo ready; exec cat' \
	>"$TMP/zombie.out" 2>"$TMP/zombie.err"
expect_match "zombie: the scan says the process is gone" \
	"^leakscan: scan of process [0-9]+ failed: No such process\$" "$(cat "$TMP/zombie.err")"
finish
