// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * target: a long-running process for attaching with -p.
 *
 * At startup it allocates 12 x 40 bytes (pre_attach_alloc), creates
 * DIR/ready and waits for SIGUSR1. On the signal it leaks 9 x 1000 bytes
 * (target_leak), makes 5 malloc(200)/free pairs (target_churn), frees the
 * 12 startup blocks (free_pre_attach), creates DIR/done and waits to be
 * killed; a second SIGUSR1 makes it exit 0. A tracer attached between
 * ready and the signal therefore sees exactly: 14 allocs, 5 frees,
 * 12 untracked frees, 9000 bytes in 9 blocks.
 * Nothing else allocates after startup: no stdio, only raw syscalls.
 *
 * It exits by itself (status 3) after LIFETIME seconds (default 60) so
 * that a broken test cannot leave it behind for long.
 *
 * Usage: target DIR [LIFETIME]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>
#include "handshake.h"

#define NOINLINE __attribute__((noinline))

#define PRE_ATTACH_BLOCKS 12
#define LEAK_BLOCKS	  9
#define CHURN_PAIRS	  5

static void *pre_attach[PRE_ATTACH_BLOCKS];
static void *leaked[LEAK_BLOCKS];

NOINLINE void pre_attach_alloc(void)
{
	for (int i = 0; i < PRE_ATTACH_BLOCKS; i++)
		pre_attach[i] = malloc(40);
}

NOINLINE void target_leak(void)
{
	for (int i = 0; i < LEAK_BLOCKS; i++)
		leaked[i] = malloc(1000);
}

NOINLINE void target_churn(void)
{
	for (int i = 0; i < CHURN_PAIRS; i++)
		free(malloc(200));
}

NOINLINE void free_pre_attach(void)
{
	for (int i = 0; i < PRE_ATTACH_BLOCKS; i++)
		free(pre_attach[i]);
}

int main(int argc, char **argv)
{
	time_t deadline;

	if (argc < 2)
		return 2;
	deadline = time(NULL) + (argc > 2 ? atoi(argv[2]) : 60);
	block_usr1();

	pre_attach_alloc();
	touch(argv[1], "ready");
	if (wait_usr1(deadline))
		return 3;

	target_leak();
	target_churn();
	free_pre_attach();
	touch(argv[1], "done");

	/* Stay alive for the tracer until killed or told to finish. */
	return wait_usr1(deadline) ? 3 : 0;
}
