#!/bin/bash
# Writes tests/unit/placement_fixtures_arm64.h: the first instructions of
# the functions alloctrace probes in Debian 12's arm64 packages, as
# aarch64-linux-gnu-objdump shows them, each up to one instruction past
# where probe placement decides (the count beside each name below), and
# whole functions, whose exits placement finds.
# Usage: scripts/placement_fixtures_arm64.sh DEBDIR > tests/unit/placement_fixtures_arm64.h
# DEBDIR holds the arm64 .debs, e.g. from `apt-get download` with arm64
# lists (../shared/arm64/common.sh's download_arm64): libc6, libjemalloc2,
# libtcmalloc-minimal4, libgoogle-perftools4, libmimalloc2.0, musl, libstdc++6.
set -euo pipefail
debdir=${1:?usage: $0 DEBDIR}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for deb in "$debdir"/*.deb; do dpkg -x "$deb" "$root"; done
versions=$(for deb in "$debdir"/*.deb; do dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb"; done |
	paste -sd',' | sed 's/,/, /g; s/$/./' | fold -s -w 72 | sed 's/^/ * /; s/ *$//')

# NAME LIBRARY SYMBOL INSTRUCTIONS
funcs='
glibc_malloc lib/aarch64-linux-gnu/libc.so.6 malloc 2
glibc_free lib/aarch64-linux-gnu/libc.so.6 free 2
glibc_calloc lib/aarch64-linux-gnu/libc.so.6 calloc 2
glibc_realloc lib/aarch64-linux-gnu/libc.so.6 realloc 2
glibc_posix_memalign lib/aarch64-linux-gnu/libc.so.6 posix_memalign 2
glibc_aligned_alloc lib/aarch64-linux-gnu/libc.so.6 aligned_alloc 2
glibc_memalign lib/aarch64-linux-gnu/libc.so.6 memalign 2
glibc_valloc lib/aarch64-linux-gnu/libc.so.6 valloc 2
glibc_pvalloc lib/aarch64-linux-gnu/libc.so.6 pvalloc 2
glibc_mmap lib/aarch64-linux-gnu/libc.so.6 mmap 3
glibc_munmap lib/aarch64-linux-gnu/libc.so.6 munmap 4
jemalloc_malloc usr/lib/aarch64-linux-gnu/libjemalloc.so.2 malloc 3
jemalloc_free usr/lib/aarch64-linux-gnu/libjemalloc.so.2 free 2
jemalloc_calloc usr/lib/aarch64-linux-gnu/libjemalloc.so.2 calloc 2
jemalloc_realloc usr/lib/aarch64-linux-gnu/libjemalloc.so.2 realloc 2
jemalloc_posix_memalign usr/lib/aarch64-linux-gnu/libjemalloc.so.2 posix_memalign 2
jemalloc_memalign usr/lib/aarch64-linux-gnu/libjemalloc.so.2 memalign 2
jemalloc_aligned_alloc usr/lib/aarch64-linux-gnu/libjemalloc.so.2 aligned_alloc 2
jemalloc_valloc usr/lib/aarch64-linux-gnu/libjemalloc.so.2 valloc 2
jemalloc_sdallocx usr/lib/aarch64-linux-gnu/libjemalloc.so.2 sdallocx 4
jemalloc_new usr/lib/aarch64-linux-gnu/libjemalloc.so.2 _Znwm 3
jemalloc_delete usr/lib/aarch64-linux-gnu/libjemalloc.so.2 _ZdlPv 2
jemalloc_delete_sized usr/lib/aarch64-linux-gnu/libjemalloc.so.2 _ZdlPvm 2
tcmalloc_minimal_malloc usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 malloc 2
tcmalloc_minimal_free usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 free 2
tcmalloc_minimal_calloc usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 calloc 2
tcmalloc_minimal_realloc usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 realloc 2
tcmalloc_minimal_posix_memalign usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 posix_memalign 6
tcmalloc_minimal_memalign usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 memalign 4
tcmalloc_minimal_valloc usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 valloc 2
tcmalloc_minimal_pvalloc usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 pvalloc 2
tcmalloc_minimal_new usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 _Znwm 2
tcmalloc_minimal_delete_sized usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 _ZdlPvm 2
tcmalloc_minimal_mmap usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 mmap 2
tcmalloc_minimal_munmap usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4 munmap 3
tcmalloc_malloc usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 malloc 2
tcmalloc_free usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 free 2
tcmalloc_calloc usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 calloc 2
tcmalloc_realloc usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 realloc 2
tcmalloc_posix_memalign usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 posix_memalign 6
tcmalloc_memalign usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 memalign 4
tcmalloc_new usr/lib/aarch64-linux-gnu/libtcmalloc.so.4 _Znwm 2
mimalloc_malloc usr/lib/aarch64-linux-gnu/libmimalloc.so.2 malloc 2
mimalloc_free usr/lib/aarch64-linux-gnu/libmimalloc.so.2 free 3
mimalloc_calloc usr/lib/aarch64-linux-gnu/libmimalloc.so.2 calloc 2
mimalloc_realloc usr/lib/aarch64-linux-gnu/libmimalloc.so.2 realloc 2
mimalloc_posix_memalign usr/lib/aarch64-linux-gnu/libmimalloc.so.2 posix_memalign 2
mimalloc_memalign usr/lib/aarch64-linux-gnu/libmimalloc.so.2 memalign 2
mimalloc_valloc usr/lib/aarch64-linux-gnu/libmimalloc.so.2 valloc 2
mimalloc_reallocarray usr/lib/aarch64-linux-gnu/libmimalloc.so.2 reallocarray 2
mimalloc_new usr/lib/aarch64-linux-gnu/libmimalloc.so.2 _Znwm 2
mimalloc_delete_sized usr/lib/aarch64-linux-gnu/libmimalloc.so.2 _ZdlPvm 2
musl_malloc lib/aarch64-linux-musl/libc.so malloc 2
musl_free lib/aarch64-linux-musl/libc.so free 2
musl_calloc lib/aarch64-linux-musl/libc.so calloc 2
musl_realloc lib/aarch64-linux-musl/libc.so realloc 2
musl_posix_memalign lib/aarch64-linux-musl/libc.so posix_memalign 4
musl_memalign lib/aarch64-linux-musl/libc.so memalign 2
musl_aligned_alloc lib/aarch64-linux-musl/libc.so aligned_alloc 2
musl_valloc lib/aarch64-linux-musl/libc.so valloc 2
musl_munmap lib/aarch64-linux-musl/libc.so munmap 7
libstdcxx_new usr/lib/aarch64-linux-gnu/libstdc++.so.6 _Znwm 2
libstdcxx_delete usr/lib/aarch64-linux-gnu/libstdc++.so.6 _ZdlPv 2
libstdcxx_delete_sized usr/lib/aarch64-linux-gnu/libstdc++.so.6 _ZdlPvm 2
'
# Whole functions, for placement__exits(): NAME LIBRARY SYMBOL.
bodies='
glibc_malloc lib/aarch64-linux-gnu/libc.so.6 malloc
glibc_calloc lib/aarch64-linux-gnu/libc.so.6 calloc
glibc_memalign lib/aarch64-linux-gnu/libc.so.6 memalign
glibc_reallocarray lib/aarch64-linux-gnu/libc.so.6 reallocarray
libstdcxx_new_nothrow usr/lib/aarch64-linux-gnu/libstdc++.so.6 _ZnwmRKSt9nothrow_t
'

# The address of SYMBOL's default version in LIB.
address() {
	aarch64-linux-gnu-nm -D --defined-only "$1" |
		awk -v s="$2" '!found && ($3 == s || index($3, s "@@") == 1) { print $1; found = 1 }'
}

# SYMBOL's size in LIB, in hex.
length() {
	aarch64-linux-gnu-nm -D -S --defined-only "$1" |
		awk -v s="$2" '!found && ($4 == s || index($4, s "@@") == 1) { print $2; found = 1 }'
}

# One fixture: NAME LIB SYMBOL COUNT (all of it without one).
fixture() {
	local name=$1 lib=$root/$2 sym=$3 count=${4:-} addr
	addr=$(address "$lib" "$sym")
	[[ -n $addr ]] || return 0
	[[ -n $count ]] || count=$((0x$(length "$lib" "$sym") / 4))
	printf '\n/* %s in %s */\nstatic const uint8_t %s[] = {\n' "$sym" "${2##*/}" "$name"
	aarch64-linux-gnu-objdump -d \
		--start-address=0x"$addr" --stop-address=$((0x$addr + 4 * count)) "$lib" |
		awk '/^ *[0-9a-f]+:\t[0-9a-f]+ / {
			split($0, f, "\t"); w = f[2]; sub(/ *$/, "", w)
			ins = f[3]; for (i = 4; i in f; i++) ins = ins " " f[i]
			sub(/ *\/\/.*$/, "", ins); sub(/ <[^>]*>/, "", ins); sub(/ *$/, "", ins)
			gsub(/\t/, " ", ins)
			printf "    0x%s, 0x%s, 0x%s, 0x%s, /* +%d: %s */\n",
				substr(w, 7, 2), substr(w, 5, 2), substr(w, 3, 2), substr(w, 1, 2),
				4 * n++, ins }'
	echo '};'
}

cat <<HDR
/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The first instructions of the functions alloctrace probes, as
 * aarch64-linux-gnu-objdump shows them in Debian 12's arm64 packages:
$versions
 * Each stops one instruction past where placement decides; the a64_body_
 * ones are whole functions.
 * Written by scripts/placement_fixtures_arm64.sh: run it again, never edit.
 */
#ifndef ALLOCTRACE_PLACEMENT_FIXTURES_ARM64_H
#define ALLOCTRACE_PLACEMENT_FIXTURES_ARM64_H

#include <stdint.h>
HDR
while read -r name lib sym count; do
	[[ -n $name ]] && fixture "a64_$name" "$lib" "$sym" "$count"
done <<<"$funcs"
while read -r name lib sym; do
	[[ -n $name ]] && fixture "a64_body_$name" "$lib" "$sym"
done <<<"$bodies"
printf '\n#endif\n'
