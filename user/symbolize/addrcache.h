/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ADDRCACHE_H
#define ALLOCTRACE_ADDRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbolize/frame.h"

struct cache_entry {
	uint64_t addr;
	struct frame_info *frames; /* NULL marks a free slot */
	int nr;
};

struct addr_cache {
	struct cache_entry *slots;
	size_t cap; /* a power of two, or 0 */
	size_t nr;
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
