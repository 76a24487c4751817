// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * leaky: the demo program. It pretends to serve requests for a while
 * (2 seconds by default, 50 ticks a second) and forgets to free some of
 * what it allocates:
 *
 *   load_config       once,              1000 bytes
 *   remember_request  every tick,          64 bytes  (6400 in 2 s)
 *   cache_page        every 10th tick,   4096 bytes (40960 in 2 s)
 *
 * handle_request allocates and frees a few buffers every tick, and
 * rebuild_index a 3 MiB table once a second: neither may show up as a
 * leak, but the big table is what --big 1M alerts on.
 *
 * Usage: leaky [SECONDS]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

#define TICKS_PER_SECOND 50
#define MAX_SECONDS	 60

/* Leaked blocks stay reachable here: "leaks" a tracer has to find. */
static void *forgotten[MAX_SECONDS * TICKS_PER_SECOND * 2 + 1];
static size_t nforgotten;

static void forget(void *p)
{
	if (!p || nforgotten >= sizeof(forgotten) / sizeof(forgotten[0]))
		abort();
	forgotten[nforgotten++] = p;
}

NOINLINE void load_config(void)
{
	char *config = malloc(1000);

	strcpy(config, "verbose=1\n");
	forget(config);
}

NOINLINE void remember_request(int tick)
{
	int *record = malloc(64);

	record[0] = tick;
	forget(record);
}

NOINLINE void cache_page(void)
{
	forget(calloc(1, 4096));
}

/* Well-behaved: everything allocated here is freed before returning. */
NOINLINE void handle_request(int tick)
{
	for (int i = 0; i < 20; i++) {
		char *buf = malloc((size_t)(tick + i) % 2048 + 16);

		memset(buf, 0, 16);
		free(buf);
	}
}

/* A big, short-lived block: a spike in memory use, not a leak. */
NOINLINE void rebuild_index(void)
{
	char *table = malloc(3 << 20);

	memset(table, 0, 4096);
	free(table);
}

static void sleep_one_tick(void)
{
	struct timespec tick = {0, 1000000000L / TICKS_PER_SECOND};

	nanosleep(&tick, NULL);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 2;

	if (seconds < 0 || seconds > MAX_SECONDS)
		return 2;
	load_config();
	for (int tick = 0; tick < seconds * TICKS_PER_SECOND; tick++) {
		handle_request(tick);
		remember_request(tick);
		if (tick % 10 == 0)
			cache_page();
		if (tick % TICKS_PER_SECOND == 0)
			rebuild_index();
		sleep_one_tick();
	}
	return 0;
}
