// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --growth past the first-touch budget at once (issue 43): touch_burst
 * touches argv[1] MiB (default 32: 8,192 pages, twice the budget's 4,096
 * tokens) of a mapping of its own in one go and keeps it. Then it stays
 * alive argv[2] seconds (default 2), so that a report reads them resident.
 * With argv[3] "contend" another thread maps and unmaps a page over and
 * over while the burst runs: the kernel cannot look up the burst's
 * mappings while that thread holds their lock, so the loader must. The
 * burst waits for the thread's first round: a tracer's faults are fast
 * enough now (~2 us) for the burst to end before a new thread runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

__attribute__((noinline)) static void touch_burst(volatile char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		p[i * PAGE] = 1;
}

static atomic_bool done, contending;

/* Take the address space's lock for writing, again and again. */
static void *contend(void *arg)
{
	while (!atomic_load(&done)) {
		void *q = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (q != MAP_FAILED)
			munmap(q, PAGE);
		atomic_store(&contending, true);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	bool contended = argc > 3 && !strcmp(argv[3], "contend");
	size_t pages = (argc > 1 ? strtoul(argv[1], NULL, 10) : 32) << 20 >> 12;
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 2;
	/* One fault per page, as the truth counts them: a huge page would map 512 at once. */
	madvise(p, pages * PAGE, MADV_NOHUGEPAGE);
	if (contended && pthread_create(&thread, NULL, contend, NULL))
		return 2;
	while (contended && !atomic_load(&contending))
		;
	touch_burst(p, pages);
	if (contended) {
		atomic_store(&done, true);
		pthread_join(thread, NULL);
	}
	sleep(argc > 2 ? atoi(argv[2]) : 2);
	return p[0] == 1 ? 0 : 1;
}
