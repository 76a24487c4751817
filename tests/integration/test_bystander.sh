#!/bin/bash
# Breakpoints only in traced processes: under --follow-forks -- CMD, an
# untraced process started before alloctrace and one started after it hold
# no breakpoint at any allocator probe site alloctrace names with -v (their
# memory at the site, found through /proc/PID/maps and read from
# /proc/PID/mem, is the file's own bytes), while the launched command holds
# them there and it and its forked child, whose own probes are attached at
# its first ptrace stop, are counted exactly (tests/workloads/forker.c: the
# parent 1500 bytes in 3 blocks, the child 2100 in 7 and 2 untracked
# frees). --comm, --cgroup and -p with --follow-forks still probe every
# process (see alloctrace(8)): not checked here.
# test: serial (another script's --all, --comm or --cgroup run probes every process's C library)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/forker"

# sites NAME: "PATH OFFSET" of each allocator probe the tool NAME named.
sites() {
	sed -nE 's/^alloctrace: u(ret)?probe (session )?.* at (\/[^ ]+)\+0x([0-9a-f]+), .*/\3 \4/p' \
		"$TMP/$1.err" | sort -u
}

# held PID NAME: the sites of NAME where PID's memory is not its file's
# (4 bytes: x86-64's int3 is one, arm64's BRK four); sites in a file PID
# does not map are not its.
held() {
	local path off range mapoff rest start end
	sites "$2" | while read -r path off; do
		while read -r range _ mapoff _ _ rest; do
			[[ $rest == "$path" ]] || continue
			start=$((16#${range%-*})) end=$((16#${range#*-}))
			((16#$off >= 16#$mapoff && 16#$off < 16#$mapoff + end - start)) || continue
			cmp -s <(dd if="$path" bs=4 iflag=skip_bytes skip=$((16#$off)) count=1 2>/dev/null) \
				<(dd if="/proc/$1/mem" bs=4 iflag=skip_bytes \
					skip=$((start + 16#$off - 16#$mapoff)) count=1 2>/dev/null) ||
				echo "$path+0x$off"
		done <"/proc/$1/maps"
	done
}

# check NAME FORKER_PID DIR BEFORE: the forker DIR made its child and
# waits; the bystanders (BEFORE and one started now) hold no breakpoint,
# the forker does; then both finish and the final report is checked.
check() {
	local name=$1 f=$2 dir=$3 before=$4 after r c
	sleep 120 &
	after=$!
	track "$after"
	kill -USR1 "$f"
	wait_for 20 test -e "$dir/done" || {
		fail "$name: forker" "no done file 20 s after SIGUSR1"
		return
	}
	expect_true "$name: alloctrace names its allocator sites" "none in -v" test -n "$(sites "$name")"
	expect_true "$name: the traced process holds breakpoints at them" "none" \
		test -n "$(held "$f" "$name")"
	expect_eq "$name: no breakpoint in a process started before" "" "$(held "$before" "$name")"
	expect_eq "$name: no breakpoint in a process started after" "" "$(held "$after" "$name")"
	kill -USR1 "$f"
	wait_for 10 dead "$f"
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok "$name" || return
	r=$(final_report "$TMP/$name.out")
	expect_eq "$name: the forker, exactly" '[1500,3,3,0,0]' \
		"$(ended_proc "$TMP/$name.out" ".pid == $f" | jq -c '.totals |
			[.outstanding_bytes, .outstanding_allocs, .allocs, .frees, .untracked_frees]')"
	c=$(ended_proc "$TMP/$name.out" ".parent == $f")
	expect_eq "$name: its child, from its first allocation" '[2100,7,7,0,2]' \
		"$(jq -c '.totals | [.outstanding_bytes, .outstanding_allocs, .allocs, .frees,
			.untracked_frees]' <<<"$c")"
	expect_eq "$name: no bystander reported" "" \
		"$(jq -c --argjson a "$before" --argjson b "$after" \
			'.processes[] | select(.pid == $a or .pid == $b)' <<<"$r")"
}

by_follow() {
	local before f
	sleep 120 &
	before=$!
	track "$before"
	mkdir -p "$TMP/follow"
	start_tool follow 60 -v --format json -T 0 --top-processes 0 -i 1 --follow-forks -- \
		"$WL/forker" "$TMP/follow" fork
	wait_for 20 test -e "$TMP/follow/ready" || {
		fail "follow: forker" "not ready in 20 s"
		return
	}
	f=$(pgrep -P "$(loader_pid)" -x forker)
	check follow "$f" "$TMP/follow" "$before"
}

cases by_follow
finish
