/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live blocks, an open-addressing table in an array: recording and
 * releasing a block cost an index and an atomic instead of a hash map's
 * bucket lock, element allocation and free (about 350 ns a malloc/free
 * pair, measured). Sized by the loader, a power of two of slots
 * (cfg.live_mask + 1), and mapped by it to read and drop blocks without a
 * syscall per slot (user/tracer/live.c).
 */
#ifndef ALLOCTRACE_LIVE_BPF_H
#define ALLOCTRACE_LIVE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "config.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct live_block);
} allocs SEC(".maps");

/* The first slot a block may take: blocks of one process are 16-byte aligned, mostly. */
static __always_inline __u32 live_home(const struct alloc_key *key)
{
	__u64 h = (key->addr >> 4) * 0x9e3779b97f4a7c15ULL;

	h ^= ((__u64)key->tgid << 32 | key->gen) * 0xc2b2ae3d27d4eb4fULL;
	return h >> 32;
}

static __always_inline bool live_match(const struct live_block *b, const struct alloc_key *key)
{
	return b->key.addr == key->addr && b->key.tgid == key->tgid && b->key.gen == key->gen;
}

/*
 * The slot of @key's block on its path, or -1. A search ends at a
 * never-used slot: no block was placed past one. With @claim, the slot to
 * record the block in: its own if it is there already (its free went
 * unseen), else the first free one; marked LIVE_BUSY, which no search
 * matches and no other claim takes. A global function: the verifier
 * checks its loop once, not at every caller.
 */
__noinline int live_slot(const struct alloc_key *key, int claim)
{
	struct live_block *b;
	__u32 home, idx;
	__u64 addr;

	if (!key)
		return -1;
	home = live_home(key);
	for (__u32 i = 0; i < LIVE_PROBES; i++) {
		idx = (home + i) & cfg.live_mask;
		b = bpf_map_lookup_elem(&allocs, &idx);
		if (!b)
			return -1;
		addr = b->key.addr;
		if (!claim) {
			if (addr == LIVE_EMPTY)
				return -1;
			if (live_match(b, key))
				return idx;
			continue;
		}
		if (addr > LIVE_GONE && !live_match(b, key))
			continue;
		if (__sync_val_compare_and_swap(&b->key.addr, addr, LIVE_BUSY) == addr)
			return idx;
	}
	return -1;
}

/* live_slot() as a pointer into the table, or NULL. */
static __always_inline struct live_block *live_block_of(const struct alloc_key *key, bool claim)
{
	int slot = live_slot(key, claim);
	__u32 idx = slot;

	return slot < 0 ? NULL : bpf_map_lookup_elem(&allocs, &idx);
}

/* Record a block; false when its path in the table is full. */
static __always_inline bool live_insert(const struct alloc_key *key, const struct alloc_info *info)
{
	struct live_block *b = live_block_of(key, true);

	if (!b)
		return false;
	b->key.tgid = key->tgid;
	b->key.gen = key->gen;
	b->info = *info;
	/* Published last, with a full barrier: who sees the address sees the block. */
	__sync_lock_test_and_set(&b->key.addr, key->addr);
	return true;
}

/*
 * Take @key's block out of the table into @info; false if it is not
 * there. Whoever turns its address into LIVE_GONE owns the release: the
 * loader may be dropping the same block.
 */
static __always_inline bool live_take(const struct alloc_key *key, struct alloc_info *info)
{
	struct live_block *b = live_block_of(key, false);

	if (!b)
		return false;
	*info = b->info;
	return __sync_val_compare_and_swap(&b->key.addr, key->addr, LIVE_GONE) == key->addr;
}

#endif
