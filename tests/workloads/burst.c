// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --growth past the first-touch budget at once (issue 43): touch_burst
 * touches argv[1] MiB (default 32: 8,192 pages, twice the budget's 4,096
 * tokens) of a mapping of its own in one go and keeps it. Then it stays
 * alive argv[2] seconds (default 2), so that a report reads them resident.
 * With argv[3] "contend" another thread, on another CPU where there is
 * one, takes the address space's lock for writing most of the time (an
 * mprotect() of a 16 MiB populated mapping of its own, back and forth)
 * while the burst runs: the kernel cannot look up the burst's mappings
 * while it holds it, so the loader must. Every 64 pages the burst waits
 * for that thread to have done a round since: a traced fault is fast
 * (~2 us), and on a busy machine the whole burst could otherwise end
 * before the thread first runs, or while it is preempted.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

static atomic_bool done;
static atomic_ulong rounds; /* the contending thread's, so far */

/* Wait, if @contended, until the contending thread has run since *@seen. */
static void overlap(bool contended, unsigned long *seen)
{
	while (contended && atomic_load(&rounds) == *seen)
		sched_yield();
	*seen = atomic_load(&rounds);
}

__attribute__((noinline)) static void touch_burst(volatile char *p, size_t pages, bool contended)
{
	unsigned long seen = 0;

	for (size_t i = 0; i < pages; i++) {
		if (i % 64 == 0)
			overlap(contended, &seen);
		p[i * PAGE] = 1;
	}
}

#define CONTEND_PAGES 4096

/* Another CPU than this thread's, if the process may run on two. */
static void other_cpu(pthread_t thread)
{
	cpu_set_t allowed, one;
	int me = sched_getcpu();

	if (sched_getaffinity(0, sizeof(allowed), &allowed) || me < 0)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (cpu == me || !CPU_ISSET(cpu, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pthread_setaffinity_np(thread, sizeof(one), &one);
		CPU_ZERO(&one);
		CPU_SET(me, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

/*
 * Take the address space's lock for writing, again and again: mprotect()
 * holds it while it walks the page table of every page it changes.
 */
static void *contend(void *arg)
{
	char *q = mmap(NULL, CONTEND_PAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (q == MAP_FAILED)
		exit(2);
	while (!atomic_load(&done)) {
		mprotect(q, CONTEND_PAGES * PAGE, PROT_READ);
		mprotect(q, CONTEND_PAGES * PAGE, PROT_READ | PROT_WRITE);
		atomic_fetch_add(&rounds, 1);
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
	if (contended) {
		if (pthread_create(&thread, NULL, contend, NULL))
			return 2;
		other_cpu(thread);
	}
	touch_burst(p, pages, contended);
	if (contended) {
		atomic_store(&done, true);
		pthread_join(thread, NULL);
	}
	sleep(argc > 2 ? atoi(argv[2]) : 2);
	return p[0] == 1 ? 0 : 1;
}
