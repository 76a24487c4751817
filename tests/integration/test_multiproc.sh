#!/bin/bash
# Several processes: a list for -p, the children of a traced process with
# --follow-forks (and ignored without it), every process with --all, the
# per-process cap, and a process traced with -p that runs execve. Exact
# numbers on tests/workloads/forker.c and target.c; with --all only our
# own processes are looked at.
# test: serial (--all traces every process on the machine)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/forker" "$WL/target" "$WL/alloc_jemalloc_preload"

# child_of REPORT PID: the process forked from PID.
child_of() {
	jq -c --argjson p "$2" '.processes[] | select(.parent == $p)' <<<"$1"
}

# expect_proc NAME PROC BYTES BLOCKS ALLOCS FREES UNTRACKED LOST
expect_proc() {
	expect_eq "$1: totals" \
		"{\"outstanding_bytes\":$3,\"outstanding_allocs\":$4,\"allocs\":$5,\"frees\":$6,\"untracked_frees\":$7,\"lost\":$8}" \
		"$(report_get "$2" '.totals | {outstanding_bytes, outstanding_allocs, allocs, frees, untracked_frees, lost}')"
}

# fork_run NAME OPTIONS...: trace forker DIR fork with -p, let it fork its
# leaking child and exit; the final report is in R.
fork_run() {
	local name=$1
	shift
	start_workload "$TMP/$name" "$WL/forker" "$TMP/$name" fork || {
		fail "$name: forker" "not ready in 10 s"
		return 1
	}
	start_tool "$name" 60 --format json -T 0 -p "$WPID" "$@"
	wait_line "$name" 'tracing pid' || {
		fail "$name: tracing" "no 'tracing pid' line in 20 s"
		return 1
	}
	kill -USR1 "$WPID"
	wait_for 10 test -e "$TMP/$name/done" || {
		fail "$name: forker" "no done file 10 s after SIGUSR1"
		return 1
	}
	kill -USR1 "$WPID"
	wait_tool
	expect_tool_ok "$name" || return 1
	R=$(final_report "$TMP/$name.out")
}

# Without --follow-forks the child is not traced: one process, as ever.
fork_ignored() {
	fork_run fork_ignored || return
	expect_eq "fork_ignored: a report on one process" '"forker"' "$(report_get "$R" .comm)"
	expect_leak "$R" parent_leak 1500 3 3
	expect_no_stack "$R" child_leak
	expect_proc fork_ignored "$R" 1500 3 3 0 0 0
}

# With it, the child is a process of its own; the blocks it inherited are
# not its own: freeing two of them counts two untracked frees.
fork_followed() {
	local parent child
	fork_run fork_followed --follow-forks --folded "$TMP/ff.folded" --pprof "$TMP/ff.pb.gz" \
		--html "$TMP/ff.html" || return
	parent=$(proc_of "$R" "$WPID")
	child=$(child_of "$R" "$WPID")
	expect_eq "fork_followed: processes_total" 2 "$(report_get "$R" .processes_total)"
	expect_proc "fork_followed parent" "$parent" 1500 3 3 0 0 0
	expect_leak "$parent" parent_leak 1500 3 3
	expect_proc "fork_followed child" "$child" 2100 7 7 0 2 0
	# Gone before any report read its mappings: its parent's symbolize it.
	expect_leak "$child" child_leak 2100 7 7
	expect_eq "fork_followed child: exit" '{"status":5,"signal":null,"oom_killed":false}' \
		"$(report_get "$child" .exit)"
	expect_eq "fork_followed child: comm" '"forker"' "$(report_get "$child" .comm)"
	expect_totals_consistent "fork_followed parent" "$parent"
	expect_exports_by_process "$WPID" "$(report_get "$child" .pid)"
}

