#!/bin/sh
# Install what alloctrace needs to build and test, from Debian's packages.
# Idempotent: installs only what is missing, and touches apt only then.
set -eu

# Build: compilers, clang-format (make format-check), libbpf, bpftool, elfutils,
# zlib; xxd embeds the HTML page; libmicrohttpd (with GnuTLS) serves
# --listen, libcrypt checks its bcrypt passwords.
# Symbols: libdebuginfod1, which libdw loads to fetch debug files from
# DEBUGINFOD_URLS; libc6-dbg, libc's debug file, whose symbol table names
# its static functions (__libc_start_call_main) and versions
# (dlopen@@GLIBC_2.34) in the tests' stacks.
# Tests: cmocka, jq, file, strace, Go (go tool pprof), Chromium (the HTML page),
# debuginfod (a local server) and xz-utils (MiniDebugInfo) for test_symbols,
# python3 (stacks through ctypes; crypt's bcrypt and the HTTP load of
# test_metrics), util-linux (unshare), prometheus, curl, openssl (a
# self-signed certificate) and iproute2's ss for --listen (the package only
# installs; the test runs its own server),
# clang's sanitizer and libFuzzer runtimes, and the allocators the tests
# trace: jemalloc, tcmalloc, mimalloc, musl; valgrind, whose leak classes
# the leak-check engine's are compared with, on real programs too (sqlite3, git,
# perl, python3), and gdb, a debugger the leak check must refuse to share a
# process with; cmake, a real program whose libraries allocate in their
# constructors.
# make bench: time(1), the loader's peak RSS while it builds clang's unwind tables.
# test_cfi: binutils-aarch64-linux-gnu, for its arm64 fixture on any host.
# make vmtest: QEMU, a static busybox, cpio and xz-utils (the kernel
# package's modules are xz-compressed) for the guest's initramfs.
# make deb (and test_package): debhelper, dpkg-dev and lintian.
PACKAGES="make gcc g++ clang clang-format libbpf-dev bpftool libelf-dev libdw-dev liblzma-dev zlib1g-dev
pkg-config xxd libmicrohttpd-dev libcrypt-dev openssl libcmocka-dev jq procps file golang-go chromium libclang-rt-14-dev nodejs
python3 util-linux prometheus curl iproute2 libdebuginfod1 libc6-dbg debuginfod xz-utils cmake time
libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev musl-tools strace valgrind gdb
sqlite3 git perl
qemu-system-x86 busybox-static cpio
debhelper dpkg-dev lintian
binutils-aarch64-linux-gnu"

# make ARCH=arm64 deps on an x86-64 host: Debian's cross compilers;
# mmdebstrap and qemu-user-static make the sysroot (scripts/sysroot.sh: an
# arm64 Debian 12 with the -dev packages, also a guest's root), whose
# arm64 package scripts run through qemu-user; qemu-system-arm boots an
# arm64 guest. Not installed for the host's own build.
HOST_ARCH=$("$(dirname "$0")/host-arch.sh")
ARCH=${ARCH:-$HOST_ARCH}
SYSROOT=${SYSROOT:-/var/cache/alloctrace/arm64-rootfs}
CROSS=""
if [ "$ARCH" != "$HOST_ARCH" ]; then
	[ "$ARCH" = arm64 ] || { echo "deps: ARCH=$ARCH: only arm64 is cross-built" >&2; exit 1; }
	CROSS=1
	PACKAGES="$PACKAGES gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu
qemu-user-static qemu-system-arm mmdebstrap arch-test"
fi

missing=""
for pkg in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $pkg"
	fi
done

# Debian's nodejs does not ship npm, which fetches speedscope below; an npm
# installed otherwise will do.
command -v npm >/dev/null || missing="$missing npm"

# speedscope, to check that it opens alloctrace's pprof files: npm's
# package, unpacked into build/ (it is test tooling, not shipped).
SPEEDSCOPE=speedscope@1.25.0
fetch_speedscope() {
	dir=build/speedscope
	[ -f "$dir/dist/release/index.html" ] && return 0
	command -v npm >/dev/null || { echo "deps: npm is missing" >&2; return 1; }
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "$SPEEDSCOPE" >/dev/null) &&
		mkdir -p "$dir" && tar xzf "$tmp"/speedscope-*.tgz -C "$dir" --strip-components=1
	rc=$?
	rm -rf "$tmp"
	return $rc
}

# The kernels make vmtest boots, Debian's own (scripts/vmtest.sh): fetched
# once, unpacked into build/vmtest/. Only make vmtest needs them (and
# fetches one itself when it is missing), so failing to fetch them here is
# said, not fatal to the build and tests.
# ARCH's: make ARCH=arm64 deps fetches the arm64 kernels.
VMTEST_KERNELS="6.1 6.12 5.10"
export VMTEST_ARCH="$ARCH"
fetch_kernels() {
	# shellcheck disable=SC2086 # the list is meant to split
	./scripts/vmtest.sh fetch $VMTEST_KERNELS && return
	# A fresh system (a container image) may have no apt index yet.
	# shellcheck disable=SC2086 # the list is meant to split
	if [ "$(id -u)" -eq 0 ] && apt-get update -qq &&
		./scripts/vmtest.sh fetch $VMTEST_KERNELS; then
		return
	fi
	echo "deps: warning: the kernels for make vmtest were not fetched" >&2
}

# The cross build's sysroot, once the tools that make it are there.
make_sysroot() {
	[ -z "$CROSS" ] || ./scripts/sysroot.sh "$SYSROOT"
}

if [ -z "$missing" ]; then
	echo "deps: everything is installed"
	make_sysroot && fetch_speedscope && fetch_kernels
	exit
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing:$missing; run 'sudo make deps'" >&2
	exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # the list is meant to split
apt-get install -y -qq --no-install-recommends $missing
make_sysroot && fetch_speedscope && fetch_kernels
