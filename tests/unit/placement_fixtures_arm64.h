/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The first instructions of the functions alloctrace probes, as
 * aarch64-linux-gnu-objdump shows them in Debian 12's arm64 packages:
 * libc6 2.36-9+deb12u14, libgoogle-perftools4 2.10-1, libjemalloc2
 * 5.3.0-1, libmimalloc2.0 2.0.9+ds-2, libstdc++6 12.2.0-14+deb12u1,
 * libtcmalloc-minimal4 2.10-1, musl 1.2.3-1.
 * Each stops one instruction past where placement decides.
 * Written by scripts/placement_fixtures_arm64.sh: run it again, never edit.
 */
#ifndef ALLOCTRACE_PLACEMENT_FIXTURES_ARM64_H
#define ALLOCTRACE_PLACEMENT_FIXTURES_ARM64_H

#include <stdint.h>

/* malloc in libc.so.6 */
static const uint8_t a64_glibc_malloc[] = {
    0xfd, 0x7b, 0xbc, 0xa9, /* +0: stp x29, x30, [sp, #-64]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
};

/* free in libc.so.6 */
static const uint8_t a64_glibc_free[] = {
    0x80, 0x08, 0x00, 0xb4, /* +0: cbz x0, 92ad4 */
    0xfd, 0x7b, 0xbc, 0xa9, /* +4: stp x29, x30, [sp, #-64]! */
};

/* calloc in libc.so.6 */
static const uint8_t a64_glibc_calloc[] = {
    0xfd, 0x7b, 0xbb, 0xa9, /* +0: stp x29, x30, [sp, #-80]! */
    0x02, 0x7c, 0xc1, 0x9b, /* +4: umulh x2, x0, x1 */
};

/* realloc in libc.so.6 */
static const uint8_t a64_glibc_realloc[] = {
    0xfd, 0x7b, 0xb9, 0xa9, /* +0: stp x29, x30, [sp, #-112]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
};

/* posix_memalign in libc.so.6 */
static const uint8_t a64_glibc_posix_memalign[] = {
    0xfd, 0x7b, 0xbd, 0xa9, /* +0: stp x29, x30, [sp, #-48]! */
    0x83, 0x08, 0x00, 0xd0, /* +4: adrp x3, 1a6000 */
};

/* aligned_alloc in libc.so.6 */
static const uint8_t a64_glibc_aligned_alloc[] = {
    0xfd, 0x7b, 0xbd, 0xa9, /* +0: stp x29, x30, [sp, #-48]! */
    0x82, 0x08, 0x00, 0xf0, /* +4: adrp x2, 1a6000 */
};

/* memalign in libc.so.6 */
static const uint8_t a64_glibc_memalign[] = {
    0xfd, 0x7b, 0xbd, 0xa9, /* +0: stp x29, x30, [sp, #-48]! */
    0x82, 0x08, 0x00, 0xf0, /* +4: adrp x2, 1a6000 */
};

/* valloc in libc.so.6 */
static const uint8_t a64_glibc_valloc[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0x81, 0x08, 0x00, 0xf0, /* +4: adrp x1, 1a6000 */
};

/* pvalloc in libc.so.6 */
static const uint8_t a64_glibc_pvalloc[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0x81, 0x08, 0x00, 0xf0, /* +4: adrp x1, 1a6000 */
};

/* mmap in libc.so.6 */
static const uint8_t a64_glibc_mmap[] = {
    0xbf, 0x2c, 0x40, 0xf2, /* +0: tst x5, #0xfff */
    0x21, 0x01, 0x00, 0x54, /* +4: b.ne e7dc8 */
    0x42, 0x7c, 0x40, 0x93, /* +8: sxtw x2, w2 */
};

/* munmap in libc.so.6 */
static const uint8_t a64_glibc_munmap[] = {
    0x1f, 0x20, 0x03, 0xd5, /* +0: nop */
    0xe8, 0x1a, 0x80, 0xd2, /* +4: mov x8, #0xd7 */
    0x01, 0x00, 0x00, 0xd4, /* +8: svc #0x0 */
    0x1f, 0xfc, 0x3f, 0xb1, /* +12: cmn x0, #0xfff */
};

/* malloc in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_malloc[] = {
    0x1f, 0x04, 0x40, 0xf1, /* +0: cmp x0, #0x1, lsl #12 */
    0x88, 0x04, 0x00, 0x54, /* +4: b.hi 1a724 */
    0x01, 0x1c, 0x00, 0x91, /* +8: add x1, x0, #0x7 */
};

/* free in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_free[] = {
    0x01, 0x04, 0x00, 0xf0, /* +0: adrp x1, 9f000 */
    0x21, 0x70, 0x46, 0xf9, /* +4: ldr x1, [x1, #3296] */
};

