// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pairs: N malloc(64)/free pairs per thread, timed around the loop only.
 *
 *   pairs N [THREADS [OUTFILE]]
 *
 * Prints "ns_per_pair X" (wall time of the timed loop divided by N, so a
 * perfectly scaling run shows the same figure with 1 and 2 threads) to
 * OUTFILE, or to stderr without one. Tracers that wrap the program (valgrind,
 * heaptrack, alloctrace) print on the same streams, hence the file.
 *
 * The clock starts after every thread has made its first allocation and
 * met the others at a barrier: attaching, loading and arena creation are
 * not part of the figure.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 64

static long pairs;
static pthread_barrier_t start;

/* Keeps the compiler from pairing malloc with free and dropping both. */
static void *volatile sink;

/* Each thread reads the clock itself, right around its own loop: a
 * coordinator's clock would also time its own scheduling, which under
 * valgrind (one thread runs at a time) can come after the whole loop. */
struct span {
	pthread_t tid;
	double t0, t1;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void churn(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);

		sink = p;
		free(p);
	}
}

static void *worker(void *arg)
{
	struct span *span = arg;

	churn(1); /* creates this thread's arena outside the timed loop */
	pthread_barrier_wait(&start);
	span->t0 = now_ns();
	churn(pairs);
	span->t1 = now_ns();
	return NULL;
}

/* Wall time from the first thread's start to the last one's end. */
static int run(int nthreads, double *elapsed)
{
	struct span spans[MAX_THREADS];
	double first, last;
	int i, err = 0;

	pthread_barrier_init(&start, NULL, nthreads);
	for (i = 0; i < nthreads && !err; i++)
		err = pthread_create(&spans[i].tid, NULL, worker, &spans[i]);
	if (err)
		return err;
	for (i = 0; i < nthreads; i++)
		pthread_join(spans[i].tid, NULL);
	first = spans[0].t0;
	last = spans[0].t1;
	for (i = 1; i < nthreads; i++) {
		first = spans[i].t0 < first ? spans[i].t0 : first;
		last = spans[i].t1 > last ? spans[i].t1 : last;
	}
	*elapsed = last - first;
	return 0;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	FILE *out = stderr;
	double elapsed;

	pairs = argc > 1 ? atol(argv[1]) : 1000000;
	if (pairs <= 0 || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: pairs N [THREADS(1-%d) [OUTFILE]]\n", MAX_THREADS);
		return 2;
	}
	if (run(nthreads, &elapsed)) {
		perror("pthread_create");
		return 1;
	}
	if (argc > 3 && !(out = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	fprintf(out, "ns_per_pair %.1f\n", elapsed / pairs);
	return out == stderr ? 0 : fclose(out) != 0;
}
