#!/bin/bash
# Allocations crossing threads (tests/workloads/threads.c): blocks freed by
# another thread than the one that allocated them are released, a worker
# thread's leak is counted once per block across four threads.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/threads"

run_tool threads 60 --format json -T 0 -- "$WL/threads"
expect_tool_ok threads || finish
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

finish
