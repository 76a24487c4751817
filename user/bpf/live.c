// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include "bpf/live.h"

struct live_table {
	int fd;
	size_t nr;  /* slots */
	size_t len; /* bytes of a mapping of them */
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
	size_t page = sysconf(_SC_PAGESIZE);
	struct live_table *lt = calloc(1, sizeof(*lt));

	if (!lt)
		return NULL;
	lt->fd = bpf_map__fd(map);
	lt->nr = bpf_map__max_entries(map);
	lt->len = (lt->nr * sizeof(struct live_block) + page - 1) & ~(page - 1);
	return lt;
}

void live_table__free(struct live_table *lt)
{
	free(lt);
}

/*
 * The slots, mapped for one pass: kept mapped, the whole table would count
 * in the loader's resident memory between reports.
 */
static struct live_block *map_slots(const struct live_table *lt)
{
	void *p = mmap(NULL, lt->len, PROT_READ | PROT_WRITE, MAP_SHARED, lt->fd, 0);

	return p == MAP_FAILED ? NULL : p;
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

int live_table__for_each(struct live_table *lt, live_fn fn, void *ctx)
{
	struct live_block *slots = map_slots(lt), b;
	int err = 0;

	if (!slots)
		return -errno;
	for (size_t i = 0; i < lt->nr && !err; i++) {
		if (read_block(&slots[i], &b))
			err = fn(ctx, &b.key, &b.info);
	}
	munmap(slots, lt->len);
	return err;
}

int live_table__drop(struct live_table *lt, live_keep_fn keep, void *ctx)
{
	struct live_block *slots = map_slots(lt), b;

	if (!slots)
		return -errno;
	for (size_t i = 0; i < lt->nr; i++) {
		if (!read_block(&slots[i], &b) || (keep && keep(ctx, b.key.tgid, b.key.gen)))
			continue;
		/* A probe may be releasing it too: one of the two wins. */
		__sync_val_compare_and_swap(&slots[i].key.addr, b.key.addr, LIVE_GONE);
	}
	munmap(slots, lt->len);
	return 0;
}
