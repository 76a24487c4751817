#!/bin/bash
# Run the integration tests (tests/run.sh, with the binaries the host built) in a
# QEMU guest on one of Debian's own kernels, to check alloctrace on the
# kernels it is meant for and not only on the host's.
#
#   scripts/vmtest.sh fetch VERSION...   download and unpack the kernels
#   scripts/vmtest.sh run VERSION [SCRIPT...]
#                                        boot one and run the integration
#                                        scripts in it (all, or those named)
#   scripts/vmtest.sh bench VERSION      boot one and run bench/run.sh's
#                                        pair loops in it (BENCH_GUEST=1;
#                                        make vmbench)
#
# VERSION is a kernel series, 6.1 (Debian 12), 6.12 (Debian 12 backports)
# or 5.10 (Debian 11); the newest package of that series in the host's apt
# index is used, else in Debian's other suites' (other_apt).
# VMTEST_ARCH (one of the Makefile's ARCHES; default the host's) chooses
# the guest: scripts/vmtest/arch-ARCH.sh. An x86-64 guest sees the host's /
# read-only under a tmpfs overlay (so the worktree is there, writable, at
# the same path); an arm64 guest runs on an arm64 Debian userland of its
# own, with the worktree (built by make ARCH=arm64) overlaid at the same
# path. Either writes its output to build/vmtest/[arm64/]VERSION/out/ over
# a writable share. Ends with the
# suite's "N passed, N failed" line; exits non-zero if anything failed,
# the guest did not finish, or it ran past VMTEST_TIMEOUT seconds.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOST_ARCH=$("$ROOT/scripts/host-arch.sh")
VMTEST_ARCH=${VMTEST_ARCH:-$HOST_ARCH}
# The Makefile's ARCHES, each with its guest in scripts/vmtest/arch-ARCH.sh.
ARCHES=$(MAKEFLAGS= make -s --no-print-directory -C "$ROOT" print-arches)
[[ " $ARCHES " == *" $VMTEST_ARCH "* && -f $ROOT/scripts/vmtest/arch-$VMTEST_ARCH.sh ]] || {
	echo "vmtest: no guest for VMTEST_ARCH=$VMTEST_ARCH (one of: $ARCHES)" >&2
	exit 1
}
VMDIR=$ROOT/build/vmtest
[[ $VMTEST_ARCH == x86 ]] || VMDIR+=/$VMTEST_ARCH
VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-5400}
VMTEST_MEM=${VMTEST_MEM:-3G}
VMTEST_CPUS=${VMTEST_CPUS:-2}
# Guests a whole run boots at once, each with its share of the scripts.
# Under TCG a guest running one script at a time keeps about one host CPU
# busy: a second guest uses another, where a second script at once in one
# guest pushed tool runs past their limits (docs/testing.md).
VMTEST_SHARDS=${VMTEST_SHARDS:-1}
# Seconds from start to the suite's first line: 20-40 under TCG here.
VMTEST_BOOT_TIMEOUT=${VMTEST_BOOT_TIMEOUT:-300}
# What the guest needs that Debian builds as modules: 9p over virtio for
# the shares, overlayfs for a writable root (their dependencies follow).
GUEST_MODULES="virtio_pci 9pnet_virtio 9p overlay"
# Scripts left to the host's run. Three reach no kernel path at all:
# test_speedscope.sh (Chromium drawing speedscope's page of a pprof file;
# under TCG on a loaded host it did not draw it within 240 s),
# test_errors_cli.sh (the error table's command line and export files,
# refused before anything is traced; test_errors.sh, the cases that reach
# the kernel, runs here) and test_package.sh (the Debian package's build
# and install; its binary's trace is test_leaks.sh's). The rest, in a guest of the host's architecture
# only, reach none that another script here does not: test_hardening.sh
# (the unit tests under ASan, the fuzzers; a guest of another architecture
# runs its own build's); test_leakcheck_real.sh, valgrind's verdicts on
# real programs' heaps (the exit stop, the registers and reading the
# target's memory are test_leakcheck.sh's and test_leakcheck_threads.sh's);
# test_symbols.sh, debug files by build id, debuglink, debuginfod and
# MiniDebugInfo (a process's files under its root: test_hostile.sh,
# test_containers.sh); and the loader's own logic over what the probes
# recorded, the probes being test_leaks.sh's: test_analysis.sh (trends,
# filters; --show-data's reads are test_outputs.sh's and
# test_privileges.sh's), test_exports.sh, test_pprof_dir.sh, test_html.sh,
# test_report_options.sh, test_metrics.sh and test_metrics_scan.sh (the
# HTTP server), test_soak.sh (the loader's memory over a minute; thread
# churn is test_threads.sh's). Those last eight took 392 of the 6.1
# guest's 2,163 s of scripts under TCG on a quiet host (2026-11-28); CI,
# on a host about 1.5 times slower, had run 87 of its 90 minutes.
HOST_ONLY="test_speedscope.sh test_errors_cli.sh test_package.sh"
[[ $VMTEST_ARCH != "$HOST_ARCH" ]] ||
	HOST_ONLY+=" test_hardening.sh test_leakcheck_real.sh test_symbols.sh
	test_analysis.sh test_exports.sh test_pprof_dir.sh test_html.sh
	test_report_options.sh test_metrics.sh test_metrics_scan.sh test_soak.sh"
