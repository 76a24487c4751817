/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ADDRCACHE_H
#define ALLOCTRACE_ADDRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/hashmap.h"
#include "symbolize/frame.h"

struct cache_entry {
	uint64_t addr; /* the key */
	struct frame_info *frames;
	int nr;
};

/* Zeroed, it is empty and ready (symbolizers are calloc()ed). */
struct addr_cache {
	struct hashmap map; /* of struct cache_entry */
};

const struct cache_entry *addr_cache__find(const struct addr_cache *cache, uint64_t addr);

/* Caching is best effort: on failure the address is just resolved again. */
void addr_cache__add(struct addr_cache *cache, uint64_t addr, const struct frame_info *frames,
		     int nr);

/* Drop every address for which @keep says false. */
void addr_cache__prune(struct addr_cache *cache, bool (*keep)(uint64_t addr, const void *arg),
		       const void *arg);

void addr_cache__release(struct addr_cache *cache);

#endif
