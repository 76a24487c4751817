# shellcheck shell=bash
# vmtest.sh's arm64 guest: Debian's arm64 kernel in qemu-system-aarch64
# (TCG off arm64) on an arm64 Debian 12 userland made from Debian's archive
# (scripts/sysroot.sh, also the cross build's sysroot). The names are those
# of arch-x86.sh.
DEB_ARCH=arm64
ARM64_DIR=$ROOT/build/arm64
# The userland: make ARCH=arm64 deps's sysroot (scripts/sysroot.sh), the
# same the cross build links against.
ARM64_ROOTFS=${SYSROOT:-/var/cache/alloctrace/arm64-rootfs}

# arch_apt CMD ARGS: against arm64-only package lists of their own under
# build/arm64/apt (vmtest.sh's private_apt).
arch_apt() {
	private_apt "$ARM64_DIR/apt" "bookworm bookworm-updates bookworm-security" "$@"
}

# arch_prepare: QEMU and, off arm64, the userland (make ARCH=arm64 deps
# makes both) and a static arm64 busybox for the initramfs, fetched once.
arch_prepare() {
	local deb
	command -v qemu-system-aarch64 >/dev/null ||
		die "qemu-system-aarch64 is missing (run make ARCH=arm64 deps)"
	[[ $HOST_ARCH == arm64 ]] && return 0
	[[ -d $ARM64_ROOTFS/usr/bin ]] ||
		die "no arm64 userland in $ARM64_ROOTFS (run make ARCH=arm64 deps)"
	[[ -x $ARM64_DIR/busybox/bin/busybox ]] && return 0
	mkdir -p "$VMDIR/debs"
	(cd "$VMDIR/debs" && arch_apt apt-get download busybox-static 2>&1 |
		grep -v '^W: Download is performed unsandboxed' || true)
	deb=$(ls -t "$VMDIR"/debs/busybox-static_*_arm64.deb 2>/dev/null | head -n 1)
	[[ -n $deb ]] || die "cannot download busybox-static (arm64)"
	rm -rf "$ARM64_DIR/busybox"
	dpkg -x "$deb" "$ARM64_DIR/busybox"
}

# An arm64 host's KVM runs it (as for x86, not a nested paravirtual one);
# anywhere else TCG emulates it.
arch_accel() {
	if [[ $HOST_ARCH == arm64 && -w /dev/kvm ]]; then
		echo kvm
	else
		echo tcg
	fi
}

arch_busybox() {
	if [[ $HOST_ARCH == arm64 ]]; then
		echo /bin/busybox
	else
		echo "$ARM64_DIR/busybox/bin/busybox"
	fi
}

# On an arm64 host the guest runs on the host's own userland, as an x86-64
# guest does on x86-64.
arch_root() {
	if [[ $HOST_ARCH == arm64 ]]; then
		echo /
	else
		echo "$ARM64_ROOTFS"
	fi
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
