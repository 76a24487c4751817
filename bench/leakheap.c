// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A live heap of MB megabytes for the leak-check engine's pause and scan
 * times: 4 KiB blocks, every word a small integer but the first, which
 * links the blocks into two lists, one held by a global (reachable) and
 * one dropped (one block definitely lost, the rest indirectly). Prints
 * its blocks as tests/drivers/leakscan reads them, then waits for stdin
 * to close. Usage: leakheap MB
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCK 4096

static void **kept;

/* Out of line, so that no register or live stack slot of main keeps a dropped list. */
static __attribute__((noinline)) void build(long n)
{
	void **lists[2] = {}, **b;
	long i, w;

	for (i = 0; i < n; i++) {
		b = malloc(BLOCK);
		for (w = 1; w < BLOCK / 8; w++)
			b[w] = (void *)(uintptr_t)(w * i);
		b[0] = lists[i & 1];
		lists[i & 1] = b;
		printf("block %p %d heap\n", (void *)b, BLOCK);
	}
	kept = lists[0];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) * (1 << 20) / BLOCK : 0;
	char c;

	if (n <= 0) {
		fprintf(stderr, "usage: leakheap MB\n");
		return 2;
	}
	build(n);
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return kept == NULL;
}
