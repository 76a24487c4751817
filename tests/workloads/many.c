// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * many: 20,000 blocks of 256 bytes kept by hold_many (5,120,000 bytes) and
 * 100,000 malloc/free pairs in churn, for the estimates of --sample; and
 * 10,000 posix_memalign/free pairs at an alignment malloc's own meets,
 * where glibc's posix_memalign calls malloc: 130,000 allocations in all.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define HELD 20000

static void *held[HELD];

NOINLINE void hold_many(void)
{
	for (int i = 0; i < HELD; i++)
		held[i] = malloc(256);
}

NOINLINE void churn(void)
{
	for (int i = 0; i < 100000; i++)
		free(malloc(64 + i % 512));
}

NOINLINE void churn_aligned(void)
{
	void *p;

	for (int i = 0; i < 10000; i++)
		if (!posix_memalign(&p, 16, 64))
			free(p);
}

int main(void)
{
	hold_many();
	churn();
	churn_aligned();
	return held[HELD - 1] ? 0 : 1;
}
