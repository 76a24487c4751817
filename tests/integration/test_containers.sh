#!/bin/bash
# Containers and services: --cgroup with a cgroup made here (a process in
# it from before the start, one joining a cgroup below it later, one
# outside it left out), a process in a pid and mount namespace of its own
# whose program only its /tmp holds (host and namespace pids, symbols read
# through /proc/PID/root), and --comm following a service killed and
# started again. Exact numbers on tests/workloads/target.c: attached after
# its start it shows 14 allocs, 5 frees, 12 untracked frees; traced from
# its exec 26 allocs, 17 frees, none untracked; 9000 bytes in 9 blocks
# (target_leak) either way.
# test: serial (makes cgroups and namespaces, and --comm follows a name machine-wide)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/target"

# expect_target NAME PROC ALLOCS FREES UNTRACKED: target's totals and its leak.
expect_target() {
	expect_eq "$1: totals" \
		"{\"outstanding_bytes\":9000,\"outstanding_allocs\":9,\"allocs\":$3,\"frees\":$4,\"untracked_frees\":$5,\"lost\":0}" \
		"$(report_get "$2" '.totals | {outstanding_bytes, outstanding_allocs, allocs, frees, untracked_frees, lost}')"
	expect_eq "$1: target_leak" "9000 9" \
		"$(fn_sum "$2" outstanding_bytes target_leak) $(fn_sum "$2" outstanding_allocs target_leak)"
}

LIBC=$(ldd "$WL/target" | awk '/libc\.so/ { print $3 }')

# The cgroup v2 hierarchy: /sys/fs/cgroup itself, or .../unified beside v1's.
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=
remove_cgroup() {
	local d
	[[ -n $CG ]] || return 0
	for d in "$CG/sub" "$CG"; do
		[[ -d $d ]] || continue
		# Whatever a failed case left in it goes first: a cgroup with processes stays.
		xargs -r kill -KILL <"$d/cgroup.procs" 2>/dev/null
		wait_for 5 rmdir "$d" 2>/dev/null
	done
}
trap 'cleanup; remove_cgroup' EXIT

# --cgroup: the one there before the start and the one joining below it
# later, with exact numbers; the same program outside it is not reported.
cgroup() {
	local in later out r
	[[ -n $CG_ROOT ]] || {
		fail "cgroup: hierarchy" "no cgroup2 file system mounted"
		return
	}
	CG=$CG_ROOT/alloctrace-test-$$
	mkdir "$CG" "$CG/sub" || {
		fail "cgroup: mkdir" "cannot make $CG"
		return
	}
	# shellcheck disable=SC2016 # $$ is the inner shell's
	start_workload "$TMP/cg_in" sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3" 60' \
		sh "$CG" "$WL/target" "$TMP/cg_in" || return
	in=$WPID
	start_workload "$TMP/cg_out" "$WL/target" "$TMP/cg_out" 60 || return
	out=$WPID
	start_tool cg 60 --format json -T 0 --top-processes 0 --cgroup "$CG" -i 1
	wait_line cg "tracing every process in cgroup $CG that calls the allocator in .*libc" || {
		fail "cgroup: tracing" "no 'tracing every process in cgroup' line: $(head -c 300 "$TMP/cg.err")"
		return
	}
	# shellcheck disable=SC2016
	start_workload "$TMP/cg_later" sh -c 'echo $$ >"$1/sub/cgroup.procs" && exec "$2" "$3" 60' \
		sh "$CG" "$WL/target" "$TMP/cg_later" || return
	later=$WPID
	kill -USR1 "$in" "$later" "$out"
	wait_for 10 test -e "$TMP/cg_in/done" -a -e "$TMP/cg_later/done" -a -e "$TMP/cg_out/done"
	# The final report after the leaks, whenever that is on a busy machine.
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok cg || return
	r=$(final_report "$TMP/cg.out")
	expect_target "cgroup: there before the start" "$(proc_of "$r" "$in")" 14 5 12
	expect_target "cgroup: joined a cgroup below it later" "$(proc_of "$r" "$later")" 26 17 0
	expect_eq "cgroup: the same program outside it left out" "" "$(proc_of "$r" "$out")"
	expect_eq "cgroup: processes" 2 "$(jq '.processes | length' <<<"$r")"
}