# expect_exports_by_process PARENT CHILD: fork_followed's files show each
# stack under its process, an outermost frame "pid N (forker)".
expect_exports_by_process() {
	local dom
	expect_eq "folded: stacks under their process" \
		"$(printf 'pid %s (forker);parent_leak 1500\npid %s (forker);child_leak 2100\n' "$1" "$2" | sort)" \
		"$(sed -E 's/;.*;/;/' "$TMP/ff.folded" | sort)"
	if command -v go >/dev/null; then
		expect_eq "pprof: a root per process" \
			"$(printf '1.46kB pid %s (forker)\n2.05kB pid %s (forker)\n' "$1" "$2" | sort)" \
			"$(go tool pprof -top -nodecount=100 "$TMP/ff.pb.gz" 2>/dev/null |
				awk '/ pid [0-9]+ \(forker\)$/ { print $4, $6, $7, $8 }' | sort)"
	else
		fail "pprof" "go is not installed (apt-get install golang-go)"
	fi
	expect_page_drawn html "$TMP/ff.html" || return
	dom=$DOM
	expect_match "html: the processes" "id=\"title-target\">— 2 processes \(pid [0-9]+, [0-9]+\)" "$dom"
	expect_eq "html: flame graph roots" "$(printf 'pid %s (forker)\n' "$1" "$2" | sort | paste -sd '|')" \
		"$(sed -n '/id="flame-bytes-svg"/,/<\/svg>/p' <<<"$dom" |
			grep -oE '<text[^>]*>pid [0-9]+ \(forker\)</text>' | sed 's/<[^>]*>//g' | sort -u |
			paste -sd '|')"
}

# A launched command's children, from their first instruction.
launch_followed() {
	local pid parent
	mkdir -p "$TMP/launch"
	start_tool launch 60 --format json -T 0 --follow-forks -- "$WL/forker" "$TMP/launch" fork
	wait_tracing launch 20 || {
		fail "launch: tracing" "no 'tracing pid' line in 20 s"
		return
	}
	pid=$TRACED
	wait_for 10 test -e "$TMP/launch/ready" && kill -USR1 "$pid" &&
		wait_for 10 test -e "$TMP/launch/done" && kill -USR1 "$pid"
	wait_tool
	expect_tool_ok launch || return
	R=$(final_report "$TMP/launch.out")
	parent=$(proc_of "$R" "$pid")
	expect_proc "launch parent" "$parent" 1500 3 3 0 0 0
	expect_eq "launch parent: exit" '{"status":0,"signal":null,"oom_killed":false}' \
		"$(report_get "$parent" .exit)"
	expect_proc "launch child" "$(ended_proc "$TMP/launch.out" ".parent == $pid")" 2100 7 7 0 2 0
}

