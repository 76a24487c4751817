// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The frames each address resolved to, kept across refreshes that keep its object. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/addrcache.h"

static size_t hash_addr(uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h ^ h >> 32);
}

static size_t addr_cache__slot(const struct addr_cache *cache, uint64_t addr)
{
	size_t mask = cache->cap - 1, i;

	for (i = hash_addr(addr) & mask; cache->slots[i].frames; i = (i + 1) & mask)
		if (cache->slots[i].addr == addr)
			break;
	return i;
}

const struct cache_entry *addr_cache__find(const struct addr_cache *cache, uint64_t addr)
{
	const struct cache_entry *e;

	if (!cache->cap)
		return NULL;
	e = &cache->slots[addr_cache__slot(cache, addr)];
	return e->frames ? e : NULL;
}

static int addr_cache__resize(struct addr_cache *cache, size_t cap)
{
	struct addr_cache resized = {.cap = cap, .nr = cache->nr};
	size_t i;

	resized.slots = calloc(resized.cap, sizeof(*resized.slots));
	if (!resized.slots)
		return -ENOMEM;
	for (i = 0; i < cache->cap; i++)
		if (cache->slots[i].frames)
			resized.slots[addr_cache__slot(&resized, cache->slots[i].addr)] =
			    cache->slots[i];
	free(cache->slots);
	*cache = resized;
	return 0;
}

/* Caching is best effort: on failure the address is just resolved again. */
void addr_cache__add(struct addr_cache *cache, uint64_t addr, const struct frame_info *frames,
		     int nr)
{
	struct cache_entry *e;

	if (2 * (cache->nr + 1) > cache->cap &&
	    addr_cache__resize(cache, cache->cap ? cache->cap * 2 : 1024))
		return;
	e = &cache->slots[addr_cache__slot(cache, addr)];
	e->frames = malloc(nr * sizeof(*frames));
	if (!e->frames)
		return;
	memcpy(e->frames, frames, nr * sizeof(*frames));
	e->addr = addr;
	e->nr = nr;
	cache->nr++;
}

void addr_cache__release(struct addr_cache *cache)
{
	size_t i;

	for (i = 0; i < cache->cap; i++)
		free(cache->slots[i].frames);
	free(cache->slots);
	*cache = (struct addr_cache){0};
}

void addr_cache__prune(struct addr_cache *cache, bool (*keep)(uint64_t addr, const void *arg),
		       const void *arg)
{
	size_t i;

	if (!cache->cap)
		return;
	for (i = 0; i < cache->cap; i++) {
		if (!cache->slots[i].frames || keep(cache->slots[i].addr, arg))
			continue;
		free(cache->slots[i].frames);
		cache->slots[i].frames = NULL;
		cache->nr--;
	}
	/* Emptied slots would break probe chains; rehashing closes them. */
	if (addr_cache__resize(cache, cache->cap))
		addr_cache__release(cache);
}
