// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spread: a known number of blocks over a known number of distinct stacks,
 * to fill the BPF maps (--max-allocs, --max-stacks) on purpose.
 *
 * Creates DIR/ready and waits for SIGUSR1 (see handshake.h). Then, in
 * order, block i (from 0) of BLOCKS is malloc(100 + i % STACKS) through
 * call path i % STACKS of leak_on_path, and kept; then CHURN
 * malloc(64)/free pairs in churn_pairs. Then DIR/done, and it waits to be
 * killed; a second SIGUSR1 makes it exit 0. Ends itself (status 3) after
 * 120 s.
 *
 * Usage: spread DIR BLOCKS STACKS [CHURN]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "handshake.h"

#define KEEP_MAX (1 << 20)
#include "workload.h"

/*
 * One malloc at the end of LEVELS nested calls, each made from one of two
 * call sites by a bit of PATH: 2^LEVELS paths, as many distinct stacks.
 */
NOINLINE void leak_on_path(unsigned int path, int levels, size_t size)
{
	if (!levels)
		keep(malloc(size));
	else if (path & 1)
		leak_on_path(path >> 1, levels - 1, size);
	else
		leak_on_path(path >> 1, levels - 1, size);
}

NOINLINE void churn_pairs(long n)
{
	for (long i = 0; i < n; i++)
		free(malloc(64));
}

int main(int argc, char **argv)
{
	long blocks, stacks, churn;
	time_t deadline;
	int levels = 0;

	if (argc < 4)
		return 2;
	blocks = atol(argv[2]);
	stacks = atol(argv[3]);
	churn = argc > 4 ? atol(argv[4]) : 0;
	if (blocks < 0 || blocks > KEEP_MAX || stacks < 1 || churn < 0)
		return 2;
	while ((1L << levels) < stacks)
		levels++;
	deadline = time(NULL) + 120;
	block_usr1();
	touch(argv[1], "ready");
	if (wait_usr1(deadline))
		return 3;

	for (long i = 0; i < blocks; i++)
		leak_on_path(i % stacks, levels, 100 + i % stacks);
	churn_pairs(churn);
	touch(argv[1], "done");
	return wait_usr1(deadline) ? 3 : 0;
}
