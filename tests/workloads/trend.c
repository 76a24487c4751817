// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trend: one stack that grows steadily and one that is large but flat,
 * for the leak-trend ranking. build_cache fills a 1 MiB cache at start and
 * keeps it; leak_slowly keeps 2 KiB every 100 ms; handle_request
 * allocates and frees. Blocks start with a known text for --show-data.
 *
 * Usage: trend [SECONDS]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

#define CACHE_ENTRIES 64
#define CACHE_ENTRY (16 * 1024)
#define LEAK_SIZE 2048
#define TICKS_PER_SECOND 10

static void *cache[CACHE_ENTRIES];
static void *leaked[60 * TICKS_PER_SECOND];
static int nleaked;

NOINLINE void *cache_entry(void)
{
	char *p = malloc(CACHE_ENTRY);

	strcpy(p, "cache-entry");
	return p;
}

NOINLINE void build_cache(void)
{
	for (int i = 0; i < CACHE_ENTRIES; i++)
		cache[i] = cache_entry();
}

/* Churn: nothing stays. */
NOINLINE void handle_request(int tick)
{
	char *p = malloc(512 + tick % 512);

	memset(p, 0, 16);
	free(p);
}

NOINLINE void leak_slowly(void)
{
	char *p = malloc(LEAK_SIZE);

	strcpy(p, "SECRET-TOKEN");
	leaked[nleaked++] = p;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 3;
	struct timespec tick = { 0, 1000000000L / TICKS_PER_SECOND };

	if (seconds < 1 || seconds > 60)
		return 2;
	build_cache();
	for (int t = 0; t < seconds * TICKS_PER_SECOND; t++) {
		handle_request(t);
		leak_slowly();
		nanosleep(&tick, NULL);
	}
	return 0;
}