# --leak-check's snapshot of a running process is a clone of it, ours and
# killed by us: never one of its children "killed by signal 9". The parent
# is scanned at two reports after its child's exit, then exits itself; in
# all the reports, two processes and their own exits.
leakcheck_followed() {
	local dir=$TMP/leakfollow scanned n
	start_workload "$dir" "$WL/forker" "$dir" fork || {
		fail "leakcheck_followed: forker" "not ready in 10 s"
		return
	}
	start_tool leakfollow 60 --format json -T 0 -i 1 --follow-forks --leak-check -p "$WPID"
	wait_line leakfollow 'tracing pid' || {
		fail "leakcheck_followed: tracing" "no 'tracing pid' line in 20 s"
		return
	}
	kill -USR1 "$WPID"
	wait_for 10 test -e "$dir/done" || {
		fail "leakcheck_followed: forker" "no done file 10 s after SIGUSR1"
		return
	}
	scanned='.type == "report" and (.processes[] | select(.parent == null) | .leak_check != null)'
	n=$(count_lines "$TMP/leakfollow.out" "$scanned")
	expect_true "leakcheck_followed: two scans after the child's exit" \
		"fewer than 2 more reports with the parent scanned in 30 s" \
		wait_for 30 eval '(($(count_lines "$TMP/leakfollow.out" "$scanned") >= n + 2))'
	kill -USR1 "$WPID"
	wait_tool
	expect_tool_ok leakfollow || return
	# Each process as its last report showed it: the exited leave after it.
	expect_eq "leakcheck_followed: the processes and their exits" \
		"$(printf '{"parent":null,"status":0,"signal":null}\n{"parent":%s,"status":5,"signal":null}' \
			"$WPID")" \
		"$(jq -sc '[.[] | select(.type == "report") | .processes[]] | group_by(.pid) |
			map(last | {parent, status: .exit.status, signal: .exit.signal}) |
			sort_by(.parent // 0) | .[]' "$TMP/leakfollow.out")"
}

# two_targets NAME OPTIONS...: trace two target workloads, A and B, with
# OPTIONS naming them @A@ and @B@; they leak and exit, which ends the run
# (the tool's status in RC).
two_targets() {
	local name=$1 args
	shift
	start_workload "$TMP/${name}_a" "$WL/target" "$TMP/${name}_a" 60 || return 1
	A=$WPID
	start_workload "$TMP/${name}_b" "$WL/target" "$TMP/${name}_b" 60 || return 1
	B=$WPID
	args=("${@//@A@/$A}")
	start_tool "$name" 60 "${args[@]//@B@/$B}"
	wait_for 20 tracing_both "$name" || {
		fail "$name: tracing" "no two 'tracing pid' lines in 20 s"
		return 1
	}
	kill -USR1 "$A" "$B"
	wait_for 10 test -e "$TMP/${name}_a/done" -a -e "$TMP/${name}_b/done"
	kill -USR1 "$A" "$B"
	wait_tool
}

# -p PID -p PID: each process its numbers, the run its sums.
several_pids() {
	local a b
	two_targets several --format json -T 0 -p @A@ -p @B@ || return
	a=$A
	b=$B
	expect_tool_ok several || return
	R=$(final_report "$TMP/several.out")
	expect_proc "several: pid a" "$(proc_of "$R" "$a")" 9000 9 14 5 12 0
	expect_leak "$(proc_of "$R" "$a")" target_leak 9000 9 9
	expect_proc "several: pid b" "$(proc_of "$R" "$b")" 9000 9 14 5 12 0
	expect_proc "several: all" "$R" 18000 18 28 10 24 0
	expect_eq "several: exits" '[0,0]' "$(jq -c '[.processes[].exit.status]' <<<"$R")"
}

# --max-per-process: blocks past the cap are lost, per process, and said so.
capped() {
	local a b
	two_targets capped -p @A@,@B@ --max-per-process 5 || return
	a=$A
	b=$B
	expect_eq "capped: exit status" 0 "$RC"
	# 5 of target_leak's 9 blocks kept; 4 and the 5 churn blocks lost,
	# whose frees are then untracked like the 12 startup blocks'.
	expect_eq "capped: header" \
		"final report, 2 processes: 9.8 KiB (10,000 bytes) outstanding in 10 blocks; 28 allocs, 0 frees, 34 untracked frees" \
		"$(head -n 1 "$TMP/capped.out" | cut -d' ' -f2-)"
	expect_eq "capped: processes" \
		"pid $a (target) exited with status 0: 4.9 KiB (5,000 bytes) outstanding in 5 blocks; 14 allocs, 0 frees, 17 untracked frees
pid $b (target) exited with status 0: 4.9 KiB (5,000 bytes) outstanding in 5 blocks; 14 allocs, 0 frees, 17 untracked frees" \
		"$(grep '^pid ' "$TMP/capped.out" | sort)"
	expect_eq "capped: warnings" 3 \
		"$(grep -c 'warning: numbers incomplete: lost_cap=.* (over --max-per-process, not recorded)' "$TMP/capped.out")"
}

# Two allocators, each probed in its own file: glibc's, and jemalloc's
# preloaded into alloc_jemalloc_preload (28,936 bytes in 44 blocks).
two_allocators() {
	local jemalloc t j
	jemalloc=$(ldconfig -p | awk '$1 == "libjemalloc.so.2" { print $NF; exit }')
	if [[ -z $jemalloc ]]; then
		fail "two_allocators" "libjemalloc2 not installed (make deps)"
		return
	fi
	start_workload "$TMP/two_t" "$WL/target" "$TMP/two_t" 60 || return
	t=$WPID
	start_workload "$TMP/two_j" env LD_PRELOAD="$jemalloc" "$WL/alloc_jemalloc_preload" \
		"$TMP/two_j" || return
	j=$WPID
	start_tool two 60 --format json -T 0 -p "$t,$j"
	wait_for 20 tracing_both two || {
		fail "two_allocators: tracing" "no two 'tracing pid' lines in 20 s"
		return
	}
	expect_eq "two_allocators: one allocator each" \
		"$(printf 'libc.so.6\nlibjemalloc.so.2\n')" \
		"$(grep -oE 'tracing pid [0-9]+ .* in [^ ]*' "$TMP/two.err" | sed 's|.*/||' | sort)"
	kill -USR1 "$t" "$j"
	wait_for 10 test -e "$TMP/two_t/done" -a -e "$TMP/two_j/done"
	kill -USR1 "$t" "$j"
	wait_tool
	expect_tool_ok two || return
	R=$(final_report "$TMP/two.out")
	expect_proc "two_allocators: glibc" "$(proc_of "$R" "$t")" 9000 9 14 5 12 0
	expect_proc "two_allocators: jemalloc" "$(proc_of "$R" "$j")" 28936 44 10047 10003 0 0
}

# --all: whoever calls the C library's malloc; ours with exact numbers.
all_procs() {
	local t f r c self
	start_workload "$TMP/all_t" "$WL/target" "$TMP/all_t" 60 || return
	t=$WPID
	start_workload "$TMP/all_f" "$WL/forker" "$TMP/all_f" fork || return
	f=$WPID
	start_tool all 60 --format json -T 0 --top-processes 0 --all -i 1
	# Under a load of 15 on 2 CPUs the line came later than 20 s.
	wait_line all 'tracing every process that calls the allocator in .*libc\.so' 60 || {
		fail "all: tracing" "no 'tracing every process' line in 60 s: $(head -c 300 "$TMP/all.err")"
		return
	}
	self=$(pgrep -P "$TOOL_PID" -x alloctrace)
	kill -USR1 "$t" "$f"
	# The final report after both are done, however busy the machine.
	wait_for 20 test -e "$TMP/all_t/done" -a -e "$TMP/all_f/done"
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok all || return
	r=$(final_report "$TMP/all.out")
	expect_proc "all: target" "$(proc_of "$r" "$t")" 9000 9 14 5 12 0
	expect_leak "$(proc_of "$r" "$t")" target_leak 9000 9 9
	expect_proc "all: forker" "$(proc_of "$r" "$f")" 1500 3 3 0 0 0
	# The child, from the last report that has it (in the 6.1 guest a
	# report came between its end and the final one).
	c=$(ended_proc "$TMP/all.out" ".parent == $f")
	expect_proc "all: forker's child" "$c" 2100 7 7 0 2 0
	expect_leak "$c" child_leak 2100 7 7
	expect_eq "all: alloctrace ($self) left out" "" "$(proc_of "$r" "${self:-0}")"
	expect_eq "all: only processes holding memory" 0 \
		"$(jq '[.processes[] | select(.totals.outstanding_allocs == 0)] | length' <<<"$r")"
}

# exec_run NAME OPTIONS...: trace forker DIR exec target DIR2 with -p:
# forker leaks, then runs target, which leaks 9000 bytes in 9 blocks.
exec_run() {
	local name=$1
	shift
	mkdir -p "$TMP/$name.new"
	start_workload "$TMP/$name" "$WL/forker" "$TMP/$name" exec "$WL/target" "$TMP/$name.new" 60 ||
		return 1
	start_tool "$name" 60 --format json -T 0 -p "$WPID" "$@"
	wait_line "$name" 'tracing pid' || return 1
	kill -USR1 "$WPID"
	wait_line "$name" "pid $WPID became 'target': tracing the new program" &&
		wait_line "$name" "tracing pid $WPID \(target\): ([0-9]+ probes|the probes) in .*libc" &&
		wait_for 10 test -e "$TMP/$name.new/ready" || {
		fail "$name: exec" "not traced again: $(paste -sd '|' "$TMP/$name.err")"
		return 1
	}
	kill -USR1 "$WPID"
	wait_for 10 test -e "$TMP/$name.new/done"
	kill -USR1 "$WPID"
	wait_tool
	expect_tool_ok "$name" || return 1
	R=$(final_report "$TMP/$name.out")
}

# One process: the old program's blocks are gone with it, the new one's
# counted from when its allocator was found again.
exec_single() {
	exec_run exec_single || return
	expect_eq "exec_single: comm" '"target"' "$(report_get "$R" .comm)"
	expect_leak "$R" target_leak 9000 9 9
	expect_no_stack "$R" pre_exec_leak
	expect_eq "exec_single: outstanding" '[9000,9]' \
		"$(report_get "$R" '[.totals.outstanding_bytes, .totals.outstanding_allocs]')"
}

# Several: the probes stay, so the new program is seen from its first call.
exec_multi() {
	local p
	exec_run exec_multi --follow-forks || return
	p=$(proc_of "$R" "$WPID")
	expect_eq "exec_multi: comm" '"target"' "$(report_get "$p" .comm)"
	expect_no_stack "$p" pre_exec_leak
	expect_leak "$p" target_leak 9000 9 9
	expect_proc exec_multi "$p" 9000 9 26 17 0 0
}

# A new program without an allocator to probe ends the run, saying why,
# and is left running. It waits to be killed: one that slept a while and
# exited could end before a slow machine's tracer looked at it.
exec_no_allocator() {
	local dir=$TMP/noalloc
	printf '#include <stdlib.h>\n#include <unistd.h>\nint main(void) { pause(); return malloc(1) == 0; }\n' \
		>"$TMP/st.c"
	musl-gcc -static -s "$TMP/st.c" -o "$TMP/static-stripped" || {
		fail "exec_no_allocator" "musl-gcc failed (make deps installs musl-tools)"
		return
	}
	start_workload "$dir" "$WL/forker" "$dir" exec "$TMP/static-stripped" || return
	start_tool noalloc 60 --format json -p "$WPID"
	wait_line noalloc 'tracing pid' || return
	kill -USR1 "$WPID"
	wait_tool
	expect_eq "exec_no_allocator: exit status" 1 "$RC"
	expect_true "exec_no_allocator: says why" "$(paste -sd '|' "$TMP/noalloc.err")" \
		grep -q "no allocator (malloc and free) found in process $WPID (static-stripped)" \
		"$TMP/noalloc.err"
	expect_eq "exec_no_allocator: final report" 1 \
		"$(count_lines "$TMP/noalloc.out" '.type == "report" and .final')"
	expect_true "exec_no_allocator: the program still runs" "process $WPID is gone" alive "$WPID"
}

# Bad values: one line, exit status 2.
errors() {
	expect_error "-p with a pid twice" -p 1,2,1
	expect_error "-p with an empty pid" -p 1,
	expect_error "--all with -p" --all -p 1
	expect_error "--all with a command" --all -- "$WL/target"
	expect_error "--max-per-process with one process" --max-per-process 5 -p 1
	expect_error "--max-per-process 0" --max-per-process 0 --all
	expect_error "--top-processes -1" --top-processes -1 --all
}

fork_ignored
fork_followed
launch_followed
leakcheck_followed
several_pids
capped
two_allocators
all_procs
exec_single
exec_multi
exec_no_allocator
errors
finish