# ns_target NAME [PROGRAM ARG]: run a copy of PROGRAM (target, given 60)
# named NAME, /tmp/d its handshake directory, in new pid and mount
# namespaces, as a container would: from a tmpfs mounted over /tmp there,
# which the host does not see, with a C library of its own there too
# (another file than the host's, which must be probed apart). It is pid 1
# there. Sets WPID to its host pid and NSDIR to where its handshake files
# are, seen from the host through /proc/PID/root.
ns_target() {
	local unshare
	# The files are opened before the tmpfs hides them, and copied onto it.
	# shellcheck disable=SC2016
	unshare --pid --mount --fork sh -c 'exec 3<"$1" 4<"$2" && mount -t tmpfs none /tmp &&
		mkdir /tmp/d /tmp/lib && cat <&3 >"/tmp/$3" && cat <&4 >/tmp/lib/libc.so.6 &&
		chmod +x "/tmp/$3" && LD_LIBRARY_PATH=/tmp/lib exec 3<&- 4<&- "/tmp/$3" /tmp/d "$4"' \
		sh "${2:-$WL/target}" "$LIBC" "$1" "${3:-60}" &
	unshare=$!
	track "$unshare"
	wait_for 10 pgrep -P "$unshare" >/dev/null || return 1
	WPID=$(pgrep -P "$unshare")
	track "$WPID"
	NSDIR=/proc/$WPID/root/tmp/d
	wait_for 10 test -e "$NSDIR/ready"
}

# serves PORT LINE: /metrics on PORT has the line LINE.
serves() {
	curl -s "http://127.0.0.1:$1/metrics" | grep -qxF "$2"
}

# expect_ns NAME PROC PID PROGRAM: host and namespace pids, and the
# leak's frames named from its program in the namespace's /tmp. (Its
# numbers prove its own C library probed: the host's is not mapped there.)
expect_ns() {
	expect_eq "$1: host and namespace pids" "[$3,1]" "$(report_get "$2" '[.pid, .ns_pid]')"
	expect_eq "$1: the leak's frames, from /tmp of its namespace" \
		'["target_leak","/tmp/'"$4"'","main","/tmp/'"$4"'"]' \
		"$(report_get "$2" '[.stacks[0].frames[0:2][] | .function, .module]')"
}

# Pid namespaces, found by --comm: one there before the start, one started
# after; host and namespace pids, exact numbers, frames named through
# /proc/PID/root; alerts of 1000-byte blocks with both pids. And -p on
# one, whose text report and alerts, and the metrics it serves, name both.
namespaces() {
	local name=ns$$ r before after text port metric
	name=${name:0:15}
	ns_target "$name" || {
		fail "ns: target" "not ready in its namespace"
		return
	}
	before=$WPID
	expect_eq "ns: not on the host's /tmp" "no" "$([[ -e /tmp/$name ]] && echo yes || echo no)"
	start_tool ns 60 -v --format json -T 0 --top-processes 0 --comm "$name" -i 1 --big 1000
	wait_line ns "tracing every process named '$name'" || {
		fail "ns: tracing" "no 'tracing every process named' line: $(head -c 300 "$TMP/ns.err")"
		return
	}
	ns_target "$name" || {
		fail "ns: target after the start" "not ready in its namespace"
		return
	}
	after=$WPID
	# Its own C library is probed once its exec is seen, which -v says:
	# its start may go unseen, not the leak it makes when told to.
	wait_line ns "tracing pid $after \\($name\\): ([0-9]+ probes|the probes) in" ||
		fail "ns: started after: tracing" "no 'tracing pid $after' line in 20 s"
	kill -USR1 "$before" "$after"
	wait_for 10 test -e "/proc/$before/root/tmp/d/done" -a -e "$NSDIR/done"
	# The report after the leaks, whenever that is on a busy machine.
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok ns || return
	r=$(final_report "$TMP/ns.out")
	expect_target "ns: there before the start" "$(proc_of "$r" "$before")" 14 5 12
	expect_ns "ns: there before the start" "$(proc_of "$r" "$before")" "$before" "$name"
	expect_eq "ns: started after, its leak" "9000 9" \
		"$(fn_sum "$(proc_of "$r" "$after")" outstanding_bytes target_leak) $(fn_sum "$(proc_of "$r" "$after")" outstanding_allocs target_leak)"
	expect_ns "ns: started after" "$(proc_of "$r" "$after")" "$after" "$name"
	# Both sides in the same text order: after a pid wrap "after" may sort first.
	expect_eq "ns: big-allocation alerts name both pids" \
		"$(printf '%s 1 9\n' "$before" "$after" | sort | paste -sd ';')" \
		"$(jq -r 'select(.type == "big_alloc") | "\(.pid) \(.ns_pid)"' "$TMP/ns.out" |
			sort | uniq -c | awk '{ print $2, $3, $1 }' | sort | paste -sd ';')"

	ns_target "$name" || {
		fail "ns -p: target" "not ready in its namespace"
		return
	}
	port=$(free_port)
	start_tool ns_p 60 -T 0 -p "$WPID" -i 1 --big 1000 --listen "127.0.0.1:$port"
	wait_tracing ns_p 30 || {
		fail "ns -p: tracing" "no 'tracing pid' line: $(head -c 300 "$TMP/ns_p.err")"
		return
	}
	kill -USR1 "$WPID"
	wait_for 10 test -e "$NSDIR/done"
	metric="alloctrace_outstanding_bytes{pid=\"$WPID\",ns_pid=\"1\",comm=\"$name\"} 9000"
	expect_true "ns -p: metrics name both pids" "no '$metric' in 10 s" \
		wait_for 10 serves "$port" "$metric"
	kill -INT "$TOOL_PID"
	wait_tool
	expect_eq "ns -p: exit status" 0 "$RC"
	text=$(grep -m1 -E "final report, pid $WPID " "$TMP/ns_p.out")
	expect_match "ns -p: text names both pids" \
		"final report, pid $WPID \\(ns pid 1\\) \\($name\\): 8\\.8 KiB \\(9,000 bytes\\) outstanding in 9 blocks; 14 allocs, 5 frees, 12 untracked frees" \
		"$text"
	expect_match "ns -p: the leak's function" "target_leak" "$(cat "$TMP/ns_p.out")"
	expect_eq "ns -p: text alerts name both pids" 9 \
		"$(grep -cE "BIG ALLOC pid $WPID \(ns pid 1\) tid $WPID: malloc 1000 bytes = 0x" "$TMP/ns_p.out")"
}

