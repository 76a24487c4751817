#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h with `bpftool btf dump ... format c`.
#
# usage: vmlinux/gen.sh                 x86 (on an x86_64 host) and arm64
#        vmlinux/gen.sh x86 [BTF]       from BTF (raw blob or ELF vmlinux with
#                                       .BTF); default /sys/kernel/btf/vmlinux,
#                                       which must be an x86_64 kernel's
#        vmlinux/gen.sh arm64 [PKG]     from a Debian arm64 kernel package (name
#                                       or a local .deb); default: what
#                                       linux-image-arm64 depends on
#
# arm64: Debian builds its arm64 kernels with CONFIG_DEBUG_INFO_BTF=y, and the
# kernel image /boot/vmlinuz-* (a raw arm64 Image, possibly gzipped) carries
# the .BTF section verbatim. The package is fetched with `apt-get download`
# against a private, arm64-only copy of the package lists, so the host's
# dpkg architectures and apt state are left untouched. The blob is found by
# its header (magic 0xeB9F, version 1, flags 0, hdr_len 24), validated, cut
# out and handed to bpftool. Each run also writes <arch>/SOURCE (provenance).
#
# Needs: bpftool, apt-get/apt-cache, dpkg-deb, GNU grep (-P), od, gzip.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}

die() {
	echo "gen.sh: $*" >&2
	exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

bpftool_version() {
	"$BPFTOOL" version | sed -n '1s/^.* v/bpftool v/p'
}

# dump BTF_FILE ARCH: write <arch>/vmlinux.h atomically.
dump() {
	"$BPFTOOL" btf dump file "$1" format c >"$tmp/vmlinux.h" ||
		die "bpftool failed on $1"
	mkdir -p "$here/$2"
	mv "$tmp/vmlinux.h" "$here/$2/vmlinux.h"
	echo "gen.sh: wrote $here/$2/vmlinux.h ($(wc -c <"$here/$2/vmlinux.h") bytes)"
}

gen_x86() {
	btf=${1:-/sys/kernel/btf/vmlinux}
	if [ $# -eq 0 ] && [ "$(uname -m)" != x86_64 ]; then
		die "x86: not on an x86_64 host; give an x86 BTF file"
	fi
	[ -r "$btf" ] || die "x86: cannot read $btf"
	dump "$btf" x86
	if [ "$btf" = /sys/kernel/btf/vmlinux ]; then
		from="/sys/kernel/btf/vmlinux of the running kernel $(uname -r) ($(uname -v))"
	else
		from="$btf"
	fi
	printf 'vmlinux.h: bpftool btf dump file ... format c (%s)\nBTF: %s\n' \
		"$(bpftool_version)" "$from" >"$here/x86/SOURCE"
}

# apt-get/apt-cache against private arm64-only package lists under $tmp.
apt_arm64() {
	cmd=$1
	shift
	"$cmd" -q -o APT::Architecture=arm64 -o APT::Architectures::=arm64 \
		-o Dir::State::Lists="$tmp/apt/lists" -o Dir::Cache="$tmp/apt" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
		-o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)" "$@"
}

# u32 FILE OFFSET: the little-endian u32 at OFFSET.
u32() {
	od -A n -t u4 --endian=little -j "$2" -N 4 "$1" | tr -d ' '
}

# find_btf IMAGE OUT: cut the first valid BTF blob out of IMAGE into OUT.
find_btf() {
	img=$1
	total=$(wc -c <"$img")
	LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00' "$img" |
		cut -d: -f1 >"$tmp/offsets" || true
	while read -r off; do
		type_off=$(u32 "$img" $((off + 8)))
		type_len=$(u32 "$img" $((off + 12)))
		str_off=$(u32 "$img" $((off + 16)))
		str_len=$(u32 "$img" $((off + 20)))
		size=$((24 + str_off + str_len))
		[ "$type_len" -gt 0 ] || continue
		[ "$str_len" -gt 0 ] || continue
		[ $((type_off + type_len)) -le "$str_off" ] || continue
		[ $((off + size)) -le "$total" ] || continue
		tail -c +$((off + 1)) "$img" | head -c "$size" >"$2"
		if "$BPFTOOL" btf dump file "$2" >/dev/null 2>&1; then
			echo "gen.sh: BTF at offset $off, $size bytes"
			return 0
		fi
	done <"$tmp/offsets"
	return 1
}

gen_arm64() {
	mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/archives/partial" "$tmp/deb"
	case ${1:-} in
	*.deb)
		[ -r "$1" ] || die "arm64: cannot read $1"
		deb=$1
		;;
	*)
		apt_arm64 apt-get update >/dev/null || die "arm64: apt-get update failed"
		pkg=${1:-$(apt_arm64 apt-cache depends linux-image-arm64 |
			sed -n 's/^ *Depends: \(linux-image-[^ :]*\).*/\1/p' | head -n 1)}
		[ -n "$pkg" ] || die "arm64: cannot resolve linux-image-arm64"
		(cd "$tmp/deb" && apt_arm64 apt-get download "$pkg") >/dev/null ||
			die "arm64: apt-get download $pkg failed"
		deb=$(echo "$tmp"/deb/*.deb)
		;;
	esac
	[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || die "arm64: $deb is not arm64"
	dpkg-deb -x "$deb" "$tmp/root"
	set -- "$tmp"/root/boot/vmlinuz-*
	[ -f "$1" ] || die "arm64: no /boot/vmlinuz-* in $deb"
	img=$1
	if [ "$(od -A n -t x1 -N 2 "$img" | tr -d ' ')" = 1f8b ]; then
		gzip -dc <"$img" >"$tmp/Image"
		img=$tmp/Image
	fi
	find_btf "$img" "$tmp/btf" || die "arm64: no valid BTF blob in $1"
	dump "$tmp/btf" arm64
	{
		printf 'vmlinux.h: bpftool btf dump file ... format c (%s)\n' \
			"$(bpftool_version)"
		printf 'BTF: .BTF blob cut from /boot/%s of Debian package %s %s (%s)\n' \
			"$(basename "$1")" "$(dpkg-deb -f "$deb" Package)" \
			"$(dpkg-deb -f "$deb" Version)" "$(dpkg-deb -f "$deb" Architecture)"
		LC_ALL=C grep -ao 'Linux version [ -~]*#[0-9][ -~]*' "$img" |
			head -n 1
	} >"$here/arm64/SOURCE"
}

case ${1:-all} in
x86)
	shift
	gen_x86 "$@"
	;;
arm64)
	shift
	gen_arm64 "$@"
	;;
all)
	[ $# -eq 0 ] || die "usage: gen.sh [x86 [BTF] | arm64 [PKG|FILE.deb]]"
	if [ "$(uname -m)" = x86_64 ]; then
		gen_x86
	else
		echo "gen.sh: not on x86_64, skipping x86 (use: gen.sh x86 BTF)" >&2
	fi
	gen_arm64
	;;
*) die "usage: gen.sh [x86 [BTF] | arm64 [PKG|FILE.deb]]" ;;
esac
