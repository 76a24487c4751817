// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * leaks: exact leaks for the integration tests. Every leak site is a named
 * function whose outstanding bytes and counts the tests know in advance
 * (see test_leaks.sh); churn and the realloc edge cases check what must
 * NOT be reported.
 *
 * Usage: leaks [EXIT_STATUS [SECONDS]]: SECONDS asleep before exiting, the
 * leaks held, for the tests that read them from a live process.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "workload.h"

/* 100 x 24 = 2400 bytes. */
NOINLINE void leak_small(void)
{
	for (int i = 0; i < 100; i++)
		keep(malloc(24)); /* LINE:leak_small */
}

/* 7 x calloc(64, 64) = 28672 bytes: calloc counts nmemb * size. */
NOINLINE void leak_medium(void)
{
	for (int i = 0; i < 7; i++)
		keep(calloc(64, 64));
}

/*
 * 5 blocks grown 16 -> 64 -> 256 -> 1000: only the last realloc's call
 * site holds memory, 5 x 1000 = 5000 bytes.
 */
NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 5; i++) {
		char *p = malloc(16);

		p = realloc(p, 64);
		p = realloc(p, 256);
		p = realloc(p, 1000);
		keep(p);
	}
}

/* 3 x 100 = 300 bytes. */
NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 3; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 64, 100))
			abort();
		keep(p);
	}
}

/* 4 x 128 = 512 bytes (glibc may report it as memalign: same function). */
NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 4; i++)
		keep(aligned_alloc(64, 128));
}

/* 5 x 200 = 1000 bytes. */
NOINLINE void leak_memalign(void)
{
	for (int i = 0; i < 5; i++)
		keep(memalign(32, 200));
}

/* 2 x 300 = 600 bytes: the size asked for, not the page it gets. */
NOINLINE void leak_valloc(void)
{
	for (int i = 0; i < 2; i++)
		keep(valloc(300));
}

/* 2 x 5000 = 10000 bytes, again not rounded to pages. */
NOINLINE void leak_pvalloc(void)
{
	for (int i = 0; i < 2; i++)
		keep(pvalloc(5000));
}

NOINLINE void leak_memalign_family(void)
{
	leak_posix_memalign();
	leak_aligned_alloc();
	leak_memalign();
	leak_valloc();
	leak_pvalloc();
}

/*
 * 6 blocks of reallocarray(NULL, 10, 12) grown to (20, 12): only the
 * second call site holds memory, 6 x 240 = 1440 bytes.
 */
NOINLINE void leak_reallocarray(void)
{
	for (int i = 0; i < 6; i++) {
		char *p = reallocarray(NULL, 10, 12);

		p = reallocarray(p, 20, 12);
		keep(p);
	}
}

/*
 * Edge cases; what stays outstanding here is 333 + 555 + 666 = 1554 bytes
 * in 3 blocks. volatile keeps the compiler from seeing the sizes.
 */
NOINLINE void realloc_edges(void)
{
	volatile size_t huge = SIZE_MAX / 2, zero = 0, big_n = SIZE_MAX / 8;
	char *p, *q;

	/* realloc(NULL, n) is an allocation: leaked, 333 bytes. */
	keep(realloc(NULL, 333));

	/* realloc(p, 0) releases p (glibc frees it and returns NULL). */
	p = malloc(444);
	q = realloc(p, zero);
	free(q);

	/* A failing realloc leaves p outstanding at its old size: 555. */
	p = malloc(555);
	if (realloc(p, huge))
		abort();
	keep(p);

	/* An overflowing reallocarray fails and leaves p alone: 666. */
	p = malloc(666);
	if (reallocarray(p, big_n, 16))
		abort();
	keep(p);

	/* Neither of these records anything. */
	free(NULL);
	if (calloc(huge, 4))
		abort();
}

int main(int argc, char **argv)
{
	leak_small();
	leak_medium();
	leak_realloc();
	leak_memalign_family();
	leak_reallocarray();
	churn();
	realloc_edges();
	if (argc > 2)
		sleep(atoi(argv[2]));
	return argc > 1 ? atoi(argv[1]) : 0;
}