# A child forked in a pid namespace and gone before any report: its
# namespace pid is the BPF side's, noted at the fork (/proc has none left).
# It is 7 there: ns_target's shell is 1 and ran 5 commands (mount, mkdir,
# cat, cat, chmod) before it became the forker.
ns_fork() {
	local name=fk$$ r parent
	name=${name:0:15}
	ns_target "$name" "$WL/forker" fork || {
		fail "ns fork: forker" "not ready in its namespace"
		return
	}
	parent=$WPID
	start_tool ns_fork 60 --format json -T 0 --top-processes 0 --comm "$name" -i 1
	wait_line ns_fork "tracing every process named '$name'" || {
		fail "ns fork: tracing" "no 'tracing every process named' line"
		return
	}
	kill -USR1 "$parent"
	wait_for 10 test -e "$NSDIR/done"
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok ns_fork || return
	r=$(final_report "$TMP/ns_fork.out")
	expect_eq "ns fork: the parent, its pids and leak" "[$parent,1,1500,3]" \
		"$(jq -c --argjson p "$parent" '.processes[] | select(.pid == $p) |
			[.pid, .ns_pid, .totals.outstanding_bytes, .totals.outstanding_allocs]' <<<"$r")"
	expect_eq "ns fork: the child gone, its namespace pid and leak" '[7,5,2100,7,2]' \
		"$(ended_proc "$TMP/ns_fork.out" ".parent == $parent" | jq -c '[.ns_pid, .exit.status,
			.totals.outstanding_bytes, .totals.outstanding_allocs, .totals.untracked_frees]')"
}

# --comm: a service killed and started again under the same name; each
# incarnation reported with its own numbers, the first in the report that
# tells its end. The same program under another name is not reported:
# its own, the name less its last letter, or the name and one more.
restart() {
	local name=svc$$ first second others=() o r
	name=${name:0:14}
	cp "$WL/target" "$TMP/$name"
	start_workload "$TMP/rs1" "$TMP/$name" "$TMP/rs1" 60 || return
	first=$WPID
	for o in target "${name%?}" "${name}x"; do
		mkdir -p "$TMP/rs_$o"
		cp "$WL/target" "$TMP/rs_$o/$o"
		start_workload "$TMP/rs_$o" "$TMP/rs_$o/$o" "$TMP/rs_$o" 60 || return
		others+=("$WPID")
	done
	start_tool rs 60 --format json -T 0 --top-processes 0 --comm "$name" -i 1
	wait_line rs "tracing every process named '$name'" || {
		fail "comm: tracing" "no 'tracing every process named' line: $(head -c 300 "$TMP/rs.err")"
		return
	}
	kill -USR1 "$first" "${others[@]}"
	wait_for 10 test -e "$TMP/rs1/done"
	{ kill -KILL "$first" && wait "$first"; } 2>/dev/null
	start_workload "$TMP/rs2" "$TMP/$name" "$TMP/rs2" 60 || return
	second=$WPID
	kill -USR1 "$second"
	wait_for 10 test -e "$TMP/rs2/done"
	# The first one's end, in a report after it was killed.
	wait_for 10 grep -q '"signal":9' "$TMP/rs.out"
	kill -INT "$(loader_pid)"
	wait_tool
	expect_tool_ok rs || return
	r=$(jq -c --argjson p "$first" 'select(.type == "report") | .processes[] |
		select(.pid == $p)' "$TMP/rs.out" | tail -n 1)
	expect_target "comm: the first, attached at the start" "$r" 14 5 12
	expect_eq "comm: the first killed" 9 "$(report_get "$r" '.exit.signal')"
	r=$(proc_of "$(final_report "$TMP/rs.out")" "$second")
	expect_target "comm: the second, from its exec" "$r" 26 17 0
	expect_eq "comm: other names left out" "0 0 0" \
		"$(for o in "${others[@]}"; do
			jq -c --argjson p "$o" 'select(.type == "report") | .processes[] |
				select(.pid == $p)' "$TMP/rs.out" | wc -l
		done | paste -sd ' ')"
}

cgroup
namespaces
ns_fork
restart
finish
