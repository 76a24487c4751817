// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libctorleak.so, built like a distribution's library (-O2
 * -fomit-frame-pointer -g): its frames are walked by their CFI alone.
 * Its constructor leaks 2 blocks of 333 bytes from ctor_leak, before the
 * program's main runs or, loaded by dlopen, before dlopen returns;
 * lib_alloc_now() leaks 3 blocks of 444 bytes from lib_inner; lib_churn()
 * allocates 64 bytes DEPTH calls deep and frees the block of 16 calls
 * before: 16 blocks, 1,024 bytes, are always outstanding.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *kept[5];
static void *ring[16];
static unsigned int turn;

NOINLINE void ctor_leak(void)
{
	for (int i = 0; i < 2; i++)
		kept[i] = malloc(333);
	asm volatile("" : : "r"(kept) : "memory");
}

/* Not a tail call: the constructor keeps a frame of its own. */
__attribute__((constructor)) static void ctorleak_init(void)
{
	ctor_leak();
	asm volatile("");
}

NOINLINE void lib_inner(void)
{
	for (int i = 2; i < 5; i++)
		kept[i] = malloc(444);
	asm volatile("" : : "r"(kept) : "memory");
}

NOINLINE void lib_alloc_now(void)
{
	lib_inner();
	asm volatile("");
}

/* Recursion the compiler cannot turn into a loop: each level is a frame. */
NOINLINE int lib_churn(int depth)
{
	void *p;
	int r;

	if (depth > 0) {
		r = lib_churn(depth - 1);
		asm volatile("" : "+r"(r));
		return r + 1;
	}
	p = malloc(64);
	free(ring[turn % 16]);
	ring[turn++ % 16] = p;
	return 0;
}
