// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * depth: N malloc(64)/free pairs made D calls deep, for the cost of
 * walking one more frame: the same loop at two depths, the difference in
 * BPF time over the difference in frames.
 *
 *   depth D N [alternate]
 *
 * The malloc call site is reached through one of two twin functions with
 * equal frames: always the first, where alloctrace's remembered walk
 * answers after the first call, or with "alternate" each in turn, which
 * starts every walk at the same place with a different caller, so that
 * each call is checked against the memo and then walked.
 *
 * Built twice (see bench.mk): without frame pointers for the CFI walk,
 * with them for the kernel's frame-pointer walk.
 */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

/* Keeps the compiler from pairing malloc with free and dropping both. */
static void *volatile sink;

NOINLINE void alloc_free(void)
{
	void *p = malloc(64);

	sink = p;
	free(p);
}

/* The twins: the same frame and call, so only their return addresses differ. */
NOINLINE void twin_a(void)
{
	alloc_free();
	asm volatile("" : : : "memory");
}

NOINLINE void twin_b(void)
{
	alloc_free();
	asm volatile("" : : : "memory");
}

NOINLINE long descend(int d, long n, int alternate)
{
	long r = n;

	if (d > 1) {
		r = descend(d - 1, n, alternate);
		/* Not a tail call: each level keeps its frame. */
		asm volatile("" : : : "memory");
		return r;
	}
	for (long i = 0; i < n; i++) {
		void (*twin)(void) = alternate && (i & 1) ? twin_b : twin_a;

		twin();
	}
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	return descend(atoi(argv[1]), atol(argv[2]), argc == 4 && !strcmp(argv[3], "alternate")) < 0;
}
