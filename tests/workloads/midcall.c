// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * midcall: a thread that ends inside an allocation call, then threads
 * that allocate after it, for `--allocator EXE:mc_` (test_threads.sh).
 *
 * mc_malloc and mc_free wrap libc's. mc_malloc(STUCK_SIZE) waits in a
 * cancellation point after its malloc, and the thread that calls it is
 * cancelled there: its call never returns. Then:
 *   thread_leak   8 threads x 10 x mc_malloc(100)   = 8000 bytes
 *   main_leak     5 x mc_malloc(200)                = 1000
 *   main_churn  100 mc_malloc(50)/mc_free pairs     =    0
 * Through mc_: 9,000 bytes in 85 blocks; 185 allocation calls that
 * return, 100 releases. Nothing else calls mc_.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#define STUCK_SIZE 4242
#define THREADS	   8

static atomic_int stuck;

NOINLINE void *mc_malloc(size_t size)
{
	void *p = malloc(size);

	if (size == STUCK_SIZE) {
		atomic_store(&stuck, 1);
		for (;;)
			pause();
	}
	return p;
}

NOINLINE void mc_free(void *p)
{
	free(p);
}

static void *kept[THREADS * 10 + 5];
static atomic_int nkept;

static void keep(void *p)
{
	if (!p)
		abort();
	kept[atomic_fetch_add(&nkept, 1)] = p;
}

static void *stuck_thread(void *arg)
{
	return mc_malloc(STUCK_SIZE);
}

NOINLINE void *thread_leak(void *arg)
{
	for (int i = 0; i < 10; i++)
		keep(mc_malloc(100));
	return arg;
}

NOINLINE void main_leak(void)
{
	for (int i = 0; i < 5; i++)
		keep(mc_malloc(200));
}

NOINLINE void main_churn(void)
{
	for (int i = 0; i < 100; i++)
		mc_free(mc_malloc(50));
}

int main(void)
{
	pthread_t t[THREADS];

	if (pthread_create(&t[0], NULL, stuck_thread, NULL))
		return 1;
	while (!atomic_load(&stuck))
		usleep(1000);
	if (pthread_cancel(t[0]) || pthread_join(t[0], NULL))
		return 1;
	for (int i = 0; i < THREADS; i++) {
		if (pthread_create(&t[i], NULL, thread_leak, NULL))
			return 1;
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	main_leak();
	main_churn();
	return 0;
}
