// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * threads: allocations that cross threads, for the integration tests.
 *
 *  - xthread_alloc: a producer thread allocates 1000 x 56 bytes that a
 *    consumer thread frees as they come: nothing outstanding.
 *  - xthread_handoff: the same with 501 x 88 bytes of which the consumer
 *    frees 500: one block outstanding, and the site's allocs is exactly 501.
 *  - worker_leak: each of 4 workers leaks 25 x 72 bytes (7200 in all) while
 *    churning in worker_churn (nothing outstanding).
 */
#include <pthread.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

#define XFER_BLOCKS    1000
#define HANDOFF_BLOCKS 501
#define WORKERS	       4
#define WORKER_LEAKS   25
#define WORKER_CHURN   2000
#define QUEUE_LEN      64

/* A bounded queue: the producer blocks when the consumer falls behind. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	void *slot[QUEUE_LEN];
	unsigned int head, tail;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {NULL}, 0, 0};

static void *kept[WORKERS * WORKER_LEAKS + 1];
static unsigned int nkept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(void *p)
{
	pthread_mutex_lock(&kept_lock);
	if (!p || nkept >= sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[nkept++] = p;
	pthread_mutex_unlock(&kept_lock);
}

static void push(void *p)
{
	pthread_mutex_lock(&queue.lock);
	while (queue.tail - queue.head == QUEUE_LEN)
		pthread_cond_wait(&queue.changed, &queue.lock);
	queue.slot[queue.tail++ % QUEUE_LEN] = p;
	pthread_cond_broadcast(&queue.changed);
	pthread_mutex_unlock(&queue.lock);
}

static void *pop(void)
{
	void *p;

	pthread_mutex_lock(&queue.lock);
	while (queue.tail == queue.head)
		pthread_cond_wait(&queue.changed, &queue.lock);
	p = queue.slot[queue.head++ % QUEUE_LEN];
	pthread_cond_broadcast(&queue.changed);
	pthread_mutex_unlock(&queue.lock);
	return p;
}

NOINLINE void xthread_alloc(void)
{
	for (int i = 0; i < XFER_BLOCKS; i++)
		push(malloc(56));
}

/* One call site; the last block is kept instead of handed over. */
NOINLINE void xthread_handoff(void)
{
	for (int i = 0; i < HANDOFF_BLOCKS; i++) {
		void *p = malloc(88);

		if (i == HANDOFF_BLOCKS - 1)
			keep(p);
		else
			push(p);
	}
}

static void *producer(void *arg)
{
	xthread_alloc();
	xthread_handoff();
	return NULL;
}

static void *consumer(void *arg)
{
	for (int i = 0; i < XFER_BLOCKS + HANDOFF_BLOCKS - 1; i++)
		free(pop());
	return NULL;
}

NOINLINE void worker_leak(void)
{
	for (int i = 0; i < WORKER_LEAKS; i++)
		keep(malloc(72));
}

NOINLINE void worker_churn(void)
{
	for (int i = 0; i < WORKER_CHURN; i++)
		free(malloc((size_t)(i % 512) + 1));
}

static void *worker(void *arg)
{
	worker_churn();
	worker_leak();
	worker_churn();
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *))
{
	if (pthread_create(t, NULL, fn, NULL))
		abort();
}

int main(void)
{
	pthread_t prod, cons, workers[WORKERS];

	start(&cons, consumer);
	start(&prod, producer);
	for (int i = 0; i < WORKERS; i++)
		start(&workers[i], worker);
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(workers[i], NULL);
	return 0;
}
