/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CONFIG_H
#define ALLOCTRACE_CONFIG_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
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
#define MAX_MAP_ENTRIES	     (1U << 26)
#define MAX_RINGBUF_SIZE     (1U << 30)

struct map_sizes {
	__u32 allocs;	   /* live blocks */
	__u32 stacks;	   /* distinct stacks */
	__u32 ringbuf;	   /* bytes of alerts not yet read: a power of two, whole pages */
	__u32 unwind_rows; /* rows of CFI unwind tables, of every object together */
};

/* Most blocks --max-allocs may ask room for: the table is 48 bytes a slot, up front. */
#define MAX_LIVE_BLOCKS (1U << 24)

/*
 * The BPF side's settings: its read-only data (bpf/config.bpf.h), set in
 * one assignment before load so that the verifier drops the code a run
 * does not use.
 */
struct alloctrace_config {
	__u32 targ_tgid;       /* the one process, no map lookup (0: multi_proc, or any) */
	__u32 self_tgid;       /* alloctrace itself, never traced by --all */
	bool multi_proc;       /* several processes: the procs map says which */
	bool trace_all;	       /* --all: every process that calls the probed allocator */
	__u64 comm[2];	       /* --comm: only processes of this name, as 16 bytes */
	__u64 comm_mask[2];    /* ... of which these count: the name and its NUL (0: any) */
	__u64 cgroup_id;       /* --cgroup: only processes in this cgroup or below (0: any) */
	__u32 cgroup_level;    /* its depth under the root cgroup (level 0) */
	bool follow_forks;     /* the children of traced processes too */
	bool own_links;	       /* each process's probes its own: its end is told (EVENT_EXIT) */
	bool block_ages;       /* --min-age: note when each block was made (a clock read) */
	bool unwind_cfi;       /* walk stacks by the loader's CFI rows, not frame pointers */
	bool growth;	       /* --growth: pages first touched, not blocks; mappings alert only */
	bool big_only;	       /* --big-only: only big mappings and heap growth are recorded */
	__u32 stack_depth;     /* frames per stack, at most MAX_STACK_DEPTH */
	__u32 live_mask;       /* the live-block table's slots - 1 (set by the loader) */
	__u64 max_per_proc;    /* live blocks one process may hold, 0 = no cap (multi_proc) */
	__u64 big_threshold;   /* bytes of a big allocation, 0 = no alerts */
	__u64 sample_rate;     /* --sample: mean bytes between samples, 0 = record every one */
	__u64 linkmap_wait_ns; /* longest a thread waits in the loader's probe, 0: never */
	bool owner_only;       /* not root: --all takes up only processes whose ids are all */
	__u32 owner_uid;       /* ... this uid */
	__u32 owner_gid;       /* ... and this gid (the caller's real ones) */
};

/*
 * How long a thread that the dynamic loader's probe cannot hold in a
 * ptrace stop waits there, on its CPU, for its new objects' unwind tables
 * (bpf/linkmap.bpf.h): the tables of libLLVM, the biggest library met,
 * take 1.3 s to make.
 */
#define LINKMAP_WAIT_NS 2000000000ULL

#endif
