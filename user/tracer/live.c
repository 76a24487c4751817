// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include "tracer/live.h"

struct live_table {
	int fd;
	size_t nr; /* slots */
};

uint32_t live__slots(uint32_t blocks)
{
	uint32_t n = 1;

	/* Half full at most: paths stay short, and a full one (lost block) stays rare. */
	while (n < blocks * 2ULL)
		n <<= 1;
	return n;
}

struct live_table *live_table__open(const struct bpf_map *map)
{
	struct live_table *lt = calloc(1, sizeof(*lt));

	if (!lt)
		return NULL;
	lt->fd = bpf_map__fd(map);
	lt->nr = bpf_map__max_entries(map);
	return lt;
}

void live_table__free(struct live_table *lt)
{
	free(lt);
}

/*
 * A pass maps the slots a window at a time: the whole table (96 MiB at
 * the default size) mapped at once would count in the loader's peak
 * resident memory at every report that reads blocks (--sample, filters).
 * 65,536 slots of 48 bytes are 3 MiB, whole pages, so every window starts
 * on a page and no slot straddles two.
 */
#define WINDOW_SLOTS (1U << 16)
_Static_assert(WINDOW_SLOTS * sizeof(struct live_block) % 4096 == 0, "windows of whole pages");

typedef int (*window_fn)(void *ctx, struct live_block *slots, size_t n);

static int for_each_window(const struct live_table *lt, window_fn fn, void *ctx)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int err = 0;

	for (size_t first = 0; first < lt->nr && !err; first += WINDOW_SLOTS) {
		size_t n = lt->nr - first < WINDOW_SLOTS ? lt->nr - first : WINDOW_SLOTS;
		size_t len = (n * sizeof(struct live_block) + page - 1) & ~(page - 1);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, lt->fd,
			       first * sizeof(struct live_block));

		if (p == MAP_FAILED)
			return -errno;
		err = fn(ctx, p, n);
		munmap(p, len);
	}
	return err;
}

/* @b's block into @out, if it holds one that stayed put while read. */
static bool read_block(struct live_block *b, struct live_block *out)
{
	__u64 addr = __atomic_load_n(&b->key.addr, __ATOMIC_ACQUIRE);

	if (addr <= LIVE_BUSY)
		return false;
	*out = *b;
	out->key.addr = addr;
	/* Released (and maybe taken again) meanwhile: what was read may be torn. */
	return __atomic_load_n(&b->key.addr, __ATOMIC_ACQUIRE) == addr;
}

struct visit {
	live_fn fn;
	live_keep_fn keep;
	void *ctx;
};

static int visit_window(void *ctx, struct live_block *slots, size_t n)
{
	struct visit *v = ctx;
	struct live_block b;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		if (read_block(&slots[i], &b))
			err = v->fn(v->ctx, &b.key, &b.info);
	}
	return err;
}

int live_table__for_each(struct live_table *lt, live_fn fn, void *ctx)
{
	struct visit v = {.fn = fn, .ctx = ctx};

	return for_each_window(lt, visit_window, &v);
}

static int drop_window(void *ctx, struct live_block *slots, size_t n)
{
	struct visit *v = ctx;
	struct live_block b;

	for (size_t i = 0; i < n; i++) {
		if (!read_block(&slots[i], &b) ||
		    (v->keep && v->keep(v->ctx, b.key.tgid, b.key.gen)))
			continue;
		/* A probe may be releasing it too: one of the two wins. */
		__sync_val_compare_and_swap(&slots[i].key.addr, b.key.addr, LIVE_GONE);
	}
	return 0;
}

int live_table__drop(struct live_table *lt, live_keep_fn keep, void *ctx)
{
	struct visit v = {.keep = keep, .ctx = ctx};

	return for_each_window(lt, drop_window, &v);
}
