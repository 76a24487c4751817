// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocations in a signal handler (issue 23, item 4): a timer's SIGALRM
 * interrupts spin(), whose handler allocates 3 x 4,321 bytes and keeps
 * them. The handler's stacks go on_signal <- __restore_rt (the kernel's
 * signal frame) <- spin <- main. Built without frame pointers: only the
 * signal frame's saved registers lead past the trampoline.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#define ROUNDS 3

static void *volatile kept[ROUNDS];
static volatile sig_atomic_t rounds;

static void on_signal(int sig)
{
	/* The timer may fire once more before main() ignores it. */
	if (rounds < ROUNDS)
		kept[rounds++] = malloc(4321);
}

/* Interrupted here, in user code, by every SIGALRM. */
static __attribute__((noinline)) int spin(void)
{
	unsigned long n = 0;

	while (rounds < ROUNDS)
		n++;
	return n != 0;
}

int main(void)
{
	/* Long before the first SIGALRM spin() runs, however slow the machine. */
	struct itimerval every = {.it_value = {0, 200 * 1000}, .it_interval = {0, 20 * 1000}};
	struct sigaction sa = {.sa_handler = on_signal};

	sigaction(SIGALRM, &sa, NULL);
	if (setitimer(ITIMER_REAL, &every, NULL)) {
		perror("sigalloc: setitimer");
		return 1;
	}
	if (!spin())
		return 1;
	signal(SIGALRM, SIG_IGN);
	return 0;
}
