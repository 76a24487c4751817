// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bystander: a process no tracer was asked to trace, timing its own
 * malloc(64)+free pairs and getppid() calls, to see what a tracer of
 * other processes costs it.
 *
 *   bystander MS [OUTFILE]
 *
 * Makes pairs for MS ms of its own CPU time, then getppid() calls for as
 * long, and prints "malloc_ns X getppid_ns Y malloc_wall_ns Z getppid_wall_ns W"
 * to OUTFILE (or stderr): per call, the median of nine slices, by CPU time
 * (CLOCK_THREAD_CPUTIME_ID, which holds a breakpoint's trap and a BPF
 * program run on its behalf but not the time other processes of a shared
 * machine take the CPU from it) and by wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BATCH  1024
#define SLICES 9

/* Keeps the compiler from pairing malloc with free and dropping both. */
static void *volatile sink;

struct clocks {
	double cpu, wall;
};

static double ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pairs(void)
{
	for (int i = 0; i < BATCH; i++) {
		sink = malloc(64);
		free(sink);
	}
}

static void syscalls(void)
{
	for (int i = 0; i < BATCH; i++)
		sink = (void *)(long)getppid();
}

/* Batches of BATCH calls until MS ms of CPU time: ns a call by each clock. */
static struct clocks time_slice(void (*batch)(void), double ms)
{
	double cpu0 = ns_of(CLOCK_THREAD_CPUTIME_ID), wall0 = ns_of(CLOCK_MONOTONIC);
	double cpu = cpu0;
	long calls = 0;

	while (cpu - cpu0 < ms * 1e6) {
		batch();
		calls += BATCH;
		cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
	}
	return (struct clocks){(cpu - cpu0) / calls, (ns_of(CLOCK_MONOTONIC) - wall0) / calls};
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The median of SLICES slices of MS / SLICES ms, by each clock: a burst
 * of a shared machine (a cache flushed, a tracer attaching for a moment)
 * spoils a slice, not the figure.
 */
static struct clocks time_calls(void (*batch)(void), double ms)
{
	double cpu[SLICES], wall[SLICES];

	for (int i = 0; i < SLICES; i++) {
		struct clocks c = time_slice(batch, ms / SLICES);

		cpu[i] = c.cpu;
		wall[i] = c.wall;
	}
	qsort(cpu, SLICES, sizeof(*cpu), by_value);
	qsort(wall, SLICES, sizeof(*wall), by_value);
	return (struct clocks){cpu[SLICES / 2], wall[SLICES / 2]};
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	struct clocks m, g;
	FILE *out = stderr;

	if (ms <= 0) {
		fprintf(stderr, "usage: bystander MS [OUTFILE]\n");
		return 2;
	}
	pairs(); /* the arena and tcache, outside the timed loop */
	m = time_calls(pairs, ms);
	g = time_calls(syscalls, ms);
	if (argc > 2 && !(out = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "malloc_ns %.1f getppid_ns %.1f malloc_wall_ns %.1f getppid_wall_ns %.1f\n",
		m.cpu, g.cpu, m.wall, g.wall);
	return out == stderr ? 0 : fclose(out) != 0;
}