/* calloc in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_calloc[] = {
    0xfd, 0x7b, 0xb3, 0xa9, /* +0: stp x29, x30, [sp, #-208]! */
    0x42, 0xd0, 0x3b, 0xd5, /* +4: mrs x2, tpidr_el0 */
};

/* realloc in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_realloc[] = {
    0x02, 0x04, 0x00, 0xd0, /* +0: adrp x2, 9f000 */
    0x42, 0xac, 0x46, 0xf9, /* +4: ldr x2, [x2, #3416] */
};

/* posix_memalign in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_posix_memalign[] = {
    0xfd, 0x7b, 0xb5, 0xa9, /* +0: stp x29, x30, [sp, #-176]! */
    0x43, 0xd0, 0x3b, 0xd5, /* +4: mrs x3, tpidr_el0 */
};

/* memalign in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_memalign[] = {
    0xfd, 0x7b, 0xb6, 0xa9, /* +0: stp x29, x30, [sp, #-160]! */
    0x42, 0xd0, 0x3b, 0xd5, /* +4: mrs x2, tpidr_el0 */
};

/* aligned_alloc in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_aligned_alloc[] = {
    0xfd, 0x7b, 0xb6, 0xa9, /* +0: stp x29, x30, [sp, #-160]! */
    0x42, 0xd0, 0x3b, 0xd5, /* +4: mrs x2, tpidr_el0 */
};

/* valloc in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_valloc[] = {
    0xfd, 0x7b, 0xb7, 0xa9, /* +0: stp x29, x30, [sp, #-144]! */
    0x41, 0xd0, 0x3b, 0xd5, /* +4: mrs x1, tpidr_el0 */
};

/* sdallocx in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_sdallocx[] = {
    0x3f, 0x04, 0x40, 0xf1, /* +0: cmp x1, #0x1, lsl #12 */
    0x40, 0x98, 0x40, 0x7a, /* +4: ccmp w2, #0x0, #0x0, ls */
    0xa1, 0x03, 0x00, 0x54, /* +8: b.ne 2056c */
    0x23, 0x1c, 0x00, 0x91, /* +12: add x3, x1, #0x7 */
};

/* _Znwm in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_new[] = {
    0x1f, 0x04, 0x40, 0xf1, /* +0: cmp x0, #0x1, lsl #12 */
    0x88, 0x04, 0x00, 0x54, /* +4: b.hi 740a4 */
    0x01, 0x1c, 0x00, 0x91, /* +8: add x1, x0, #0x7 */
};

/* _ZdlPv in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_delete[] = {
    0x2f, 0x51, 0xfe, 0x17, /* +0: b 8760 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* _ZdlPvm in libjemalloc.so.2 */
static const uint8_t a64_jemalloc_delete_sized[] = {
    0xc0, 0x00, 0x00, 0xb4, /* +0: cbz x0, 742dc */
    0xfd, 0x7b, 0xbf, 0xa9, /* +4: stp x29, x30, [sp, #-16]! */
};

/* malloc in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_malloc[] = {
    0xc1, 0x00, 0x00, 0xb0, /* +0: adrp x1, 37000 */
    0x21, 0x18, 0x44, 0xf9, /* +4: ldr x1, [x1, #2096] */
};

/* free in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_free[] = {
    0x41, 0x0e, 0x00, 0x90, /* +0: adrp x1, 1e5000 */
    0xe2, 0x03, 0x00, 0xaa, /* +4: mov x2, x0 */
};

/* calloc in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_calloc[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
};

/* realloc in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_realloc[] = {
    0xff, 0x43, 0x02, 0xd1, /* +0: sub sp, sp, #0x90 */
    0xfd, 0x7b, 0x02, 0xa9, /* +4: stp x29, x30, [sp, #32] */
};

/* posix_memalign in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_posix_memalign[] = {
    0x24, 0x04, 0x00, 0xd1, /* +0: sub x4, x1, #0x1 */
    0x84, 0x08, 0x40, 0xb2, /* +4: orr x4, x4, #0x7 */
    0x9f, 0x00, 0x01, 0xea, /* +8: tst x4, x1 */
    0x24, 0x08, 0x40, 0xfa, /* +12: ccmp x1, #0x0, #0x4, eq */
    0x61, 0x00, 0x00, 0x54, /* +16: b.ne 1ee2c */
    0xc0, 0x02, 0x80, 0x52, /* +20: mov w0, #0x16 */
};

/* memalign in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_memalign[] = {
    0xe2, 0x03, 0x00, 0xaa, /* +0: mov x2, x0 */
    0x1f, 0x08, 0x40, 0xf1, /* +4: cmp x0, #0x2, lsl #12 */
    0x28, 0x07, 0x00, 0x54, /* +8: b.hi 1edac */
    0x20, 0x04, 0x00, 0xd1, /* +12: sub x0, x1, #0x1 */
};

