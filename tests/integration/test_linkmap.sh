#!/bin/bash
# No allocation walked before its object's unwind tables exist (issue
# #17): the dynamic loader's r_brk probe holds a launched command's thread
# while the objects it just mapped get their tables, before their
# constructors run, at startup and at dlopen, and makes any other thread
# wait in the probe; -p makes a process's tables before it attaches its
# allocator probes.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/ctorlink" "$WL/ctordlopen" "$WL/libctorleak.so"
command -v cmake >/dev/null || {
	fail "prerequisites" "cmake is not installed (make deps)"
	finish
}

# stack_of REPORT FUNCTION: [functions, stack_flags] of every stack whose
# frames[0] is FUNCTION, distinct.
stack_of() {
	jq -c --arg f "$2" '[.stacks[] | select(.frames[0].function == $f)
		| [[.frames[].function], .stack_flags]] | unique' <<<"$1"
}

# ld.so's entry code, where a constructor's stack ends: x86-64's
# _dl_start_user; arm64's glibc gives ld.so's _start a size (72 bytes)
# that covers its size-0 _dl_start_user label, and the symbolizer names
# the sized symbol.
ENTRY=$(by_arch _dl_start_user _start)

# libctorleak.so is mapped after libc, the allocator: its constructor leaks
# 2 x 333 bytes before main, called by ld.so's _dl_init from its entry code.
run_tool link 60 -v --format json -T 0 -- "$WL/ctorlink"
expect_tool_ok link || finish
r=$(final_report "$TMP/link.out")
expect_leak "$r" ctor_leak 666 2 2
s=$(stack_of "$r" ctor_leak)
expect_eq "constructor: one stack for both blocks" 1 "$(jq length <<<"$s")"
expect_eq "constructor: its frames, then the loader's" '["ctor_leak","ctorleak_init"]' \
	"$(jq -c '.[0][0][:2]' <<<"$s")"
expect_eq "constructor: through _dl_init" true "$(jq '.[0][0] | index("_dl_init") != null' <<<"$s")"
expect_eq "constructor: ends at $ENTRY, complete" '["'"$ENTRY"'",[]]' \
	"$(jq -c '.[0] | [.[0][-1], .[1]]' <<<"$s")"
expect_eq "constructor: no stack cut, no table missed" '[0,0]' \
	"$(report_get "$r" '[.counters.stacks_cut, .counters.unwind_misses]')"
expect_eq "constructor: stacks_complete" true "$(report_get "$r" .stacks_complete)"
expect_eq "constructor: held once, as the loader finished mapping" 1 \
	"$(grep -c 'its dynamic loader mapped objects: their unwind tables now' "$TMP/link.err")"

# dlopen: the constructor leaks inside dlopen, lib_alloc_now() right after.
run_tool dlopen 60 -v --format json -T 0 -- "$WL/ctordlopen"
expect_tool_ok dlopen || finish
r=$(final_report "$TMP/dlopen.out")
expect_leak "$r" ctor_leak 666 2 2
expect_leak "$r" lib_inner 1332 3 3
expect_eq "dlopen: the library's first call, whole" \
	'[[["lib_inner","lib_alloc_now","load_and_call","main","__libc_start_call_main","__libc_start_main@@GLIBC_2.34","_start"],[]]]' \
	"$(stack_of "$r" lib_inner)"
s=$(stack_of "$r" ctor_leak)
expect_eq "dlopen: constructor through dlopen to _start" \
	'[1,["ctor_leak","ctorleak_init"],true,"_start",[]]' \
	"$(jq -c '[length, .[0][0][:2], (.[0][0] | index("dlopen@@GLIBC_2.34") != null),
		.[0][0][-1], .[0][1]]' <<<"$s")"
expect_eq "dlopen: no stack cut, no table missed" '[0,0]' \
	"$(report_get "$r" '[.counters.stacks_cut, .counters.unwind_misses]')"
expect_eq "dlopen: held at startup and at dlopen" 2 \
	"$(grep -c 'its dynamic loader mapped objects: their unwind tables now' "$TMP/dlopen.err")"

# dlopen in a program with a SIGURG handler of its own: the loader's hold
# is not taken (if alloctrace died while holding it, the kernel would
# deliver the stop's SIGURG and run the handler), the thread waits in the
# probe instead; the tables are there all the same, the handler never runs.
run_tool dl_urg 60 -v --format json -T 0 -- "$WL/ctordlopen" urg
expect_tool_ok dl_urg || finish
r=$(final_report "$TMP/dl_urg.out")
expect_eq "urg handler: held at startup only (no handler then), not at dlopen" 1 \
	"$(grep -c 'its dynamic loader mapped objects: their unwind tables now' "$TMP/dl_urg.err")"
expect_eq "urg handler: the dlopen's leaks exact, no stack cut, no table missed" "666 2 1332 3 0 0" \
	"$(fn_sum "$r" outstanding_bytes ctor_leak) $(fn_sum "$r" outstanding_allocs ctor_leak) $(fn_sum "$r" outstanding_bytes lib_inner) $(fn_sum "$r" outstanding_allocs lib_inner) $(report_get "$r" '"\(.counters.stacks_cut) \(.counters.unwind_misses)"' | tr -d '"')"

