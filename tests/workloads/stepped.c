// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Calls of a function whose probe the kernel single-steps (issue 43):
 * glibc's reallocarray, on both x86-64 and arm64. argv[1] pairs of
 * reallocarray(NULL, 4, 16) and free (default 20,000), then argv[2]
 * seconds asleep (default 0), so that a report sees the calls counted.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include "workload.h"

NOINLINE void grow_array(void)
{
	free(reallocarray(NULL, 4, 16));
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000;

	for (long i = 0; i < calls; i++)
		grow_array();
	sleep(argc > 2 ? atoi(argv[2]) : 0);
	return 0;
}