/* valloc in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_valloc[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
};

/* pvalloc in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_pvalloc[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
};

/* _Znwm in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_new[] = {
    0xc1, 0x00, 0x00, 0xb0, /* +0: adrp x1, 37000 */
    0x21, 0x18, 0x44, 0xf9, /* +4: ldr x1, [x1, #2096] */
};

/* _ZdlPvm in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_delete_sized[] = {
    0x42, 0x0e, 0x00, 0x90, /* +0: adrp x2, 1e5000 */
    0x43, 0xa4, 0x47, 0xf9, /* +4: ldr x3, [x2, #3912] */
};

/* mmap in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_mmap[] = {
    0xfd, 0x7b, 0xba, 0xa9, /* +0: stp x29, x30, [sp, #-96]! */
    0xa7, 0x00, 0x00, 0xf0, /* +4: adrp x7, 36000 */
};

/* munmap in libtcmalloc_minimal.so.4 */
static const uint8_t a64_tcmalloc_minimal_munmap[] = {
    0xfd, 0x7b, 0xbc, 0xa9, /* +0: stp x29, x30, [sp, #-64]! */
    0xa2, 0x00, 0x00, 0xf0, /* +4: adrp x2, 36000 */
    0xfd, 0x03, 0x00, 0x91, /* +8: mov x29, sp */
};

/* malloc in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_malloc[] = {
    0x01, 0x01, 0x00, 0xb0, /* +0: adrp x1, 5a000 */
    0x21, 0xd4, 0x46, 0xf9, /* +4: ldr x1, [x1, #3496] */
};

/* free in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_free[] = {
    0x81, 0x0e, 0x00, 0xd0, /* +0: adrp x1, 209000 */
    0xe2, 0x03, 0x00, 0xaa, /* +4: mov x2, x0 */
};

/* calloc in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_calloc[] = {
    0x03, 0x01, 0x00, 0xd0, /* +0: adrp x3, 59000 */
    0x63, 0x70, 0x46, 0xf9, /* +4: ldr x3, [x3, #3296] */
};

/* realloc in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_realloc[] = {
    0xff, 0x83, 0x02, 0xd1, /* +0: sub sp, sp, #0xa0 */
    0xfd, 0x7b, 0x02, 0xa9, /* +4: stp x29, x30, [sp, #32] */
};

/* posix_memalign in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_posix_memalign[] = {
    0x24, 0x04, 0x00, 0xd1, /* +0: sub x4, x1, #0x1 */
    0x84, 0x08, 0x40, 0xb2, /* +4: orr x4, x4, #0x7 */
    0x9f, 0x00, 0x01, 0xea, /* +8: tst x4, x1 */
    0x24, 0x08, 0x40, 0xfa, /* +12: ccmp x1, #0x0, #0x4, eq */
    0x61, 0x00, 0x00, 0x54, /* +16: b.ne 3972c */
    0xc0, 0x02, 0x80, 0x52, /* +20: mov w0, #0x16 */
};

/* memalign in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_memalign[] = {
    0xe3, 0x03, 0x00, 0xaa, /* +0: mov x3, x0 */
    0x1f, 0x08, 0x40, 0xf1, /* +4: cmp x0, #0x2, lsl #12 */
    0xc8, 0x07, 0x00, 0x54, /* +8: b.hi 39680 */
    0x22, 0x04, 0x00, 0xd1, /* +12: sub x2, x1, #0x1 */
};

/* _Znwm in libtcmalloc.so.4 */
static const uint8_t a64_tcmalloc_new[] = {
    0x01, 0x01, 0x00, 0xd0, /* +0: adrp x1, 5a000 */
    0x21, 0xd4, 0x46, 0xf9, /* +4: ldr x1, [x1, #3496] */
};

/* malloc in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_malloc[] = {
    0x02, 0x01, 0x00, 0x90, /* +0: adrp x2, 2f000 */
    0x42, 0xf4, 0x47, 0xf9, /* +4: ldr x2, [x2, #4072] */
};

/* free in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_free[] = {
    0xe3, 0x03, 0x00, 0xaa, /* +0: mov x3, x0 */
    0x60, 0x03, 0x00, 0xb4, /* +4: cbz x0, 10440 */
    0x00, 0x04, 0x00, 0xd1, /* +8: sub x0, x0, #0x1 */
};

/* calloc in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_calloc[] = {
    0xe2, 0x00, 0x00, 0xf0, /* +0: adrp x2, 2f000 */
    0x42, 0xf4, 0x47, 0xf9, /* +4: ldr x2, [x2, #4072] */
};

