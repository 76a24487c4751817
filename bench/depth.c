// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * depth: N malloc(64)/free pairs made D calls deep, for the cost of
 * walking one more frame: the same loop at two depths, the difference in
 * BPF time over the difference in frames.
 *
 *   depth D N
 *
 * Built twice (see bench.mk): without frame pointers for the CFI walk,
 * with them for the kernel's frame-pointer walk.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

/* Keeps the compiler from pairing malloc with free and dropping both. */
static void *volatile sink;

NOINLINE long descend(int d, long n)
{
	long r = n;

	if (d > 1) {
		r = descend(d - 1, n);
		/* Not a tail call: each level keeps its frame. */
		asm volatile("" : : : "memory");
		return r;
	}
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);

		sink = p;
		free(p);
	}
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	return descend(atoi(argv[1]), atol(argv[2])) < 0;
}
