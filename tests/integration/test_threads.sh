#!/bin/bash
# Allocations crossing threads (tests/workloads/threads.c): blocks freed by
# another thread than the one that allocated them are released, a worker
# thread's leak is counted once per block across four threads. A thread
# that ends inside an allocation call (tests/workloads/midcall.c) leaves
# nothing behind that would spoil the calls of the threads after it.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/threads" "$WL/midcall"

run_tool threads 60 --format json -T 0 -- "$WL/threads"
if expect_tool_ok threads; then
	r=$(final_report "$TMP/threads.out")

	expect_no_stack "$r" xthread_alloc
	# 501 allocated, 500 freed by the consumer thread: one block of 88 left.
	expect_leak "$r" xthread_handoff 88 1 501
	expect_leak "$r" worker_leak 7200 100 100
	expect_no_stack "$r" worker_churn
	expect_totals_consistent threads "$r"
	expect_eq "totals.lost" 0 "$(report_get "$r" .totals.lost)"
	# No check of untracked_frees here: at thread exit glibc's tcache shutdown
	# calls free() again on every chunk still cached (the program freed them
	# already) and on the cache itself (allocated without malloc), so it is
	# about 150 and varies from run to run.
	# 1000 + 500 cross-thread frees and 4 x 4000 churn frees at least.
	expect_true "totals.frees >= 17500" "$(report_get "$r" .totals.frees)" \
		test "$(report_get "$r" .totals.frees)" -ge 17500
fi

# The thread cancelled in mc_malloc, after its entry probe and before its
# return probe, takes its in-flight record with it: every call after it,
# from 8 new threads and the main one, is counted exactly.
exe=$(realpath -e "$WL/midcall")
run_tool midcall 60 --format json -T 0 --allocator "$exe:mc_" -- "$exe"
if expect_tool_ok midcall; then
	r=$(final_report "$TMP/midcall.out")
	expect_totals midcall "$r" 9000 85 185 100
	expect_leak "$r" thread_leak 8000 80 80
	expect_leak "$r" main_leak 1000 5 5
	expect_eq "midcall: lost_inflight" 0 "$(report_get "$r" .counters.lost_inflight)"
fi

finish