# tests/run.sh's last line.
COUNT='^[0-9]* passed, [0-9]* failed'

die() {
	echo "vmtest: $*" >&2
	exit 1
}

# shellcheck source-path=SCRIPTDIR source=vmtest/arch-x86.sh
. "$ROOT/scripts/vmtest/arch-$VMTEST_ARCH.sh"

# private_apt DIR SUITES CMD ARGS: apt-get or apt-cache (CMD) for the
# guest's architecture against package lists of their own under DIR, of
# the Debian suites SUITES (space-separated, main only) from the archive
# the host's apt uses, leaving the host's dpkg architectures and apt state
# as they are; the lists are refreshed once a day.
private_apt() {
	local apt=$1 suites=$2 cmd=$3 mirror suite
	shift 3
	mkdir -p "$apt/lists/partial" "$apt/archives/partial"
	if [[ ! -e $apt/sources.list ]]; then
		mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' \
			/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
		[[ -n $mirror ]] || die "no Debian archive in /etc/apt/sources.list.d/*.sources"
		for suite in $suites; do
			if [[ $suite == *-security ]]; then
				echo "deb $mirror-security $suite main"
			else
				echo "deb $mirror $suite main"
			fi
		done >"$apt/sources.list"
	fi
	local opts=(-q -o APT::Architecture="$DEB_ARCH" -o APT::Architectures::="$DEB_ARCH"
		-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt"
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1)
	if [[ ! -e $apt/updated || -n $(find "$apt/updated" -mmin +1440) ]]; then
		apt-get "${opts[@]}" update >/dev/null || die "apt-get update of $apt's lists failed"
		touch "$apt/updated"
	fi
	"$cmd" "${opts[@]}" "$@"
}

# other_apt CMD ARGS: private_apt of Debian's suites beyond the host's own,
# for kernels of other series: bullseye's 5.10, bookworm-backports' 6.12.
other_apt() {
	private_apt "$VMDIR/apt" "bullseye bullseye-security bookworm-backports" "$@"
}

