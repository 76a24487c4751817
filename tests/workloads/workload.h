/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the C workloads share: leak sites whose counts and sizes each
 * program states where it calls them, and the churn that must leave
 * nothing behind. Included once per program, after any allocator of its
 * own. Every leaked block stays reachable so nothing is optimized away.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

#ifndef KEEP_MAX
#define KEEP_MAX 256
#endif

static void *kept[KEEP_MAX];
static size_t nkept;

/* Failed allocations abort: NULL, and MAP_FAILED for the mmap workload. */
static void keep(void *p)
{
	if (!p || p == (void *)-1 || nkept >= KEEP_MAX)
		abort();
	kept[nkept++] = p;
}

/* @n blocks of @size bytes. */
NOINLINE void leak_malloc(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		keep(malloc(size));
}

/* @n blocks of calloc(@nmemb, @size): nmemb * size bytes each. */
NOINLINE void leak_calloc(int n, size_t nmemb, size_t size)
{
	for (int i = 0; i < n; i++)
		keep(calloc(nmemb, size));
}

/* 10,000 malloc/free pairs of varied sizes, a few live at a time: 0 left. */
NOINLINE void churn(void)
{
	void *window[8] = { NULL };

	for (int i = 0; i < 10000; i++) {
		int slot = i % 8;

		free(window[slot]);
		window[slot] = malloc((size_t)(i * 37) % 4000 + 1);
	}
	for (int i = 0; i < 8; i++)
		free(window[i]);
}

#endif
