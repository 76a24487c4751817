// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The frames each address resolved to, kept across refreshes that keep its object. */
#include <stdlib.h>
#include <string.h>
#include "symbolize/addrcache.h"

const struct cache_entry *addr_cache__find(const struct addr_cache *cache, uint64_t addr)
{
	return hashmap__find(&cache->map, &addr);
}

/* Caching is best effort: on failure the address is just resolved again. */
void addr_cache__add(struct addr_cache *cache, uint64_t addr, const struct frame_info *frames,
		     int nr)
{
	struct frame_info *copy = malloc(nr * sizeof(*frames));
	struct cache_entry *e;
	bool added;

	if (!copy)
		return;
	memcpy(copy, frames, nr * sizeof(*frames));
	if (!cache->map.entry_size)
		cache->map = HASHMAP_INIT(sizeof(uint64_t), sizeof(struct cache_entry), NULL, NULL);
	e = hashmap__insert(&cache->map, &addr, &added);
	if (!e) {
		free(copy);
		return;
	}
	/* Added again (a caller that did not look first): the newer frames win. */
	free(e->frames);
	e->frames = copy;
	e->nr = nr;
}

void addr_cache__release(struct addr_cache *cache)
{
	for (struct cache_entry *e = hashmap__next(&cache->map, NULL); e;
	     e = hashmap__next(&cache->map, e))
		free(e->frames);
	hashmap__release(&cache->map);
}

struct prune_ctx {
	bool (*keep)(uint64_t addr, const void *arg);
	const void *arg;
};

static bool drop_entry(void *entry, void *ctx)
{
	struct cache_entry *e = entry;
	const struct prune_ctx *p = ctx;

	if (p->keep(e->addr, p->arg))
		return false;
	free(e->frames);
	return true;
}

void addr_cache__prune(struct addr_cache *cache, bool (*keep)(uint64_t addr, const void *arg),
		       const void *arg)
{
	hashmap__prune(&cache->map, drop_entry, &(struct prune_ctx){keep, arg});
}