# package_for APT VERSION: the newest unsigned kernel package of that
# series for the guest's architecture that APT (arch_apt or other_apt) can
# install (Debian's names: linux-image-6.1.0-56-amd64-unsigned,
# linux-image-6.12.117+deb12-arm64-unsigned), or nothing.
package_for() {
	local apt=$1 series=${2//./\\.} pkg best="" bestver="" ver
	for pkg in $("$apt" apt-cache search --names-only \
		"^linux-image-$series\.[0-9.-]+(\+deb[0-9]+)?-$DEB_ARCH-unsigned\$" | cut -d' ' -f1); do
		ver=$("$apt" apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
		[[ -n $ver && $ver != "(none)" ]] || continue
		if [[ -z $best ]] || dpkg --compare-versions "$ver" gt "$bestver"; then
			best=$pkg bestver=$ver
		fi
	done
	echo "$best"
}

# fetch VERSION: unpack the kernel into build/vmtest/VERSION/root unless it
# is there already: from the host's own suites, else from the others.
fetch() {
	local dir=$VMDIR/$1 pkg apt=arch_apt
	compgen -G "$dir/root/boot/vmlinuz-*" >/dev/null && return 0
	pkg=$(package_for arch_apt "$1")
	if [[ -z $pkg ]]; then
		apt=other_apt
		pkg=$(package_for other_apt "$1")
	fi
	[[ -n $pkg ]] || die "no package linux-image-$1.*-$DEB_ARCH-unsigned in Debian's index"
	echo "vmtest: fetching $pkg"
	mkdir -p "$VMDIR/debs" "$dir"
	(cd "$VMDIR/debs" && "$apt" apt-get download "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
	rm -rf "$dir/root.tmp"
	dpkg -x "$VMDIR/debs/${pkg}"_*.deb "$dir/root.tmp"
	mv "$dir/root.tmp" "$dir/root"
}

# module_path MODDIR NAME: the module's file (names may use - or _).
module_path() {
	find "$1/kernel" -name "$2.ko*" -o -name "${2//_/-}.ko*" | head -n 1
}

# module_order MODDIR NAME...: the modules to load, dependencies first,
# from each module's own "depends=" (the package ships no modules.dep).
module_order() {
	local moddir=$1 name file deps
	shift
	for name in "$@"; do
		file=$(module_path "$moddir" "$name")
		[[ -n $file ]] || continue # built into this kernel
		deps=$(xz -dcf "$file" | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' ')
		# shellcheck disable=SC2086 # the list is meant to split
		[[ -n $deps ]] && module_order "$moddir" $deps
		echo "$file"
	done
}

# initramfs VERSION: busybox, the modules the guest needs and
# scripts/vmtest/init, as a gzipped cpio archive.
initramfs() {
	local dir=$VMDIR/$1 tree moddir file
	tree=$dir/initramfs.$$
	moddir=$(echo "$dir"/root/lib/modules/*)
	rm -rf "$tree"
	mkdir -p "$tree/bin" "$tree/modules"
	cp "$(arch_busybox)" "$tree/bin/busybox"
	cp "$ROOT/scripts/vmtest/init" "$tree/init"
	# shellcheck disable=SC2086 # the list is meant to split
	module_order "$moddir" $GUEST_MODULES | awk '!seen[$0]++' | while read -r file; do
		xz -dcf "$file" >"$tree/modules/$(basename "${file%.xz}")"
		basename "${file%.xz}" >>"$tree/modules/order"
	done
	# Renamed into place: a run that is booting may be reading the last one.
	(cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initramfs.gz.$$"
	mv "$dir/initramfs.gz.$$" "$dir/initramfs.gz"
	rm -rf "$tree"
}

# accel: kvm or tcg, as the guest's architecture and the host allow.
accel() {
	arch_accel
}

# accel_opts: TCG with a host thread per guest CPU (multi-threaded TCG),
# so the guest's CPUs run in parallel as they would under KVM.
accel_opts() {
	local accel
	accel=$(accel)
	if [[ $accel == tcg ]]; then
		echo tcg,thread=multi
	else
		echo "$accel"
	fi
}

# boot VERSION OUT: run the guest until it powers off, or kill it at the
# limit; as timeout(1) itself, so that a signal to this process reaches
# QEMU. The shares: the guest's root, read-only; the output; and where the
# root is not the host's, the worktree, read-only (init overlays both).
boot() {
	local dir=$VMDIR/$1 out=$2 root tree=()
	root=$(arch_root)
	# shellcheck disable=SC2054 # QEMU's options are comma-separated
	[[ $root == / ]] || tree=(-fsdev "local,id=tree,path=$ROOT,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=tree,mount_tag=tree)
	OUT_DIR=$out arch_qemu "$(echo "$dir"/root/boot/vmlinuz-*)" "$dir/initramfs.gz" \
		"panic=-1 quiet loglevel=3 vmtest.root=$ROOT vmtest.out=$out vmtest.tree=${#tree[@]}" \
		-fsdev "local,id=hostroot,path=$root,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=out,path=$out,security_model=none" \
		-device virtio-9p-pci,fsdev=out,mount_tag=out "${tree[@]}"
}

# watch_boot OUT PID: stop the guest (PID) when it has not started the
# suite (no OUT/log) within VMTEST_BOOT_TIMEOUT seconds, a kernel that does
# not boot, and say so in OUT/no-boot; ends with PID.
watch_boot() {
	local out=$1 pid=$2 waited=0
	while kill -0 "$pid" 2>/dev/null && [[ ! -e $out/log ]]; do
		if ((waited++ >= VMTEST_BOOT_TIMEOUT)); then
			touch "$out/no-boot"
			kill "$pid"
			return
		fi
		sleep 1
	done
}

# prepare VERSION: what a boot needs.
prepare() {
	[[ -x $ROOT/alloctrace ]] || die "build first: make all tests"
	# The guest mounts a tmpfs of its own on /tmp, over the shared tree.
	[[ $ROOT != /tmp/* ]] || die "$ROOT is under /tmp, which the guest hides: use a tree elsewhere"
	arch_prepare
	fetch "$1"
	initramfs "$1"
}

# shares N: the whole run's scripts (stdin) as "SHARD SCRIPT" lines, the
# longest first onto the shard with the least time so far, by the last
# times tests/run.sh kept (the host's run, in CI; 60 s for one it has not
# timed).
shares() {
	{
		cat "$ROOT/build/tests/times" 2>/dev/null || true
		echo --
		cat
	} | awk '!d && $0 == "--" { d = 1; next } !d { t[$2] = $1; next }
	     { n = $0; sub(/.*\//, "", n); print (n in t ? t[n] : 60), $0 }' |
		sort -k1,1rn -k2 | awk -v n="$1" '{
			best = 1
			for (i = 2; i <= n; i++) if (load[i] < load[best]) best = i
			load[best] += $1; print best, $2 }'
}

# run VERSION [SCRIPT...]: boot, show the guest's output as it comes,
# report. A whole run boots VMTEST_SHARDS guests at once and reports
# their sum.
run() {
	local dir=$VMDIR/$1 out=$VMDIR/$1/out all i pass=0 fail=0 rc=0 line
	prepare "$1"
	if (($# > 1)); then
		# A directory of its own, so that runs of single scripts can go
		# on beside a whole run.
		out=$(mktemp -d "$dir/out-scripts.XXXXXX")
		printf '%s\n' "${@:2}" >"$out/scripts"
		run_guest "$1" "$out"
		return
	fi
	# The unit tests and the checks of the tree do not depend on the
	# kernel: the host's run covers them, and HOST_ONLY's scripts.
	all=$( (cd "$ROOT" && printf '%s\n' tests/integration/test_*.sh) |
		grep -vxF -f <(printf 'tests/integration/%s\n' $HOST_ONLY))
	# shellcheck disable=SC2086 # one line of names
	echo "# vmtest: left to the host's run (HOST_ONLY, docs/testing.md):" $HOST_ONLY
	if ((VMTEST_SHARDS <= 1)); then
		rm -rf "$out"
		mkdir -p "$out"
		echo "$all" >"$out/scripts"
		run_guest "$1" "$out"
		return
	fi
	for ((i = 1; i <= VMTEST_SHARDS; i++)); do
		rm -rf "$out.$i"
		mkdir -p "$out.$i"
		shares "$VMTEST_SHARDS" <<<"$all" | awk -v i="$i" '$1 == i { print $2 }' >"$out.$i/scripts"
		# shellcheck disable=SC2046 # one line of names
		echo "# vmtest: guest $i of $VMTEST_SHARDS:" $(xargs -n 1 basename <"$out.$i/scripts")
		run_guest "$1" "$out.$i" >"$out.$i.run" 2>&1 &
	done
	for ((i = 1; i <= VMTEST_SHARDS; i++)); do
		wait -n || rc=1
	done
	for ((i = 1; i <= VMTEST_SHARDS; i++)); do
		grep -v "$COUNT" "$out.$i.run" | sed "s/^# vmtest: /# vmtest: guest $i: /" || true
		line=$(grep "$COUNT" "$out.$i.run" | tail -n 1) || true
		[[ -n $line ]] || { rc=1; continue; }
		pass=$((pass + ${line%% passed*}))
		line=${line#* passed, }
		fail=$((fail + ${line%% failed*}))
	done
	echo "$pass passed, $fail failed"
	((rc == 0 && fail == 0))
}

# run_guest VERSION OUT: one guest for the scripts OUT/scripts names.
run_guest() {
	local out=$2
	# Without KVM the guest runs 3-5 times slower than the host, more on
	# a loaded one: test_errors.sh took 1,508 s at a load average of 18.
	echo "INTEGRATION_LIMIT=$([[ $(accel) == tcg ]] && echo 3000 || echo 300)" >"$out/env"
	# The scripts that also draw their HTML page check its numbers from the
	# same run's JSON on every kernel; Chromium's drawing is left to the host.
	echo "TEST_PAGES_ON_HOST=1" >>"$out/env"
	# A guest of another architecture than the host's runs a cross build,
	# which has no fuzzers (fuzz/fuzz.mk): test_hardening.sh says so.
	[[ $VMTEST_ARCH == "$HOST_ARCH" ]] ||
		echo "TEST_FUZZ_ON_HOST=1" >>"$out/env"
	# Scripts at once (tests/run.sh): by default as many as the guest's CPUs.
	echo "TEST_JOBS=${VMTEST_JOBS:-}" >>"$out/env"
	# What the guest's kernel decides of a SIGKILLed leak check (ptrace's
	# detach, the keeper's session) is shown by one trial of each phase;
	# the host runs 12, and 200 by hand (docs/reliability.md). Twelve took
	# 460 s under TCG.
	echo "KILL_TRIALS=${KILL_TRIALS:-4}" >>"$out/env"
	boot_and_wait "$1" "$out"
	grep "$COUNT" "$out/log" | tail -n 1
	return "$(cat "$out/status")"
}

# bench VERSION: bench/run.sh's pair loops (BENCH_GUEST=1) in the guest,
# with the bench/build programs of the same ARCH; the peers and allocators
# the guest's userland lacks are said so in their rows. Its output stays in
# OUT/log.
bench() {
	local out var
	prepare "$1"
	[[ -x $ROOT/bench/build/pairs && -x $ROOT/bench/build/floor ]] ||
		die "build the bench programs first: make ARCH=$VMTEST_ARCH bench-build"
	out=$(mktemp -d "$VMDIR/$1/out-bench.XXXXXX")
	# The guest has no network: no peer is installed there.
	echo "BENCH_GUEST=1 BENCH_NO_INSTALL=1 ./bench/run.sh" >"$out/command"
	: >"$out/env"
	for var in BENCH_ROUNDS BENCH_PAIRS BENCH_THREADS; do
		[[ -n ${!var:-} ]] && echo "$var=${!var}" >>"$out/env"
	done
	boot_and_wait "$1" "$out"
	echo "# vmtest: the bench's output: $out/log"
	return "$(cat "$out/status")"
}

# boot_and_wait VERSION OUT: boot, show OUT/log as it comes, stop on
# the limits; fails unless the guest left its status in OUT/status.
boot_and_wait() {
	local out=$2 start rc=0
	start=$(date +%s)
	boot "$1" "$out" &
	QEMU=$!
	# timeout(1) runs QEMU in a process group of its own: stop it too. Under
	# set -e a kill that fails (QEMU already gone) would make the script's
	# status 1 as it exits.
	trap 'kill "$QEMU" 2>/dev/null || true' EXIT
	watch_boot "$out" "$QEMU" &
	# The count comes last, after the time taken.
	tail -n +1 -F --pid="$QEMU" "$out/log" 2>/dev/null | grep -v --line-buffered "$COUNT" || true
	wait "$QEMU" || rc=$?
	echo "# vmtest: $1 ($(accel)) took $(($(date +%s) - start)) s"
	# Where a guest that stopped early says why (a panic, a failed mount).
	[[ -e $out/status ]] || tail -n 20 "$out/console.log" | tr -d '\033' | sed 's/^/# console: /'
	if [[ -e $out/no-boot ]]; then
		die "the guest did not start the tests within ${VMTEST_BOOT_TIMEOUT} s and was stopped (console: $out/console.log)"
	elif ((rc == 124 || rc == 137)); then
		die "the guest ran past ${VMTEST_TIMEOUT} s and was killed (console: $out/console.log)"
	fi
	[[ -s $out/status ]] ||
		die "the guest stopped without a result (console: $out/console.log)"
}

case ${1:-} in
fetch)
	shift
	arch_prepare
	for v in "$@"; do fetch "$v"; done
	;;
run)
	[[ $# -ge 2 ]] || die "usage: $0 run VERSION [SCRIPT...]"
	shift
	run "$@"
	;;
bench)
	[[ $# -eq 2 ]] || die "usage: $0 bench VERSION"
	bench "$2"
	;;
*)
	die "usage: $0 fetch VERSION... | run VERSION [SCRIPT...] | bench VERSION"
	;;
esac
