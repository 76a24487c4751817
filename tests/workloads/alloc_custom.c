// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_custom: an executable that is its own allocator. It defines and
 * exports malloc, free, calloc and realloc (a free-list allocator on a
 * static arena), so symbol lookup, which starts at the executable, finds
 * them there: libc's own calls to malloc (strdup here) land in them too.
 *
 *   leak_malloc     20 x malloc(200)                        = 4000 bytes
 *   leak_calloc      3 x calloc(7, 100)                     = 2100
 *   leak_realloc     4 x 50 -> 300 -> 900 (realloc)         = 3600
 *   leak_strdup      2 x strdup of 11 characters, by libc   =   24
 *   churn           10,000 malloc/free pairs                =    0
 *
 * In all 9,724 bytes in 29 blocks; 10,037 allocation calls (realloc
 * included), 10,008 releases. Nothing else allocates: no stdio, no
 * threads, no dlopen (glibc would then also want memalign and friends,
 * which this allocator leaves out).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

/*
 * The allocator: power-of-two size classes of 32 bytes to 8 MiB, a
 * 16-byte header holding the class, a free list per class, carved from a
 * 32 MiB arena. Single-threaded, like the program. The exported entry
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

void *malloc(size_t n)
{
	return arena_alloc(n);
}

void free(void *p)
{
	if (p)
		arena_free(p);
}

void *calloc(size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	p = arena_alloc(nmemb * size);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

void *realloc(void *p, size_t n)
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

NOINLINE void leak_malloc(void)
{
	for (int i = 0; i < 20; i++)
		keep(malloc(200));
}

NOINLINE void leak_calloc(void)
{
	for (int i = 0; i < 3; i++)
		keep(calloc(7, 100));
}

/* Only the last realloc's call site holds the blocks. */
NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = malloc(50);

		p = realloc(p, 300);
		p = realloc(p, 900);
		keep(p);
	}
}

/*
 * libc's strdup calls malloc, which is this executable's. strdup has no
 * frame pointer, so the walk from malloc skips its caller (dup_string):
 * the tests look for leak_strdup anywhere in the stack.
 */
NOINLINE static char *dup_string(const char *s)
{
	return strdup(s);
}

NOINLINE void leak_strdup(void)
{
	for (int i = 0; i < 2; i++)
		keep(dup_string("eleven char"));
}

NOINLINE void churn(void)
{
	void *window[8] = {NULL};

	for (int i = 0; i < 10000; i++) {
		int slot = i % 8;

		free(window[slot]);
		window[slot] = malloc((size_t)(i * 37) % 4000 + 1);
	}
	for (int i = 0; i < 8; i++)
		free(window[i]);
}

int main(void)
{
	leak_malloc();
	leak_calloc();
	leak_realloc();
	leak_strdup();
	churn();
	return 0;
}
