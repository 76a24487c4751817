// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * deepwork: allocations 24 frames deep (deep_0 ... deep_23), built
 * without frame pointers, so that only unwind tables walk them whole.
 * It creates DIR/ready, then:
 *
 *   deepwork DIR busy     mallocs and frees at that depth in a loop
 *                         (deep_churn, nothing left) from the start. At
 *                         SIGUSR1 it leaks 5 x 1000 bytes there
 *                         (deep_leak) once, creates DIR/done and loops
 *                         on until the next SIGUSR1, then exits 0.
 *   deepwork DIR churn N  waits for SIGUSR1, then forks N children one
 *                         after another, PAR at a time (4). Each child
 *                         mallocs and frees 100 blocks at that depth
 *                         (deep_churn), leaks 3 x 700 bytes there
 *                         (deep_leak) and exits 0. The parent allocates
 *                         nothing; once every child is reaped it creates
 *                         DIR/done and exits 0 at the next SIGUSR1.
 *
 * No stdio. SIGALRM ends it LIFETIME seconds after it started (a churn
 * CHURN_LIFETIME: its children take minutes in a TCG guest). A busy one
 * must outlive test_pidlist.sh, which checks that the one it does not
 * name still runs at its end: 150 s in a TCG guest beside another.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "handshake.h"

#define NOINLINE __attribute__((noinline))

#define LIFETIME	600
#define CHURN_LIFETIME	1500
#define DEPTH	 24
#define PAR	 4

/* Not static: the leaks are stores the compiler must keep. */
void *kept[8];
static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

/* What is done at the bottom of the stack. */
enum work { CHURN, LEAK_BUSY, LEAK_CHILD };

NOINLINE void deep_churn(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc((size_t)(i * 37) % 2000 + 1);

		/* An empty asm keeps the pair from being folded away. */
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

NOINLINE void deep_leak(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		kept[i] = malloc(size);
}

/*
 * One frame of the descent: the volatile store after the call keeps it a
 * real call, not a loop.
 */
NOINLINE int deep(int level, enum work w)
{
	volatile int depth = level;

	if (depth < DEPTH - 1) {
		depth = deep(depth + 1, w);
		return depth;
	}
	if (w == CHURN)
		deep_churn(100);
	else
		deep_leak(w == LEAK_BUSY ? 5 : 3, w == LEAK_BUSY ? 1000 : 700);
	return 0;
}

static int busy(const char *dir)
{
	int leaked = 0;

	while (usr1 < 2) {
		if (usr1 && !leaked) {
			deep(0, LEAK_BUSY);
			touch(dir, "done");
			leaked = 1;
		}
		deep(0, CHURN);
	}
	return 0;
}

/* Sleep until SIGUSR1 has come @n times in all; it is blocked outside. */
static void wait_signals(int n)
{
	sigset_t none;

	sigemptyset(&none);
	while (usr1 < n)
		sigsuspend(&none);
}

static int churn(const char *dir, long n)
{
	long started = 0, running = 0;
	pid_t pid;

	block_usr1();
	wait_signals(1);
	while (started < n || running) {
		if (running < PAR && started < n) {
			pid = fork();
			if (pid < 0)
				return 2;
			if (!pid) {
				deep(0, CHURN);
				deep(0, LEAK_CHILD);
				_exit(0);
			}
			started++;
			running++;
			continue;
		}
		if (wait(NULL) > 0)
			running--;
	}
	touch(dir, "done");
	wait_signals(2);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_usr1};

	if (argc < 3)
		return 2;
	sigaction(SIGUSR1, &sa, NULL);
	touch(argv[1], "ready");
	if (!strcmp(argv[2], "busy")) {
		alarm(LIFETIME);
		return busy(argv[1]);
	}
	if (!strcmp(argv[2], "churn") && argc == 4) {
		alarm(CHURN_LIFETIME);
		return churn(argv[1], strtol(argv[3], NULL, 10));
	}
	return 2;
}
