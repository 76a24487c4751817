// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bigallocs: big allocations among many small ones, each in its own named
 * function, straddling the thresholds the tests use:
 *
 *   function                 call            size       >=1M >=2M >=8M
 *   big_malloc_1m_minus_1    malloc          1048575
 *   big_malloc_1m            malloc          1048576     x
 *   big_calloc_2m            calloc          2097152     x    x
 *   big_memalign_3m          memalign        3145728     x    x
 *   big_aligned_alloc_4m     aligned_alloc   4194304     x    x
 *   big_valloc_5m            valloc          5242880     x    x
 *   big_pvalloc_6m           pvalloc         6291456     x    x
 *   big_reallocarray_7m      reallocarray    7340032     x    x
 *   big_malloc_8m_minus_1    malloc          8388607     x    x
 *   big_malloc_8m            malloc          8388608     x    x    x
 *   big_realloc_9m           realloc         9437184     x    x    x
 *   big_posix_memalign_16m   posix_memalign  16777216    x    x    x
 *
 * big_realloc_9m grows a 4096-byte block of its own. Every block is kept.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define MiB	 (1024 * 1024)

static void *kept[128];
static size_t nkept;

static void keep(void *p)
{
	if (!p || nkept >= sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[nkept++] = p;
}

/* Small traffic between the big ones: 500 allocations, 5 of them kept. */
NOINLINE void small_allocs(void)
{
	for (int i = 0; i < 500; i++) {
		void *p = malloc((size_t)(i * 131) % 65536 + 1);

		if (i % 100 == 0)
			keep(p);
		else
			free(p);
	}
}

NOINLINE void big_malloc_1m_minus_1(void)
{
	keep(malloc(MiB - 1));
}

NOINLINE void big_malloc_1m(void)
{
	keep(malloc(MiB));
}

NOINLINE void big_calloc_2m(void)
{
	keep(calloc(2, MiB));
}

NOINLINE void big_memalign_3m(void)
{
	keep(memalign(4096, 3 * MiB));
}

NOINLINE void big_aligned_alloc_4m(void)
{
	keep(aligned_alloc(4096, 4 * MiB));
}

NOINLINE void big_valloc_5m(void)
{
	keep(valloc(5 * MiB));
}

NOINLINE void big_pvalloc_6m(void)
{
	keep(pvalloc(6 * MiB));
}

NOINLINE void big_reallocarray_7m(void)
{
	keep(reallocarray(NULL, 7, MiB));
}

NOINLINE void big_malloc_8m_minus_1(void)
{
	keep(malloc(8 * MiB - 1));
}

NOINLINE void big_malloc_8m(void)
{
	keep(malloc(8 * MiB));
}

NOINLINE void big_realloc_9m(void)
{
	void *p = malloc(4096);

	keep(realloc(p, 9 * MiB));
}

NOINLINE void big_posix_memalign_16m(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, 16 * MiB))
		abort();
	keep(p);
}

int main(void)
{
	void (*const steps[])(void) = {
	    big_malloc_1m_minus_1, big_malloc_1m, big_calloc_2m,  big_memalign_3m,
	    big_aligned_alloc_4m,  big_valloc_5m, big_pvalloc_6m, big_reallocarray_7m,
	    big_malloc_8m_minus_1, big_malloc_8m, big_realloc_9m, big_posix_memalign_16m,
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		small_allocs();
		steps[i]();
	}
	small_allocs();
	return 0;
}
