// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/churn SECONDS [KIB_PER_S [BLOCK_KIB]]: a service's allocation
 * pattern with a leak in it, for --growth. It churns malloc/free of small
 * blocks of varied sizes through a table of live ones (millions of pairs a
 * second natively), and leak_growth() keeps KIB_PER_S (default 1024) KiB a
 * second in blocks of BLOCK_KIB (default 64) KiB it fills, paced by the
 * clock. At the end it prints "pairs N seconds S": a tracer's cost is the
 * drop in pairs a second against a native run beside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS	   8192
#define BATCH	   1024 /* pairs between two looks at the clock */

static void *volatile leaked; /* the last leak, so that no block is dropped unused */
static size_t leak_block = 64 << 10;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void leak_growth(void)
{
	char *p = malloc(leak_block);

	if (!p)
		exit(2);
	memset(p, 1, leak_block);
	leaked = p;
}

/* xorshift64: sizes and slots without a libc call between the pairs. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* BATCH malloc/free pairs of 16 to 2 KiB over the table. */
__attribute__((noinline)) static void churn(char **slots, uint64_t *rng)
{
	for (int i = 0; i < BATCH; i++) {
		uint64_t r = next(rng);
		char **slot = &slots[r % SLOTS];

		free(*slot);
		*slot = malloc(16 + (r >> 32) % 2032);
		if (!*slot)
			exit(2);
		**slot = 1;
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, rate = argc > 2 ? atof(argv[2]) : 1024;
	double block_kib = argc > 3 ? atof(argv[3]) : 64;
	static char *slots[SLOTS];
	double start = now(), t = start;
	uint64_t rng = 88172645463325252ULL, pairs = 0, leaks = 0;

	if (secs <= 0 || rate < 0 || block_kib < 1) {
		fprintf(stderr, "usage: churn SECONDS [KIB_PER_S [BLOCK_KIB]]\n");
		return 2;
	}
	leak_block = (size_t)block_kib << 10;
	while (t - start < secs) {
		churn(slots, &rng);
		pairs += BATCH;
		t = now();
		while (leaks * (leak_block >> 10) < (t - start) * rate) {
			leak_growth();
			leaks++;
		}
	}
	printf("pairs %llu seconds %.3f leaked_kib %llu\n", (unsigned long long)pairs, t - start,
	       (unsigned long long)leaks * (leak_block >> 10));
	return 0;
}
