/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small allocator for the workloads that bring their own: include it
 * once, with ARENA_PREFIX defined to the prefix of its entry points (empty
 * to define malloc, free, calloc and realloc themselves).
 */
#ifndef ARENA_ALLOC_H
#define ARENA_ALLOC_H

#include <stdint.h>
#include <string.h>

#define ARENA_CAT2(a, b) a##b
#define ARENA_CAT(a, b) ARENA_CAT2(a, b)
#define ARENA_FN(name) ARENA_CAT(ARENA_PREFIX, name)

void *ARENA_FN(malloc)(size_t n);
void ARENA_FN(free)(void *p);
void *ARENA_FN(calloc)(size_t nmemb, size_t size);
void *ARENA_FN(realloc)(void *p, size_t n);

/*
 * The allocator: power-of-two size classes of 32 bytes to 8 MiB, a
 * 16-byte header holding the class, a free list per class, carved from a
 * 32 MiB arena. Single-threaded, like the program. The entry points
 * (malloc, free, calloc, realloc, under ARENA_PREFIX) call the static
 * helpers, never each other, so each call of the program is one call of
 * the allocator.
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

void *ARENA_FN(malloc)(size_t n)
{
	return arena_alloc(n);
}

void ARENA_FN(free)(void *p)
{
	if (p)
		arena_free(p);
}

void *ARENA_FN(calloc)(size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	p = arena_alloc(nmemb * size);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

void *ARENA_FN(realloc)(void *p, size_t n)
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

#endif
