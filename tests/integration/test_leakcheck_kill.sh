#!/bin/bash
# --leak-check -p never harms its target when alloctrace itself dies:
# SIGKILL at random instants over the pause (the target stopped, the clone
# under way), the scan (the snapshot child there) and the reap, and one OOM
# kill (the kernel's OOM killer sends SIGKILL too). After each: the target
# alive, not stopped, still ticking; no child of it left, no clone of it
# running anywhere, no keeper left, no probe left.
# KILL_TRIALS sets the number of SIGKILL trials (12 by default, 3 a phase,
# about a minute on an idle machine; KILL_TRIALS=200 for the long run).
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$0")/../lib.sh"
TRIALS=${KILL_TRIALS:-12}
MB=${KILL_MB:-256} # KILL_MB: another size lets two runs go at once (clones are told by it)
HARMED=0

# A new bigheap with MB megabytes, allocated and ticking; BIG is its pid.
new_target() {
	local n=$((++TARGETS))
	mkfifo "$TMP/in$n"
	sleep 3600 >"$TMP/in$n" &
	track $!
	TICKS=$TMP/ticks$n
	"$WL/bigheap" "$MB" 3600 <"$TMP/in$n" >"$TICKS" &
	BIG=$!
	track "$BIG"
	echo go >"$TMP/in$n"
	wait_for 60 grep -q '^tick 1$' "$TICKS" || fail "target" "no tick in 60 s"
}

state() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || return 0
	line=${line##*) }
	echo "${line%% *}"
}

# The target's children: pgrep's view (PPid) and the kernel's own list.
children() {
	pgrep -P "$1"
	cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep .
}

# Any process running bigheap but the target: a clone let run.
clones() {
	pgrep -f "^$WL/bigheap $MB " | grep -vx "$1"
}

ticking() {
	(($(grep -c '^tick' "$TICKS") > $1))
}

no_children() { [[ -z $(children "$1") ]]; }
running() { [[ $(state "$1") == [RS] ]]; }
# The pause lasts milliseconds: polled without a sleep, for 30 s at most.
spin_until_stopped() {
	local line deadline=$((SECONDS + 30))
	while ((SECONDS < deadline)); do
		read -r line 2>/dev/null <"/proc/$1/stat" || return 1
		line=${line##*) }
		[[ $line == [tT]* ]] && return 0
	done
	return 1
}
has_child() { [[ -n $(pgrep -P "$1") ]]; }
new_child() { [[ -n $(pgrep -P "$BIG") && $(pgrep -P "$BIG" | head -n 1) != "$1" ]]; }
zombie_or_gone() { [[ $(state "$1") == [ZX] ]] || dead "$1"; }

# harmed NAME: why the target is harmed, or nothing. The keeper finishes
# the step under way after alloctrace's death: the checks wait for it
# (bounded), then look.
harmed() {
	local t0
	alive "$BIG" || { echo "the target died"; return; }
	wait_for 10 running "$BIG" || { echo "the target is left in state $(state "$BIG")"; return; }
	t0=$(grep -c '^tick' "$TICKS")
	wait_for 10 ticking "$t0" || { echo "the target no longer ticks"; return; }
	wait_for 10 no_children "$BIG" || { echo "child left: $(children "$BIG" | sort -u | xargs)"; return; }
	[[ -z $(clones "$BIG") ]] || { echo "a clone runs: $(clones "$BIG" | xargs)"; return; }
	for k in $KEEPERS; do
		wait_for 10 dead "$k" || { echo "keeper $k left"; return; }
	done
	[[ -z $LINKED ]] || echo "the keeper holds more than its socket: $LINKED"
}

# What the keepers of the moment hold beyond stdin, stdout, stderr and the
# socket (fd 3): a probe's link would keep the probe after alloctrace. Read
# at once: a look at every process's links (uprobe_links) takes seconds on
# a loaded machine, so that one is made every tenth trial and at the end.
keeper_extra_fds() {
	local k
	for k in $KEEPERS; do
		ls "/proc/$k/fd" 2>/dev/null | grep -vx '[0-3]'
	done | xargs
}

# Not `wait_for test -z "$(uprobe_links ...)"`: that reads the links once.
no_links() {
	[[ -z $(uprobe_links "$BIG") ]]
}

no_probe() {
	wait_for 10 no_links || fail "$1: no probe left" "$(uprobe_links "$BIG")"
}

# kill_at NAME PHASE: alloctrace checking the target every 0.2 s, killed
# at a random instant of PHASE.
kill_at() {
	local name=$1 phase=$2 ms=$((RANDOM % 1000)) why
	start_tool "$name" 120 --leak-check -T 0 --format json -i 0.2 -p "$BIG"
	# One that does not start in time is ended before the next trial: two at
	# once would see each other's snapshot child.
	if ! wait_tracing "$name" 60; then
		fail "$name: tracing" "no 'tracing pid' line in 60 s"
		kill -TERM "$TOOL_PID"
		wait_tool
		return
	fi
	case $phase in
	pause) # 0-25 ms after the target is seen stopped
		spin_until_stopped "$BIG"
		sleep "0.0$(printf %02d $((ms % 26)))" ;;
	scan) # 0-300 ms into the scan
		wait_for 30 has_child "$BIG"
		sleep "0.$(printf %03d $((ms % 301)))" ;;
	reap) # 0-5 ms after the snapshot child is killed, before it is reaped
		wait_for 30 has_child "$BIG"
		CHILD=$(pgrep -P "$BIG" | head -n 1)
		wait_for 30 zombie_or_gone "$CHILD"
		sleep "0.00$((ms % 6))" ;;
	*) # anywhere in the first 1.5 s
		sleep "$((ms / 667)).$(printf %03d $((ms * 3 / 2 % 1000)))" ;;
	esac
	KEEPERS=$(pgrep -P "$(loader_pid)" | xargs)
	LINKED=$(keeper_extra_fds)
	kill -KILL "$(loader_pid)" 2>/dev/null
	[[ -n ${KILL_DEBUG:-} ]] && echo "# $name $phase $ms keepers=$KEEPERS t=$SECONDS"
	# (bash would say "Killed": it is what this test does)
	wait_tool 2>/dev/null
	why=$(harmed)
	if [[ -n $why ]]; then
		echo "# $name ($phase, $ms): $why"
		HARMED=$((HARMED + 1))
		kill -KILL "$BIG" $(clones "$BIG") 2>/dev/null
		new_target
	fi
}

