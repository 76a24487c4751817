/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_HEAPWALK_H
#define ALLOCTRACE_HEAPWALK_H

#include "leakcheck/classify.h"
#include "leakcheck/roots.h"
#include "proc/procmaps.h"

/*
 * glibc's heap (x86-64, glibc 2.32 and later: tcache with a key, safe
 * linking): the main arena's [heap] and each thread arena's 64 MiB heaps.
 * Walking the chunk headers tells in-use chunks from free ones; chunks
 * in a tcache or a fastbin look in use there and are found on their lists
 * instead. Out: @arenas, the memory walked, and @inuse, the in-use chunks
 * no tracked block is in (allocated before the tracer attached, or by
 * glibc itself), which are roots. Adds LEAK_ASSUME_* bits to @assume.
 * 0 or -errno.
 */
int glibc_heap__walk(const struct leak_memory *mem, const struct proc_maps *maps,
		     const struct classifier *tracked, struct range_set *arenas,
		     struct range_set *inuse, unsigned int *assume);

#endif
