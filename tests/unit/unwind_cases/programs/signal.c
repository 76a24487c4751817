// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An allocation in a signal handler: the walk meets the kernel's signal frame. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile kept;

static void on_signal(int sig)
{
	kept = malloc(64 + sig);
}

int main(void)
{
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	printf("%p\n", kept);
	return 0;
}
