/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_TRACER_H
#define ALLOCTRACE_TRACER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "alloctrace.h"
#include "allocator.h"
#include "profile.h"

/* The BPF side: programs, maps and the probes attached to one allocator. */
struct tracer;

/*
 * Capacities of the BPF maps, 0 for the default. The kernel's hash maps
 * allow 2^27 entries; the per-stack statistics take one more than the
 * stacks, and the loader keeps both under that.
 */
#define DEFAULT_MAX_ALLOCS   (1U << 20)
#define DEFAULT_MAX_STACKS   (1U << 16)
#define DEFAULT_RINGBUF_SIZE (256U << 10)
#define MAX_MAP_ENTRIES      (1U << 26)
#define MAX_RINGBUF_SIZE     (1U << 30)

struct map_sizes {
	uint32_t allocs;	/* live blocks */
	uint32_t stacks;	/* distinct stacks */
	uint32_t ringbuf;	/* bytes of alerts not yet read: a power of two, whole pages */
};

typedef void (*big_alloc_fn)(void *ctx, const struct big_alloc_event *ev);
typedef void (*oom_fn)(void *ctx, const struct oom_event *ev);

struct tracer_opts {
	size_t sz;		/* sizeof(struct tracer_opts), so the struct can grow */
	pid_t pid;
	uint64_t big_threshold;	/* 0 = no big-allocation events */
	unsigned int stack_depth;
	uint64_t sample_rate;	/* 0 = record every allocation */
	struct map_sizes sizes;
	big_alloc_fn on_big_alloc;
	oom_fn on_oom;		/* the OOM killer chose the target */
	void *ctx;
};

/*
 * Can this process load BPF programs and attach uprobes on this kernel?
 * 0, or -EPERM / -EOPNOTSUPP after printing what is missing.
 */
int tracer__check_system(void);

/* Open, configure and load. NULL with errno set; the cause is printed. */
struct tracer *tracer__open(const struct tracer_opts *opts);
void tracer__free(struct tracer *t);

/*
 * Attach every probe of @a; on failure nothing stays attached. 0 or
 * -errno, -ESRCH when the target exited meanwhile.
 */
int tracer__attach(struct tracer *t, const struct allocator *a);
size_t tracer__nr_probes(const struct tracer *t);

/*
 * The target became another program: detach every probe and forget what
 * was recorded, since its old address space is gone. The target must be
 * stopped. 0 or -errno.
 */
int tracer__reset(struct tracer *t);

/* Read the maps into @p (cleared first). 0 or -errno. */
int tracer__collect(struct tracer *t, struct profile *p);

/*
 * Call @fn for every live block the maps hold, in batches; stops at the
 * first non-zero return of @fn, which it returns. 0 or -errno.
 */
typedef int (*block_fn)(void *ctx, uint64_t addr, const struct alloc_info *info);
int tracer__for_each_block(struct tracer *t, block_fn fn, void *ctx);

/* The ring buffer's fd to poll, and handing its events to on_big_alloc. */
int tracer__events_fd(const struct tracer *t);
int tracer__consume(struct tracer *t);

#endif
