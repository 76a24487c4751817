#!/bin/bash
# sysroot.sh DIR: an arm64 Debian 12 userland in DIR, made by mmdebstrap
# from Debian's archive (the same mirror and suite as the host's apt),
# running the arm64 packages' scripts through qemu-user-static. It is the
# sysroot `make ARCH=arm64` links against (the -dev packages the loader,
# unit tests and workloads need) and can be a guest's root (the tools the
# integration tests call). Made once; an existing DIR gets only the
# packages added to PKGS since, by apt-get in it (add_missing).
set -euo pipefail
DIR=${1:?usage: sysroot.sh DIR}
ARCH=arm64
MIRROR=${MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' \
	/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# Build: libc and libstdc++ (build-essential), libbpf, elfutils, zlib, xz,
# libmicrohttpd, libcrypt, cmocka; the allocators the workloads link
# (jemalloc, tcmalloc, mimalloc, musl). Guest: bpftool and what the
# integration tests call (valgrind, gdb and the real programs of the leak
# checks among them); libc6-dbg (tests name static functions of libc);
# golang-go (go tool pprof reads the pprof exports back); clang-14 (the
# big C++ program test_bigbinary.sh traces: 2.5 million unwind rows),
# cmake (a real program test_linkmap.sh traces), debuginfod (the server
# test_symbols.sh asks), prometheus (the scraper test_metrics.sh runs).
PKGS=build-essential,libbpf-dev,libelf-dev,libdw-dev,liblzma-dev,zlib1g-dev,libmicrohttpd-dev
PKGS+=,libcrypt-dev,libcmocka-dev,libjemalloc-dev,libgoogle-perftools-dev,libmimalloc-dev
PKGS+=,musl-dev,musl-tools,libc6-dbg,bpftool,procps,jq,file,strace,util-linux,iproute2,kmod
PKGS+=,python3,xxd,time,busybox,valgrind,gdb,curl,openssl,sqlite3,git,perl,golang-go,clang-14
PKGS+=,cmake,debuginfod,prometheus

# mmdebstrap and apt-get in DIR run the arm64 maintainer scripts through binfmt_misc.
if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]; then
	[[ -e /proc/sys/fs/binfmt_misc/register ]] ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	cat /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register
fi

# add_missing: DIR's dpkg database read from here; what it lacks of PKGS is
# installed by DIR's own apt-get (chrooted, from the archives mmdebstrap
# wrote into its sources.list): minutes, where a new DIR takes 3-6.
add_missing() {
	local pkg missing=()

	for pkg in ${PKGS//,/ }; do
		dpkg-query --admindir="$DIR/var/lib/dpkg" -W -f='${Status}' "$pkg" 2>/dev/null |
			grep -q 'ok installed' || missing+=("$pkg")
	done
	if ((${#missing[@]} == 0)); then
		echo "sysroot: $DIR exists"
		return 0
	fi
	echo "sysroot: adding ${missing[*]} to $DIR"
	chroot "$DIR" apt-get -q update
	chroot "$DIR" env DEBIAN_FRONTEND=noninteractive \
		apt-get -q -y --no-install-recommends install "${missing[@]}"
	chroot "$DIR" apt-get -q clean
}

if [[ -d $DIR/usr/include/bpf ]]; then
	add_missing
	exit 0
fi
mkdir -p "$(dirname "$DIR")"
rm -rf "$DIR.tmp"
mmdebstrap --architectures=$ARCH --variant=minbase --include="$PKGS" "$SUITE" "$DIR.tmp" \
	"deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" \
	"deb ${MIRROR%/debian}/debian-security $SUITE-security main"
mv "$DIR.tmp" "$DIR"
echo "sysroot: $DIR ($(du -sh "$DIR" | cut -f1))"
