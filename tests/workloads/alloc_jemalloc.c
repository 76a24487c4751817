// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_jemalloc: exact leaks in a program linked with -ljemalloc, through
 * the standard entry points and jemalloc's own (*allocx). Linked before
 * libc, libjemalloc.so.2 is the object that provides malloc.
 *
 *   leak_malloc           50 x malloc(48)                          =  2400 bytes
 *   leak_calloc            6 x calloc(32, 16)                      =  3072
 *   leak_realloc           4 x 16 -> 128 -> 700 (realloc)          =  2800
 *   leak_posix_memalign    3 x posix_memalign(64, 200)             =   600
 *   leak_mallocx           6 x mallocx(1000) (3 aligned + zeroed)  =  6000
 *   leak_rallocx           4 x mallocx(100) -> rallocx 300 -> 2000 =  8000
 *   mallocx_dallocx       10 x mallocx(512); 4 dallocx, 3 sdallocx,
 *                          1 free: 2 left                          =  1024
 *   malloc_dallocx         5 x malloc(256); 2 dallocx, 1 sdallocx:
 *                          2 left                                  =   512
 *   churn                 10,000 malloc/free pairs                 =     0
 *   churn_x                1,000 mallocx/sdallocx pairs            =     0
 *   big_mallocx            1 x mallocx(1 MiB)                      = 1048576
 *   big_rallocx            1 x mallocx(4096) -> rallocx(2 MiB)     = 2097152
 *
 * The big ones are the only allocations of 1 MiB or more (for --big 1M).
 * This file's functions hold 3,170,136 bytes in 79 blocks; they make
 * 50 + 6 + 12 + 3 + 6 + 12 + 10 + 5 + 10,000 + 1,000 + 1 + 2 = 11,107
 * allocation calls and 8 (realloc) + 8 + 1 (rallocx) + 8 + 3 + 10,000 +
 * 1,000 = 11,028 releases. The process holds more: libjemalloc.so.2 needs
 * libstdc++, whose start-up allocates its exception-handling pool.
 */
#include <jemalloc/jemalloc.h>
#include <stdlib.h>
#include "workload.h"

/* Only the last realloc's call site holds the blocks. */
NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = malloc(16);

		p = realloc(p, 128);
		p = realloc(p, 700);
		keep(p);
	}
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 64, 200))
			abort();
		keep(p);
	}
}

/* Flags change alignment and contents, never the size asked for. */
NOINLINE void leak_mallocx(void)
{
	for (int i = 0; i < 3; i++)
		keep(mallocx(1000, 0));
	for (int i = 0; i < 3; i++)
		keep(mallocx(1000, MALLOCX_ALIGN(64) | MALLOCX_ZERO));
}

/* rallocx moves or grows the block: its final size, at its last call site. */
NOINLINE void leak_rallocx(void)
{
	for (int i = 0; i < 4; i++) {
		void *p = mallocx(100, 0);

		if (!p)
			abort();
		p = rallocx(p, 300, 0);
		if (!p)
			abort();
		p = rallocx(p, 2000, 0);
		keep(p);
	}
}

/* jemalloc's releases, and free, of mallocx blocks: 2 x 512 stay. */
NOINLINE void mallocx_dallocx(void)
{
	void *p[10];

	for (int i = 0; i < 10; i++) {
		p[i] = mallocx(512, 0);
		if (!p[i])
			abort();
	}
	for (int i = 0; i < 4; i++)
		dallocx(p[i], 0);
	for (int i = 4; i < 7; i++)
		sdallocx(p[i], 512, 0);
	free(p[7]);
	keep(p[8]);
	keep(p[9]);
}

/* The *allocx releases also take malloc's blocks: 2 x 256 stay. */
NOINLINE void malloc_dallocx(void)
{
	void *p[5];

	for (int i = 0; i < 5; i++) {
		p[i] = malloc(256);
		if (!p[i])
			abort();
	}
	dallocx(p[0], 0);
	dallocx(p[1], 0);
	sdallocx(p[2], 256, 0);
	keep(p[3]);
	keep(p[4]);
}

/* 1,000 mallocx/sdallocx pairs: 0 left. */
NOINLINE void churn_x(void)
{
	for (int i = 0; i < 1000; i++) {
		size_t size = (size_t)(i * 13) % 3000 + 1;
		void *p = mallocx(size, 0);

		if (!p)
			abort();
		sdallocx(p, size, 0);
	}
}

NOINLINE void big_mallocx(void)
{
	keep(mallocx(1 << 20, 0));
}

NOINLINE void big_rallocx(void)
{
	void *p = mallocx(4096, 0);

	if (!p)
		abort();
	keep(rallocx(p, 2 << 20, 0));
}

int main(void)
{
	leak_malloc(50, 48);
	leak_calloc(6, 32, 16);
	leak_realloc();
	leak_posix_memalign();
	leak_mallocx();
	leak_rallocx();
	mallocx_dallocx();
	malloc_dallocx();
	churn();
	churn_x();
	big_mallocx();
	big_rallocx();
	return 0;
}
