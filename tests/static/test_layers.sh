#!/bin/bash
# The loader's layers, checked from what each file really includes
# (transitively, as the compiler sees it): the core rooms build without
# libbpf and know nothing of the session or the BPF side, lib/ needs no
# other room, and the BPF program includes only include/ and vmlinux.h.
# See docs/ARCHITECTURE.md. Prints one "ok"/"not ok" line per rule.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
CORE_ROOMS=$(make -s --no-print-directory print-core-rooms)
CC=${CC:-cc}
CPPFLAGS=(-Iinclude -Iuser -Ibuild -D_GNU_SOURCE)
ARCH=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_FLAGS=(-target bpf -D__TARGET_ARCH_"$ARCH" -Iinclude -Ivmlinux/"$ARCH")

# deps FILE: every header FILE reads, one a line (BPF sources as clang
# builds them); "unreadable" when the compiler cannot follow its includes.
deps() {
	local cc=("$CC" "${CPPFLAGS[@]}") out
	[[ $1 == bpf/* ]] && cc=(clang "${BPF_FLAGS[@]}")
	out=$("${cc[@]}" -MM -MT x "$1" 2>/dev/null) || { echo unreadable; return; }
	sed -e 's/^x://' -e 's/\\$//' <<<"$out" | tr ' ' '\n' | sed '/^$/d'
}

# check NAME PATTERN FILES...: no file reads a header matching PATTERN.
CHECKS=0
check() {
	local name=$1 pattern=$2 f d bad=""
	shift 2
	CHECKS=$((CHECKS + 1))
	for f in "$@"; do
		d=$(deps "$f")
		if grep -Eq "^unreadable$|$pattern" <<<"$d"; then
			bad+=" $f ($(grep -E "^unreadable$|$pattern" <<<"$d" | head -n 1))"
		fi
	done
	if [[ -z $bad ]]; then
		echo "ok - layers: $name"
	else
		echo "not ok - layers: $name:$bad"
	fi
}

core=()
for room in $CORE_ROOMS; do
	core+=(user/"$room"/*.c user/"$room"/*.h)
done
check "core rooms build without libbpf" '(^|/)bpf/(libbpf|bpf|btf)\.h$|/usr/include/bpf/' "${core[@]}"
check "core rooms know nothing of the BPF side" '^user/bpf/' "${core[@]}"
check "core rooms know nothing of the session" '^user/app/' "${core[@]}"
others=$(ls -d user/*/ | xargs -n 1 basename | grep -vx lib | paste -sd '|')
check "lib/ needs no other room" "^user/($others)/" user/lib/*.c
check "the BPF program reads only include/ and vmlinux/" '^user/' bpf/*.c
# The TAP plan: as many results as checks.
echo "1..$CHECKS"
