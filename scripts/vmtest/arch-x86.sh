# shellcheck shell=bash
# vmtest.sh's x86-64 guest: Debian's amd64 kernel in qemu-system-x86_64,
# with the host's own root (this machine is the userland under test).
# Each arch-*.sh defines the same names (scripts/vmtest.sh reads them):
#   DEB_ARCH            Debian's name of the architecture
#   arch_apt CMD ARGS   apt-get/apt-cache against that architecture's index
#   arch_prepare        fetch what the guest needs beyond the kernel
#   arch_accel          kvm or tcg
#   arch_busybox        a static busybox for the initramfs
#   arch_root           the directory the guest runs on, read-only
#   arch_qemu KERNEL INITRD APPEND SHARES...   exec QEMU
DEB_ARCH=amd64

arch_apt() {
	"$@"
}

arch_prepare() {
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 is missing (run make deps)"
}

# KVM where it runs a stock kernel; the nested paravirtual kvm_pvm does
# not (emulation errors), so TCG there.
arch_accel() {
	if [[ -w /dev/kvm && ! -e /sys/module/kvm_pvm ]]; then
		echo kvm
	else
		echo tcg
	fi
}

arch_busybox() {
	echo /bin/busybox
}

arch_root() {
	echo /
}

# no_timer_check: under TCG on a loaded host the kernel's check of the
# IO-APIC timer can miss its ticks and panic ("IO-APIC + timer doesn't
# work!"), as a 6.1 guest did here at a load average of 18.
arch_qemu() {
	local kernel=$1 initrd=$2 append=$3
	shift 3
	exec timeout -k 10 "$VMTEST_TIMEOUT" qemu-system-x86_64 \
		-accel "$(accel_opts)" -cpu max -smp "$VMTEST_CPUS" -m "$VMTEST_MEM" \
		-nographic -no-reboot -monitor none -serial "file:$OUT_DIR/console.log" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 no_timer_check $append" "$@"
}
