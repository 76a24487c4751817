// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * twins: one malloc call site reached with the same stack pointer from
 * different callers. alloctrace remembers each thread's stack walks by
 * where they start (instruction, stack and frame pointer); here only the
 * return addresses further up tell the callers apart, so a remembered walk
 * that did not check them would give blocks to the wrong caller; in the
 * far group they are past a frame bigger than the walk's first window on
 * the stack. The exact counts are in test_recall.sh. Built twice: with
 * frame pointers at -O0 (twins) and without at -O2 (twins-nofp).
 *
 * Exits 3 if two calls of a group did not run grab() at the same stack
 * address: then the program does not test what it means to.
 */
#include <stdint.h>
#include <stdlib.h>

#define KEEP_MAX 512
#include "workload.h"

enum group { SHALLOW, DEEP, FAR, NR_GROUPS };

static uintptr_t grab_frame[NR_GROUPS];
static volatile int sink;

NOINLINE void *grab(size_t size, enum group g)
{
	volatile char here = 0;
	void *p = malloc(size); /* LINE:grab */

	if (!grab_frame[g])
		grab_frame[g] = (uintptr_t)&here;
	else if (grab_frame[g] != (uintptr_t)&here)
		exit(3);
	keep(p);
	return p;
}

/* Twins: the same frame, so grab() runs at the same stack address under either. */
NOINLINE void via_left(void)
{
	grab(48, SHALLOW);
	sink++;
}

NOINLINE void via_right(void)
{
	grab(80, SHALLOW);
	sink++;
}

/* A shared middle frame: the callers differ two frames up from malloc's. */
NOINLINE void middle(size_t size)
{
	grab(size, DEEP);
	sink++;
}

NOINLINE void deep_left(void)
{
	middle(24);
	sink++;
}

NOINLINE void deep_right(void)
{
	middle(56);
	sink++;
}

/* A frame wider than the walk's 4 KiB window: the callers differ beyond it. */
NOINLINE void far_middle(size_t size)
{
	volatile char pad[6000];

	pad[0] = (char)size;
	grab(size, FAR);
	sink += pad[0];
}

NOINLINE void far_left(void)
{
	far_middle(32);
	sink++;
}

NOINLINE void far_right(void)
{
	far_middle(72);
	sink++;
}

/* One call site for every path, so that each starts from the same stack pointer. */
NOINLINE void run(void (*path)(void), int n)
{
	for (int i = 0; i < n; i++)
		path();
	sink++;
}

int main(void)
{
	/* Runs of one caller, where a remembered walk holds... */
	run(via_left, 100);
	/* ...and must not hold for the twin at the same place. */
	run(via_right, 60);
	for (int i = 0; i < 20; i++) {
		run(via_left, 1);
		run(via_right, 1);
	}
	run(deep_left, 50);
	run(deep_right, 30);
	for (int i = 0; i < 10; i++) {
		run(deep_left, 1);
		run(deep_right, 1);
	}
	run(far_left, 40);
	run(far_right, 20);
	for (int i = 0; i < 10; i++) {
		run(far_left, 1);
		run(far_right, 1);
	}
	return 0;
}
