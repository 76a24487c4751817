// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hog: grows by 1 MiB blocks, each touched so it is resident, until the
 * kernel's OOM killer ends it (the test runs it in a small memory cgroup).
 * Gives up after 4 GiB so that it can never take a machine down alone.
 */
#include <string.h>
#include "workload.h"

#define BLOCK (1 << 20)

NOINLINE void *grow_until_killed(void)
{
	char *p = malloc(BLOCK);

	if (p)
		memset(p, 1, BLOCK);
	return p;
}

int main(void)
{
	static void *blocks[4096];

	for (int i = 0; i < 4096; i++) {
		blocks[i] = grow_until_killed();
		if (!blocks[i])
			return 2;
	}
	return 1;
}