TARGETS=0
new_target
phases=(pause scan reap any)
for ((i = 0; i < TRIALS; i++)); do
	kill_at "kill$i" "${phases[i % 4]}"
	((i % 10 != 9)) || no_probe "kill$i"
done
no_probe "$TRIALS SIGKILLs"
expect_eq "$TRIALS SIGKILLs of alloctrace: the target harmed in none" 0 "$HARMED"

# --- an OOM kill ------------------------------------------------------------------
# alloctrace moves into a memory cgroup of its own once it traces (its keeper
# is then born there); during a scan the cgroup's limit drops below its use,
# and the kernel's OOM killer picks alloctrace: the keeper is no candidate.
new_memory_cgroup alloctrace-kill
[[ -n $CG ]] || fail "oom: setup" "no memory cgroup to make under /sys/fs/cgroup"
trap 'rmdir "$CG" 2>/dev/null; cleanup' EXIT
# limit BYTES: the cgroup's memory limit, v1 or v2 (no swapping out of it).
limit() {
	if [[ -e $CG/memory.limit_in_bytes ]]; then
		echo "$1" >"$CG/memory.limit_in_bytes"
	else
		echo "$1" >"$CG/memory.max"
	fi
}
usage() {
	cat "$CG/memory.usage_in_bytes" "$CG/memory.current" 2>/dev/null | head -n 1
}
oom_kills() {
	cat "$CG/memory.events" "$CG/memory.oom_control" 2>/dev/null | sed -n 's/^oom_kill //p'
}
if [[ -d $CG ]]; then
	[[ -e $CG/memory.swap.max ]] && echo 0 >"$CG/memory.swap.max"
	start_tool oom 60 --leak-check -T 0 --format json -i 0.2 -p "$BIG"
	wait_tracing oom 30 || fail "oom: tracing" "no 'tracing pid' line in 30 s"
	echo "$(loader_pid)" >"$CG/cgroup.procs"
	# A snapshot begun after the move, its keeper in the cgroup too.
	BEFORE=$(pgrep -P "$BIG" | head -n 1)
	wait_for 30 new_child "$BEFORE" || fail "oom: scan" "no new snapshot child in 30 s"
	KEEPERS=$(pgrep -P "$(loader_pid)" | xargs)
	LINKED=$(keeper_extra_fds)
	# The scan's next 256 KiB are over the limit: the cgroup's OOM killer
	# ends alloctrace. Its pages gone, the keeper has room for its own.
	LOADER=$(loader_pid)
	limit $(($(usage) + (256 << 10)))
	# A scan that already had what it needs goes on under that limit (a
	# loaded machine's was past its allocations): then whatever alloctrace
	# does next is over a limit below what it holds.
	wait_for 10 dead "$LOADER" || limit $((1 << 20))
	wait_tool 2>/dev/null
	limit max 2>/dev/null || limit -1
	expect_eq "oom: alloctrace was OOM-killed (SIGKILL)" 137 "$RC"
	expect_eq "oom: by the cgroup's OOM killer" 1 "$(oom_kills)"
	expect_eq "oom: a keeper was there" 1 "$(wc -w <<<"$KEEPERS")"
	expect_eq "oom: the target unharmed" "" "$(harmed)"
	no_probe oom
fi
finish
