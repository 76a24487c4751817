// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_musl: exact leaks under musl's malloc (mallocng). Built twice with
 * musl-gcc: alloc_musl, dynamic, whose allocator is musl's libc.so (also
 * its dynamic loader, /lib/ld-musl-*.so.1), and alloc_musl_static, with
 * -static, whose allocator is in the executable itself. musl's calloc
 * calls malloc, and posix_memalign calls aligned_alloc: allocator
 * functions calling each other, to be counted once, as the outer call.
 *
 *   leak_malloc           60 x malloc(40)                     =  2400 bytes
 *   leak_calloc            5 x calloc(20, 30)                 =  3000
 *   leak_realloc           4 x 24 -> 200 -> 2500 (realloc)    = 10000
 *   leak_posix_memalign    3 x posix_memalign(64, 300)        =   900
 *   leak_aligned_alloc     2 x aligned_alloc(512, 700)        =  1400
 *   churn                 10,000 malloc/free pairs            =     0
 *
 * In all 17,700 bytes in 74 blocks; 10,082 allocation calls (realloc
 * included), 10,008 releases. Nothing else allocates: no stdio.
 */
#include <stdlib.h>
#include "workload.h"

/* Only the last realloc's call site holds the blocks. */
NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = malloc(24);

		p = realloc(p, 200);
		p = realloc(p, 2500);
		keep(p);
	}
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 64, 300))
			abort();
		keep(p);
	}
}

NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 2; i++)
		keep(aligned_alloc(512, 700));
}

int main(void)
{
	leak_malloc(60, 40);
	leak_calloc(5, 20, 30);
	leak_realloc();
	leak_posix_memalign();
	leak_aligned_alloc();
	churn();
	return 0;
}
