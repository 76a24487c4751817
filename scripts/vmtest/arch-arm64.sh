# shellcheck shell=bash
# vmtest.sh's arm64 guest: Debian's arm64 kernel in qemu-system-aarch64
# (TCG) on an arm64 Debian 12 userland built from Debian's archive by
# mmdebstrap (build/arm64/rootfs, also the cross build's sysroot). The
# names are those of arch-x86.sh.
DEB_ARCH=arm64
ARM64_DIR=$ROOT/build/arm64
ARM64_ROOTFS=${ARM64_ROOTFS:-$ARM64_DIR/rootfs}
# What the integration scripts run in the guest, and the sysroot's
# libraries for `make ARCH=arm64` (the -dev packages).
ARM64_PACKAGES="bash coreutils procps jq file strace util-linux iproute2 kmod
python3 xxd time valgrind gdb curl openssl sqlite3 git perl busybox
libc6-dbg libbpf1 libelf1 libdw1 zlib1g liblzma5 libmicrohttpd12 libcrypt1
libdebuginfod1 libstdc++6 libcmocka0 libjemalloc2 libtcmalloc-minimal4
libmimalloc2.0 musl
libc6-dev libstdc++-12-dev libbpf-dev libelf-dev libdw-dev zlib1g-dev
liblzma-dev libmicrohttpd-dev libcrypt-dev libcmocka-dev libjemalloc-dev
libgoogle-perftools-dev libmimalloc-dev musl-dev"
# The host's packages that build and boot it: the emulator, the user-mode
# emulator mmdebstrap runs the arm64 package scripts with.
ARM64_HOST_PACKAGES="qemu-system-arm qemu-user-static binfmt-support mmdebstrap arch-test"

# The archive apt already uses (deb822 sources of a Debian 12 host).
arm64_mirror() {
	sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/debian.sources \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1
}

# arch_apt CMD ARGS: against arm64-only package lists of their own under
# build/arm64/apt, leaving the host's dpkg architectures and apt state as
# they are; the lists are refreshed once a day.
arch_apt() {
	local cmd=$1 apt=$ARM64_DIR/apt mirror
	shift
	mkdir -p "$apt/lists/partial" "$apt/archives/partial"
	if [[ ! -e $apt/sources.list ]]; then
		mirror=$(arm64_mirror)
		[[ -n $mirror ]] || die "no Debian archive in /etc/apt/sources.list.d/*.sources"
		printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
			"$mirror" "$mirror" "$mirror" >"$apt/sources.list"
	fi
	local opts=(-q -o APT::Architecture=arm64 -o APT::Architectures::=arm64
		-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt"
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1)
	if [[ ! -e $apt/updated || -n $(find "$apt/updated" -mmin +1440) ]]; then
		apt-get "${opts[@]}" update >/dev/null || die "apt-get update of the arm64 lists failed"
		touch "$apt/updated"
	fi
	"$cmd" "${opts[@]}" "$@"
}

arm64_host_tools() {
	local pkg missing=
	for pkg in $ARM64_HOST_PACKAGES; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=" $pkg"
	done
	if [[ -n $missing ]]; then
		echo "vmtest: installing$missing"
		# shellcheck disable=SC2086 # the list is meant to split
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing ||
			die "cannot install$missing"
	fi
	# mmdebstrap runs the arm64 maintainer scripts through qemu-user.
	[[ -e /proc/sys/fs/binfmt_misc/status ]] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 ||
		die "cannot register qemu-aarch64 with binfmt_misc"
}

# arch_prepare: the host's tools, a static arm64 busybox and the rootfs
# (3-6 minutes and about 800 MB, once; delete build/arm64/rootfs to
# rebuild it).
arch_prepare() {
	local deb tmp
	arm64_host_tools
	if [[ ! -x $ARM64_DIR/busybox/bin/busybox ]]; then
		mkdir -p "$VMDIR/debs"
		(cd "$VMDIR/debs" && arch_apt apt-get download busybox-static 2>&1 |
			grep -v '^W: Download is performed unsandboxed' || true)
		deb=$(ls -t "$VMDIR"/debs/busybox-static_*_arm64.deb 2>/dev/null | head -n 1)
		[[ -n $deb ]] || die "cannot download busybox-static (arm64)"
		rm -rf "$ARM64_DIR/busybox"
		dpkg -x "$deb" "$ARM64_DIR/busybox"
	fi
	[[ -d $ARM64_ROOTFS/usr/bin ]] && return 0
	echo "vmtest: building the arm64 userland in $ARM64_ROOTFS (a few minutes, once)"
	tmp=$ARM64_ROOTFS.tmp
	rm -rf "$tmp"
	mmdebstrap --architectures=arm64 --variant=minbase \
		--include="$(echo $ARM64_PACKAGES | tr ' ' ',')" bookworm "$tmp" \
		"$(sed -n 1p "$ARM64_DIR/apt/sources.list")" \
		"$(sed -n 2p "$ARM64_DIR/apt/sources.list")" \
		"$(sed -n 3p "$ARM64_DIR/apt/sources.list")" ||
		die "mmdebstrap of the arm64 userland failed"
	mv "$tmp" "$ARM64_ROOTFS"
}

# An arm64 host's KVM runs it (as for x86, not a nested paravirtual one);
# anywhere else TCG emulates it.
arch_accel() {
	if [[ $(uname -m) == aarch64 && -w /dev/kvm ]]; then
		echo kvm
	else
		echo tcg
	fi
}

arch_busybox() {
	echo "$ARM64_DIR/busybox/bin/busybox"
}

arch_root() {
	echo "$ARM64_ROOTFS"
}

# -cpu max with pointer authentication's implementation-defined algorithm:
# QEMU's default (QARMA5) made the guest 2.6x slower. Debian's arm64
# vmlinuz is the raw Image, which -kernel boots as it is.
arch_qemu() {
	local kernel=$1 initrd=$2 append=$3
	shift 3
	exec timeout -k 10 "$VMTEST_TIMEOUT" qemu-system-aarch64 \
		-M virt -cpu max,pauth-impdef=on -accel "$(accel_opts)" \
		-smp "$VMTEST_CPUS" -m "$VMTEST_MEM" \
		-nographic -no-reboot -monitor none -serial "file:$OUT_DIR/console.log" \
		-kernel "$kernel" -initrd "$initrd" -append "console=ttyAMA0 $append" "$@"
}
