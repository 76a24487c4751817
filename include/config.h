/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CONFIG_H
#define ALLOCTRACE_CONFIG_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * How the BPF object is configured before it is loaded. The command line
 * maps to this in one place (cli/), the loader (bpf/) applies it.
 */

/*
 * Capacities of the BPF maps, 0 for the default. The kernel's hash maps
 * allow 2^27 entries; the per-stack statistics take one more than the
 * stacks, and the loader keeps both under that. Live blocks: MAX_LIVE_BLOCKS.
 */
#define DEFAULT_MAX_ALLOCS   (1U << 20)
#define DEFAULT_MAX_STACKS   (1U << 16)
#define DEFAULT_RINGBUF_SIZE (256U << 10)
#define MAX_MAP_ENTRIES      (1U << 26)
#define MAX_RINGBUF_SIZE     (1U << 30)

struct map_sizes {
	__u32 allocs;	/* live blocks */
	__u32 stacks;	/* distinct stacks */
	__u32 ringbuf;	/* bytes of alerts not yet read: a power of two, whole pages */
	__u32 unwind_rows;	/* rows of CFI unwind tables, of every object together */
};

/* Most blocks --max-allocs may ask room for: the table is 48 bytes a slot, up front. */
#define MAX_LIVE_BLOCKS (1U << 24)

#endif
