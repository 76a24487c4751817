// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * soak: allocation churn at a high rate for a long time, with one slow
 * leak whose every block is logged, for tests/integration/test_soak.sh.
 *
 *  - CHURN_THREADS threads each keep a window of WINDOW blocks and replace
 *    one at a time, round the window, with malloc, calloc, realloc or
 *    posix_memalign of sizes from 1 byte to 64 KiB (churn_step), until the
 *    time is up; then they free their window: nothing outstanding.
 *  - Every 100 ms a short-lived thread makes SHORT_PAIRS malloc/free pairs
 *    and exits (short_lived): thread ids come and go, nothing stays.
 *  - The main thread leaks LEAK_SIZE bytes every LEAK_PERIOD_MS
 *    (leak_slowly). For each leaked block it writes a line "N BEGIN END"
 *    to DIR/progress: N leaked so far, and the CLOCK_REALTIME seconds just
 *    before the malloc and just after it returned. A report taken at time
 *    T therefore holds at least the blocks whose END < T, and at most
 *    those whose BEGIN < the time the report was read.
 *  - At the end it writes "done N" (N leaked blocks in all) and
 *    "churn C" (the churn threads' calls) to DIR/progress and exits 0.
 *
 * Nothing else allocates: no stdio streams.
 *
 * Usage: soak DIR SECONDS
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#define CHURN_THREADS  4
#define WINDOW	       64
#define MAX_SIZE       (64 * 1024)
#define SHORT_PAIRS    100
#define LEAK_SIZE      1000
#define LEAK_PERIOD_MS 100

static atomic_bool stop;
static atomic_long churn_calls;
static int progress_fd;

/* The leaked blocks stay reachable, chained through their first bytes. */
static void *leaked;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line to DIR/progress, formatted on the stack: no allocation. */
static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || write(progress_fd, line, n) != n)
		_exit(2);
}

/* xorshift: each thread its own sequence of sizes and calls. */
static uint32_t next(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* Replace the block in *slot by a new one, made one of four ways. */
NOINLINE void churn_step(void **slot, uint32_t *rng)
{
	size_t size = next(rng) % MAX_SIZE + 1;
	void *p = NULL;

	switch (next(rng) % 4) {
	case 0:
		free(*slot);
		p = malloc(size);
		break;
	case 1:
		free(*slot);
		p = calloc(1, size);
		break;
	case 2:
		p = realloc(*slot, size);
		break;
	case 3:
		free(*slot);
		if (posix_memalign(&p, 64, size))
			p = NULL;
		break;
	}
	if (!p)
		abort();
	*slot = p;
}

static void *churn_thread(void *arg)
{
	uint32_t rng = 2463534242u + (uint32_t)(uintptr_t)arg;
	void *window[WINDOW] = { NULL };
	long calls = 0;

	for (unsigned int i = 0; !atomic_load_explicit(&stop, memory_order_relaxed); i++) {
		churn_step(&window[i % WINDOW], &rng);
		calls++;
	}
	for (int i = 0; i < WINDOW; i++)
		free(window[i]);
	atomic_fetch_add(&churn_calls, calls);
	return NULL;
}

NOINLINE void *short_lived(void *arg)
{
	for (int i = 0; i < SHORT_PAIRS; i++)
		free(malloc((size_t)i * 16 + 1));
	return arg;
}

NOINLINE void leak_slowly(long n)
{
	double begin = now(), end;
	void **p = malloc(LEAK_SIZE);

	end = now();
	if (!p)
		abort();
	*p = leaked;
	leaked = p;
	progress("%ld %.6f %.6f\n", n, begin, end);
}

int main(int argc, char **argv)
{
	struct timespec period = { 0, LEAK_PERIOD_MS * 1000000L };
	pthread_t churn[CHURN_THREADS], brief;
	char path[4096];
	double deadline;
	long n = 0;

	if (argc < 3)
		return 2;
	snprintf(path, sizeof(path), "%s/progress", argv[1]);
	progress_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (progress_fd < 0)
		return 2;
	deadline = now() + atof(argv[2]);
	for (long i = 0; i < CHURN_THREADS; i++) {
		if (pthread_create(&churn[i], NULL, churn_thread, (void *)i))
			return 1;
	}
	while (now() < deadline) {
		leak_slowly(++n);
		if (pthread_create(&brief, NULL, short_lived, NULL) || pthread_join(brief, NULL))
			return 1;
		nanosleep(&period, NULL);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < CHURN_THREADS; i++)
		pthread_join(churn[i], NULL);
	progress("done %ld\nchurn %ld\n", n, atomic_load(&churn_calls));
	return 0;
}