/* realloc in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_realloc[] = {
    0xe3, 0x00, 0x00, 0xf0, /* +0: adrp x3, 2f000 */
    0x63, 0xf4, 0x47, 0xf9, /* +4: ldr x3, [x3, #4072] */
};

/* posix_memalign in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_posix_memalign[] = {
    0xac, 0xd6, 0xff, 0x17, /* +0: b 5800 */
    0x03, 0xd6, 0xff, 0x17, /* +4: b 5560 */
};

/* memalign in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_memalign[] = {
    0x53, 0xd6, 0xff, 0x17, /* +0: b 56c0 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* valloc in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_valloc[] = {
    0x9c, 0xd5, 0xff, 0x17, /* +0: b 53b0 */
    0x83, 0xd6, 0xff, 0x17, /* +4: b 5750 */
};

/* reallocarray in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_reallocarray[] = {
    0xaf, 0xd6, 0xff, 0x17, /* +0: b 5820 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* _Znwm in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_new[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0x42, 0xd0, 0x3b, 0xd5, /* +4: mrs x2, tpidr_el0 */
};

/* _ZdlPvm in libmimalloc.so.2 */
static const uint8_t a64_mimalloc_delete_sized[] = {
    0xf0, 0xd3, 0xff, 0x17, /* +0: b 55d0 */
    0xbb, 0xd4, 0xff, 0x17, /* +4: b 5900 */
};

/* malloc in libc.so */
static const uint8_t a64_musl_malloc[] = {
    0x0c, 0x06, 0x00, 0x14, /* +0: b 28ed0 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* free in libc.so */
static const uint8_t a64_musl_free[] = {
    0x90, 0x02, 0x00, 0x14, /* +0: b 27fc0 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* calloc in libc.so */
static const uint8_t a64_musl_calloc[] = {
    0xfd, 0x7b, 0xbd, 0xa9, /* +0: stp x29, x30, [sp, #-48]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
};

/* realloc in libc.so */
static const uint8_t a64_musl_realloc[] = {
    0xe8, 0xfe, 0xff, 0x17, /* +0: b 29620 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* posix_memalign in libc.so */
static const uint8_t a64_musl_posix_memalign[] = {
    0xe3, 0x03, 0x01, 0xaa, /* +0: mov x3, x1 */
    0x3f, 0x1c, 0x00, 0xf1, /* +4: cmp x1, #0x7 */
    0xe9, 0x01, 0x00, 0x54, /* +8: b.ls 29a64 */
    0xfd, 0x7b, 0xbe, 0xa9, /* +12: stp x29, x30, [sp, #-32]! */
};

/* memalign in libc.so */
static const uint8_t a64_musl_memalign[] = {
    0x1c, 0xab, 0xff, 0x17, /* +0: b 14680 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* aligned_alloc in libc.so */
static const uint8_t a64_musl_aligned_alloc[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0xe2, 0x03, 0x00, 0xcb, /* +4: neg x2, x0 */
};

/* valloc in libc.so */
static const uint8_t a64_musl_valloc[] = {
    0xe2, 0x04, 0x00, 0xd0, /* +0: adrp x2, bd000 */
    0xe1, 0x03, 0x00, 0xaa, /* +4: mov x1, x0 */
};

/* munmap in libc.so */
static const uint8_t a64_musl_munmap[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0xfd, 0x03, 0x00, 0x91, /* +4: mov x29, sp */
    0xf3, 0x53, 0x01, 0xa9, /* +8: stp x19, x20, [sp, #16] */
    0xf4, 0x03, 0x00, 0xaa, /* +12: mov x20, x0 */
    0xf3, 0x03, 0x01, 0xaa, /* +16: mov x19, x1 */
    0xa7, 0xb0, 0x00, 0x94, /* +20: bl 6cad0 */
    0xe0, 0x03, 0x14, 0xaa, /* +24: mov x0, x20 */
};

/* _Znwm in libstdc++.so.6 */
static const uint8_t a64_libstdcxx_new[] = {
    0xfd, 0x7b, 0xbe, 0xa9, /* +0: stp x29, x30, [sp, #-32]! */
    0x1f, 0x00, 0x00, 0xf1, /* +4: cmp x0, #0x0 */
};

/* _ZdlPv in libstdc++.so.6 */
static const uint8_t a64_libstdcxx_delete[] = {
    0x64, 0xf1, 0xff, 0x17, /* +0: b 9d230 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

/* _ZdlPvm in libstdc++.so.6 */
static const uint8_t a64_libstdcxx_delete_sized[] = {
    0x10, 0xe7, 0xff, 0x17, /* +0: b 9a8f0 */
    0x1f, 0x20, 0x03, 0xd5, /* +4: nop */
};

#endif
