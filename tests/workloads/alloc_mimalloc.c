// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_mimalloc: exact leaks in a program linked with -lmimalloc. Debian's
 * libmimalloc.so.2 is built to override malloc (it exports malloc, free,
 * ... as aliases of mi_malloc, mi_free, ...), and linked before libc it is
 * the object that provides them. mimalloc's realloc calls mi_free, which
 * is free: an allocator function calling another, to be counted once.
 *
 *   leak_malloc           40 x malloc(64)                        =  2560 bytes
 *   leak_calloc            3 x calloc(100, 20)                   =  6000
 *   leak_realloc           5 x 32 -> 300 -> 4000 (realloc)       = 20000
 *   leak_posix_memalign    4 x posix_memalign(128, 500)          =  2000
 *   leak_aligned_alloc     2 x aligned_alloc(256, 1024)          =  2048
 *   leak_reallocarray      3 x reallocarray(NULL, 10, 30) -> (20, 30)
 *                                                                =  1800
 *   churn                 10,000 malloc/free pairs               =     0
 *
 * In all 34,408 bytes in 57 blocks; 10,070 allocation calls (realloc and
 * reallocarray included), 10,013 releases. Nothing else allocates: no
 * stdio.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "workload.h"

/* Only the last realloc's call site holds the blocks. */
NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 5; i++) {
		char *p = malloc(32);

		p = realloc(p, 300);
		p = realloc(p, 4000);
		keep(p);
	}
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 4; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 128, 500))
			abort();
		keep(p);
	}
}

NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 2; i++)
		keep(aligned_alloc(256, 1024));
}

NOINLINE void leak_reallocarray(void)
{
	for (int i = 0; i < 3; i++) {
		char *p = reallocarray(NULL, 10, 30);

		keep(reallocarray(p, 20, 30));
	}
}

int main(void)
{
	leak_malloc(40, 64);
	leak_calloc(3, 100, 20);
	leak_realloc();
	leak_posix_memalign();
	leak_aligned_alloc();
	leak_reallocarray();
	churn();
	return 0;
}