# dlopen where the loader cannot hold the thread in a ptrace stop: in a
# second thread, in a child (--follow-forks) gone before any report, in a
# -p process. The thread waits in the probe until the loader has made the
# tables and read the mappings (bpf/linkmap.bpf.h): both leaks exact, their
# stacks whole to a thread start (x86-64: clone3; arm64, whose glibc has
# no clone3: thread_start) or _start, and named, the child's too.
# expect_dlopen_whole NAME PROCESS-REPORT
expect_dlopen_whole() {
	expect_eq "$1: the constructor's and the first call's leaks" "666 2 1332 3" \
		"$(fn_sum "$2" outstanding_bytes ctor_leak) $(fn_sum "$2" outstanding_allocs ctor_leak) $(fn_sum "$2" outstanding_bytes lib_inner) $(fn_sum "$2" outstanding_allocs lib_inner)"
	expect_eq "$1: both stacks whole and named" \
		'[[["ctor_leak","ctorleak_init"],true,true,[]],[["lib_inner","lib_alloc_now"],true,true,[]]]' \
		"$(jq -c '[.stacks[] | select(.frames[0].function | IN("ctor_leak", "lib_inner"))
			| [[.frames[0:2][].function], (.frames[-1].function | IN("_start", "'"$(by_arch clone3 thread_start)"'")),
			   ([.frames[].function] | all(. != null)), .stack_flags]] | unique' <<<"$2")"
	expect_eq "$1: no stack cut, no table missed" '[0,0]' \
		"$(report_get "$2" '[.counters.stacks_cut, .counters.unwind_misses]')"
}

run_tool dl_thread 60 --format json -T 0 -- "$WL/ctordlopen" thread
expect_tool_ok dl_thread && expect_dlopen_whole "dlopen in a thread" "$(final_report "$TMP/dl_thread.out")"

run_tool dl_fork 60 --format json -T 0 --follow-forks -- "$WL/ctordlopen" fork
if expect_tool_ok dl_fork; then
	expect_dlopen_whole "dlopen in a child" "$(ended_proc "$TMP/dl_fork.out" '.parent != null')"
fi

mkdir -p "$TMP/dl_p"
"$WL/ctordlopen" wait "$TMP/dl_p" &
TARGET=$!
track "$TARGET"
if wait_for 10 test -e "$TMP/dl_p/ready"; then
	start_tool dl_p 60 --format json -T 0 -p "$TARGET"
	if wait_tracing dl_p 30; then
		kill -USR1 "$TARGET"
		wait_for 10 test -e "$TMP/dl_p/done"
		kill -INT "$TOOL_PID"
		wait_tool
		expect_tool_ok dl_p && expect_dlopen_whole "dlopen under -p" "$(final_report "$TMP/dl_p.out")"
	else
		fail "dlopen under -p: tracing" "no 'tracing pid' line in 30 s"
	fi
else
	fail "dlopen under -p: target" "not ready in 10 s"
fi

# A real program: cmake's libraries (libgnutls's among them) are mapped
# after libc, and one's constructor keeps 33 bytes that bindtextdomain
# allocates. Before the loader's probe, 1,292 of its 2,778 allocations had
# their stack cut, that one 4 frames deep where valgrind shows 9.
run_tool cmake 120 --format json -T 0 -o "$TMP/cmake.json" -- cmake --version
expect_eq "cmake: exit status" 0 "$RC"
r=$(final_report "$TMP/cmake.json")
expect_true "cmake: allocations counted" "$(report_get "$r" .counters.allocs)" \
	test "$(report_get "$r" .counters.allocs)" -gt 1000
expect_eq "cmake: no stack cut, no table missed, stacks_complete" '[0,0,true]' \
	"$(report_get "$r" '[.counters.stacks_cut, .counters.unwind_misses, .stacks_complete]')"
expect_eq "cmake: the constructor's 33 bytes, bindtextdomain to $ENTRY" \
	'[["set_binding_values.part.0","bindtextdomain"],"_dl_init","'"$ENTRY"'",[]]' \
	"$(jq -c '[.stacks[] | select(.outstanding_bytes == 33)][0]
		| [[.frames[0].function, .frames[2].function], .frames[-2].function,
		   .frames[-1].function, .stack_flags]' <<<"$r")"

# -p on a process that allocates without pause 25 calls deep in a library:
# its tables are made before its probes, so the first report is whole.
# 16 blocks are outstanding when it ends.
mkdir -p "$TMP/churn"
"$WL/ctorlink" churn "$TMP/churn" 8 &
TARGET=$!
track "$TARGET"
if wait_for 10 test -e "$TMP/churn/ready"; then
	start_tool churn 60 -v -i 1 --format json -T 0 -p "$TARGET"
	# It ends by itself after 8 s, and the run with it: its ring is whole then.
	wait_tool
	expect_tool_ok churn
	r=$(jq -c 'select(.type == "report")' "$TMP/churn.out" | head -n 1)
	expect_true "-p churn: the first report counts allocations" "$(report_get "$r" .counters.allocs)" \
		test "$(report_get "$r" .counters.allocs)" -gt 1000
	expect_eq "-p churn: first report, no stack cut, no table missed" '[0,0]' \
		"$(report_get "$r" '[.counters.stacks_cut, .counters.unwind_misses]')"
	expect_eq "-p churn: its stacks 25 calls deep, whole" \
		'[[["lib_churn",25],"main","_start",[]]]' \
		"$(jq -c '[.stacks[] | select(.frames[0].function == "lib_churn")
			| [([.frames[].function] | [.[0], (map(select(. == "lib_churn")) | length)]),
			   .frames[-4].function, .frames[-1].function, .stack_flags]] | unique' <<<"$r")"
	expect_leak "$(final_report "$TMP/churn.out")" lib_churn 1024 16
	expect_eq "-p churn: never read its mappings again" 0 \
		"$(grep -c 'reading its mappings again' "$TMP/churn.err")"
else
	fail "-p churn: target" "not ready in 10 s"
fi

finish
