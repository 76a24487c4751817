// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * threads: thread churn, as a server that starts a thread per task. N
 * threads, PAR at a time (PAR created, then PAR joined), each making one
 * malloc/free and returning.
 *
 *   threads N [PAR [OUTFILE]]
 *
 * Prints "threads N ms X" to OUTFILE (or stderr): the wall time from the
 * first pthread_create to the last pthread_join, which a tracer's work at
 * each thread's birth and death is part of.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_PAR 64

/* Keeps the compiler from pairing malloc with free and dropping both. */
static void *volatile sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *task(void *arg)
{
	sink = malloc(64);
	free(sink);
	return arg;
}

static int churn(long n, int par)
{
	pthread_t tids[MAX_PAR];

	for (long done = 0; done < n; done += par) {
		int batch = n - done < par ? n - done : par;

		for (int i = 0; i < batch; i++) {
			if (pthread_create(&tids[i], NULL, task, NULL)) {
				perror("threads: pthread_create");
				return 1;
			}
		}
		for (int i = 0; i < batch; i++)
			pthread_join(tids[i], NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	int par = argc > 2 ? atoi(argv[2]) : 1;
	FILE *out = stderr;
	double t0, t1;

	if (n <= 0 || par < 1 || par > MAX_PAR) {
		fprintf(stderr, "usage: threads N [PAR(1-%d) [OUTFILE]]\n", MAX_PAR);
		return 2;
	}
	t0 = now_ms();
	if (churn(n, par))
		return 1;
	t1 = now_ms();
	if (argc > 3 && !(out = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	fprintf(out, "threads %ld ms %.3f\n", n, t1 - t0);
	return out == stderr ? 0 : fclose(out) != 0;
}
