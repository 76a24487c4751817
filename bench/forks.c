// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/forks: a process per request, as pgbench -C makes PostgreSQL fork a
 * backend per transaction. For SECS seconds it keeps PAR children alive:
 * each mallocs and frees 100 blocks six calls deep, leaks 3 x 700 bytes
 * there and exits. Then it prints "children N seconds S" (wall time).
 * It starts at SIGUSR1, so that a tracer can take the parent up first and
 * both copies start together.
 * Built under two names (forks-traced, forks-native) so that --comm
 * chooses one of two copies running side by side.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAR 4

/* Not static: the leaks are stores the compiler must keep. */
void *kept[3];

__attribute__((noinline)) void request_work(int depth)
{
	if (depth > 0) {
		request_work(depth - 1);
		return;
	}
	for (int i = 0; i < 100; i++)
		free(malloc(64 + i));
	for (int i = 0; i < 3; i++)
		kept[i] = malloc(700);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double start, secs = argc > 1 ? atof(argv[1]) : 10;
	long children = 0;
	int running = 0, sig;
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	sigwait(&usr1, &sig);
	start = now();

	while (now() - start < secs || running) {
		if (running < PAR && now() - start < secs) {
			pid_t pid = fork();

			if (pid == 0) {
				request_work(5);
				_exit(0);
			}
			if (pid < 0) {
				perror("forks: fork");
				return 1;
			}
			running++;
			continue;
		}
		if (wait(NULL) > 0) {
			running--;
			children++;
		}
	}
	printf("children %ld seconds %.3f\n", children, now() - start);
	return 0;
}
