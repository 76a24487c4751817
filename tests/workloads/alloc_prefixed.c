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

void *pfx_malloc(size_t n);
void pfx_free(void *p);
void *pfx_calloc(size_t nmemb, size_t size);
void *pfx_realloc(void *p, size_t n);

/*
 * The allocator: power-of-two size classes of 32 bytes to 8 MiB, a
 * 16-byte header holding the class, a free list per class, carved from a
 * 32 MiB arena. Single-threaded, like the program. The pfx_ entry
 * points call the static helpers, never each other, so each call of the
 * program is one call of the allocator.
 */
#define ARENA_SIZE (32u << 20)
#define MIN_SHIFT  5
#define NR_CLASSES 19
#define HEADER	   16

struct block {
	struct block *next; /* while free */
};

static _Alignas(16) unsigned char arena[ARENA_SIZE];
static size_t arena_used;
static struct block *free_lists[NR_CLASSES];

static int size_class(size_t n)
{
	int c = 0;

	if (n > (SIZE_MAX >> 1))
		return -1;
	while (((size_t)1 << (c + MIN_SHIFT)) < n + HEADER)
		c++;
	return c < NR_CLASSES ? c : -1;
}

static void *arena_alloc(size_t n)
{
	int c = size_class(n);
	unsigned char *h;

	if (c < 0)
		return NULL;
	if (free_lists[c]) {
		h = (unsigned char *)free_lists[c];
		free_lists[c] = free_lists[c]->next;
	} else {
		size_t size = (size_t)1 << (c + MIN_SHIFT);

		if (size > ARENA_SIZE - arena_used)
			return NULL;
		h = arena + arena_used;
		arena_used += size;
	}
	*(int *)h = c;
	return h + HEADER;
}

static void arena_free(void *p)
{
	unsigned char *h = (unsigned char *)p - HEADER;
	int c = *(int *)h;
	struct block *b = (struct block *)h;

	b->next = free_lists[c];
	free_lists[c] = b;
}

void *pfx_malloc(size_t n)
{
	return arena_alloc(n);
}

void pfx_free(void *p)
{
	if (p)
		arena_free(p);
}

void *pfx_calloc(size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	p = arena_alloc(nmemb * size);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

void *pfx_realloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (!p)
		return arena_alloc(n);
	if (!n) {
		arena_free(p);
		return NULL;
	}
	q = arena_alloc(n);
	if (!q)
		return NULL;
	old = ((size_t)1 << (*(int *)((unsigned char *)p - HEADER) + MIN_SHIFT)) - HEADER;
	memcpy(q, p, old < n ? old : n);
	arena_free(p);
	return q;
}

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
