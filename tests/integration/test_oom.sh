#!/bin/bash
# The kernel's OOM killer ends the target: the final report says so and
# still shows the stacks that held the memory at death. The hog runs in a
# 64 MiB memory cgroup of its own, removed afterwards.
# test: serial (makes the kernel kill for memory, in a cgroup of its own)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/hog"

new_memory_cgroup alloctrace-test
if [[ -z $CG ]]; then
	fail "oom: setup" "no memory cgroup to make under /sys/fs/cgroup"
	finish
fi
remove_cgroup() {
	rmdir "$CG" 2>/dev/null
}
trap 'remove_cgroup; cleanup' EXIT
if [[ -e $CG/memory.limit_in_bytes ]]; then
	echo $((64 << 20)) >"$CG/memory.limit_in_bytes"
	# No swapping out of the limit where the kernel counts swap.
	[[ -e $CG/memory.memsw.limit_in_bytes ]] && echo $((64 << 20)) >"$CG/memory.memsw.limit_in_bytes"
else
	echo $((64 << 20)) >"$CG/memory.max"
	echo 0 >"$CG/memory.swap.max"
fi

# The shell moves itself into the cgroup and execs the hog: alloctrace
# follows the exec and traces the hog from its first instruction.
run_tool oom 120 --format json -T 0 -- \
	sh -c "echo \$\$ >$CG/cgroup.procs && exec $WL/hog"
expect_eq "oom: alloctrace exit status" 0 "$RC"
r=$(final_report "$TMP/oom.out")
expect_eq "oom: the report says the OOM killer" true "$(report_get "$r" .exit.oom_killed)"
expect_eq "oom: killed by SIGKILL" 9 "$(report_get "$r" .exit.signal)"
bytes=$(fn_sum "$r" outstanding_bytes grow_until_killed)
blocks=$(fn_sum "$r" outstanding_allocs grow_until_killed)
expect_eq "oom: whole 1 MiB blocks" $((blocks * 1048576)) "$bytes"
expect_true "oom: the hog held 40-64 MiB at death" "$bytes" \
	test "$bytes" -ge $((40 << 20)) -a "$bytes" -le $((64 << 20))
expect_true "oom: said on stderr" "$(cat "$TMP/oom.err")" grep -q "OOM killer" "$TMP/oom.err"

finish
