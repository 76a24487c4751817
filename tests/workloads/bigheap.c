// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A big live heap that takes the leak check seconds to scan, in a process
 * that shows it runs: it reads one byte from stdin (so that a tracer
 * attached by pid sees every block), allocates MB megabytes of 4 KiB
 * blocks held by a global list, prints "ready", then "tick N" every 10 ms
 * for SECONDS and exits 0. Usage: bigheap MB SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096

static void **kept;

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[1]) * (1 << 20) / BLOCK : 0, ticks, i;
	struct timespec tick = {0, 10 * 1000 * 1000};
	char c;
	void **b;

	if (n <= 0) {
		fprintf(stderr, "usage: bigheap MB SECONDS\n");
		return 2;
	}
	ticks = atol(argv[2]) * 100;
	if (read(0, &c, 1) != 1)
		return 1;
	for (i = 0; i < n; i++) {
		b = malloc(BLOCK);
		if (!b)
			return 1;
		b[0] = kept;
		kept = b;
	}
	printf("ready\n");
	for (i = 0; i < ticks; i++) {
		printf("tick %ld\n", i);
		fflush(stdout);
		nanosleep(&tick, NULL);
	}
	return kept == NULL;
}
