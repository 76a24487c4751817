// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * threadchurn N [FORKS]: N threads made and joined one after another,
 * each doing one malloc/free in churn_pair; every tenth also keeps one
 * 72-byte block in churn_leak (N/10 rounded up: the counts the tests
 * check). With FORKS, it then forks a child that does the same with
 * FORKS threads, and waits for it: a --follow-forks child that makes
 * threads and forks again. Prints "done N" and exits 0 when every
 * thread, and the child, ended as they should.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_KEPT 4096

static void *kept[MAX_KEPT];

static NOINLINE void churn_pair(void)
{
	void *volatile p = malloc(40);

	free(p);
}

static NOINLINE void *churn_leak(void)
{
	return malloc(72);
}

static void *worker(void *arg)
{
	long i = (long)arg;

	churn_pair();
	if (i % 10 == 0)
		kept[i / 10 % MAX_KEPT] = churn_leak();
	return NULL;
}

static int churn(long n)
{
	pthread_t th;

	for (long i = 0; i < n; i++) {
		if (pthread_create(&th, NULL, worker, (void *)i) || pthread_join(th, NULL))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	long forks = argc > 2 ? atol(argv[2]) : 0;
	int status;
	pid_t pid;

	if (churn(n))
		return 1;
	if (forks) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			_exit(churn(forks));
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	printf("done %ld\n", n);
	return 0;
}
