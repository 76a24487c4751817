#!/bin/bash
# PID 1 of the vmtest guest, in the host's root under an overlay: mount
# what the tests use, run the integration scripts named in OUT/scripts (or
# OUT/command), leave its output and exit status in
# the output share, power off.
#   guest.sh ROOT OUT
ROOT=$1
OUT=$2

setup() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mount -t tmpfs -o mode=0755 tmpfs /run
	mkdir -p /dev/pts /dev/shm
	# What udev would make: tests read /dev/stdin.
	ln -s /proc/self/fd /dev/fd
	ln -s /proc/self/fd/0 /dev/stdin
	ln -s /proc/self/fd/1 /dev/stdout
	ln -s /proc/self/fd/2 /dev/stderr
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	mount -t bpf bpf /sys/fs/bpf
	mount -t tracefs tracefs /sys/kernel/tracing
	mount -t debugfs debugfs /sys/kernel/debug
	# cgroup v2 with the memory controller delegated to child groups, as
	# a systemd host has it (the OOM test runs its target in one).
	mount -t cgroup2 cgroup2 /sys/fs/cgroup
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	ip link set lo up
	hostname vmtest
}

# The suite runs as a child so that PID 1 (this shell) reaps the orphans
# that tests leave to it. OUT/command, when vmtest.sh wrote one (its
# bench), runs instead of the suite.
run_suite() {
	local scripts
	echo "# vmtest: kernel $(uname -r), $(nproc) CPUs"
	cd "$ROOT" || return
	if [[ -e $OUT/command ]]; then
		bash "$OUT/command"
		return
	fi
	mapfile -t scripts < <(grep . "$OUT/scripts")
	./tests/run.sh "${scripts[@]}"
}

setup >"$OUT/setup.log" 2>&1
export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb
# What vmtest.sh chose for this guest (tests/run.sh's limit per script).
set -a
. "$OUT/env"
set +a
# A failed script's files (tests/lib.sh) come back in the output share.
export TEST_KEEP_DIR=$OUT/kept
run_suite >"$OUT/log" 2>&1 &
wait $!
echo $? >"$OUT/status"
sync
echo o >/proc/sysrq-trigger
sleep 60
