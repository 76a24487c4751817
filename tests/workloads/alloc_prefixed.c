// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_prefixed: an executable with an allocator of its own under other
 * names, pfx_malloc, pfx_free, pfx_calloc and pfx_realloc (a free-list
 * allocator on a static arena), beside libc's malloc, which it also uses.
 * Symbol lookup finds libc's malloc; `--allocator EXE:pfx_` makes the
 * pfx_ functions the ones traced, and then libc's calls are not.
 *
 * Through the pfx_ functions:
 *   pfx_leak_malloc     15 x pfx_malloc(64)                     =  960 bytes
 *   pfx_leak_calloc      2 x pfx_calloc(10, 30)                 =  600
 *   pfx_leak_realloc     3 x pfx_malloc(8) -> pfx_realloc 500   = 1500
 *   pfx_churn           10,000 pfx_malloc/pfx_free pairs        =    0
 *   (3,060 bytes in 20 blocks; 10,023 allocation calls, 10,003 releases)
 * Through libc:
 *   libc_leak            5 x malloc(123)                        =  615
 *   libc_churn         100 malloc/free pairs                    =    0
 *   (615 bytes in 5 blocks; 105 allocation calls, 100 releases)
 *
 * Nothing else allocates: no stdio.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

#define ARENA_PREFIX pfx_
#include "arena_alloc.h"

/* The program. */

static void *kept[64];
static size_t nkept;

static void keep(void *p)
{
	if (!p || nkept >= sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[nkept++] = p;
}

NOINLINE void pfx_leak_malloc(void)
{
	for (int i = 0; i < 15; i++)
		keep(pfx_malloc(64));
}

NOINLINE void pfx_leak_calloc(void)
{
	for (int i = 0; i < 2; i++)
		keep(pfx_calloc(10, 30));
}

/* Only the pfx_realloc call site holds the blocks. */
NOINLINE void pfx_leak_realloc(void)
{
	for (int i = 0; i < 3; i++) {
		char *p = pfx_malloc(8);

		keep(pfx_realloc(p, 500));
	}
}

NOINLINE void pfx_churn(void)
{
	void *window[8] = {NULL};

	for (int i = 0; i < 10000; i++) {
		int slot = i % 8;

		pfx_free(window[slot]);
		window[slot] = pfx_malloc((size_t)(i * 37) % 4000 + 1);
	}
	for (int i = 0; i < 8; i++)
		pfx_free(window[i]);
}

NOINLINE void libc_leak(void)
{
	for (int i = 0; i < 5; i++)
		keep(malloc(123));
}

NOINLINE void libc_churn(void)
{
	for (int i = 0; i < 100; i++)
		free(malloc((size_t)i + 1));
}

int main(void)
{
	pfx_leak_malloc();
	pfx_leak_calloc();
	pfx_leak_realloc();
	pfx_churn();
	libc_leak();
	libc_churn();
	return 0;
}
