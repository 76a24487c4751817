// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ring: N malloc/free pairs in one thread the program creates, each block
 * live for the next 64 calls, as a program's short-lived objects are.
 *
 *   ring N [OUTFILE [hold]]
 *
 * Call i frees the block of call i - 64 and allocates one of 32-95 bytes
 * (from i, no libc call between the pairs), so a tracer holds 64 live
 * blocks at every instant instead of one, and inserts each block before
 * it deletes another. Prints "ns_per_pair X loop_ns_per_pair Y loop_cpu_ns_per_pair Z" to
 * OUTFILE (or stderr): X is the wall time from pthread_create to
 * pthread_join over N, what the program waits for, a tracer's work at the
 * thread's birth and death included; Y the thread's own loop alone, by
 * wall time and by its CPU time (CLOCK_THREAD_CPUTIME_ID: the traps and BPF
 * programs run on its behalf, not the time other processes take the CPU).
 *
 * With hold it waits for SIGUSR1 before it creates the thread, so that a
 * tracer can attach by pid first.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING 64

static long pairs;
static double loop_ns, loop_cpu_ns;

/* Keeps the compiler from dropping a block it sees freed unused. */
static void *volatile sink;

static double ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *worker(void *arg)
{
	void *ring[RING] = {};
	double t0 = ns_of(CLOCK_MONOTONIC), cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID);

	for (long i = 0; i < pairs; i++) {
		free(ring[i % RING]);
		ring[i % RING] = malloc(32 + (i * 37 & 63));
		sink = ring[i % RING];
	}
	loop_cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	loop_ns = ns_of(CLOCK_MONOTONIC) - t0;
	for (int i = 0; i < RING; i++)
		free(ring[i]);
	return arg;
}

static void wait_usr1(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	sigwait(&usr1, &sig);
}

int main(int argc, char **argv)
{
	FILE *out = stderr;
	pthread_t tid;
	double t0, t1;

	pairs = argc > 1 ? atol(argv[1]) : 1000000;
	if (pairs <= 0) {
		fprintf(stderr, "usage: ring N [OUTFILE [hold]]\n");
		return 2;
	}
	if (argc > 3 && !strcmp(argv[3], "hold"))
		wait_usr1();
	t0 = ns_of(CLOCK_MONOTONIC);
	if (pthread_create(&tid, NULL, worker, NULL)) {
		perror("ring: pthread_create");
		return 1;
	}
	pthread_join(tid, NULL);
	t1 = ns_of(CLOCK_MONOTONIC);
	if (argc > 2 && !(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "ns_per_pair %.1f loop_ns_per_pair %.1f loop_cpu_ns_per_pair %.1f\n",
		(t1 - t0) / pairs, loop_ns / pairs, loop_cpu_ns / pairs);
	return out == stderr ? 0 : fclose(out) != 0;
}
