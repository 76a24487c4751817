// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include "probe/alloc_choice.h"
#include "probe/allocator.h"

void alloc_choice__init(struct alloc_choice *c, const struct allocator_opts *opts)
{
	*c = (struct alloc_choice){
	    .mmap = opts->mmap,
	    .big_only = opts->big_only,
	    .allocator = -1,
	    .mmap_entry = -1,
	};
}

/*
 * --big-only: can the big blocks of a process whose mmap calls reach @obj
 * be seen at its mmap, munmap, mremap and brk? Only in glibc, whose
 * malloc reaches the kernel through exactly these (its internal __mmap,
 * __munmap, __mremap and __brk are the exported functions' addresses, and
 * its sbrk calls brk) and makes no such system call inline. musl's
 * malloc calls brk inline; a static program may have no symbols: there
 * the system-call tracepoints serve instead. NULL when it can, else why not.
 */
static const char *big_unusable(const struct alloc_candidate *obj)
{
	if (!obj->defines[FUNC_MMAP] || !obj->defines[FUNC_MUNMAP] || !obj->defines[FUNC_MREMAP] ||
	    !obj->defines[FUNC_BRK])
		return "no mmap, munmap, mremap and brk to probe for --big-only";
	if (!obj->glibc)
		return "not known as glibc (no gnu_get_libc_version), whose malloc makes no inline "
		       "mmap or brk";
	return NULL;
}

/* The index of the entry of the object being looked at, made on its first use. */
static long entry_of(struct alloc_choice *c, struct alloc_take *take)
{
	if (!take->entry) {
		take->entry = true;
		c->nr_entries++;
	}
	return (long)c->nr_entries - 1;
}

struct alloc_take alloc_choice__object(struct alloc_choice *c, const struct alloc_candidate *obj)
{
	struct alloc_take take = {.entry = false};

	/* --big-only: the allocator's objects name its frames, but are not probed. */
	if (c->allocator < 0 && obj->defines[FUNC_MALLOC] && obj->defines[FUNC_FREE]) {
		c->allocator = entry_of(c, &take);
		if (!c->big_only)
			take.sets |= 1u << SITES_ALLOCATOR;
	}
	/* The first operator new in lookup order is the one calls reach. */
	if (!c->new_seen && obj->defines[FUNC_NEW] && !c->big_only) {
		c->new_seen = true;
		if (!take.entry) {
			entry_of(c, &take);
			take.sets |= 1u << SITES_NEW;
		}
	}
	if ((c->mmap || c->big_only) && c->mmap_entry < 0 && obj->defines[FUNC_MMAP]) {
		c->mmap_entry = entry_of(c, &take);
		if (!c->big_only)
			take.sets |= 1u << SITES_MMAP;
		else if (!(take.why_not_big = big_unusable(obj)))
			take.sets |= 1u << SITES_BIG;
	}
	return take;
}

static bool complete(const struct alloc_choice *c)
{
	return c->allocator >= 0 && (!(c->mmap || c->big_only) || c->mmap_entry >= 0);
}

/* Past the allocator only for operator new (C programs have none), never probed by --big-only. */
bool alloc_choice__finished(const struct alloc_choice *c)
{
	return complete(c) && (c->new_seen || c->big_only);
}

int alloc_choice__verdict(const struct alloc_choice *c, bool final)
{
	/* A static executable may have no mmap symbol: go on without. */
	return complete(c) || (c->allocator >= 0 && final) ? 0 : -ENOENT;
}
