/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What bpf/cfi.bpf.h and bpf/memo.bpf.h take from the kernel and from the
 * rest of the BPF object, given in user space over a recorded case
 * (unwind_walk.c), so that the walker's own source compiles with the host
 * compiler (-DUNWIND_REPLAY). Map definitions keep libbpf's shape (a map
 * is a struct of pointer members), so they compile as they are; the
 * helpers are functions of unwind_walk.c, which answer from the case.
 */
#ifndef ALLOCTRACE_REPLAY_ENV_H
#define ALLOCTRACE_REPLAY_ENV_H

#include <linux/types.h>
#include <stdbool.h>
#include "alloctrace.h"
#include "config.h"

#define SEC(name)
/* glibc's <sys/cdefs.h> has the same. */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define __noinline	   __attribute__((noinline))
#define __uint(name, val)  int(*name)[val]
#define __type(name, val)  typeof(val) *name
#define __array(name, val) typeof(val) *name[]

/* Map types and flags: only spelled, never read, in user space. */
enum {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY,
	BPF_MAP_TYPE_PERCPU_ARRAY,
	BPF_MAP_TYPE_ARRAY_OF_MAPS,
	BPF_MAP_TYPE_TASK_STORAGE,
	BPF_F_NO_PREALLOC = 1,
	BPF_F_MMAPABLE = 1 << 10,
	BPF_ANY = 0,
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

void *bpf_map_lookup_elem(void *map, const void *key);
long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags);
long bpf_map_delete_elem(void *map, const void *key);
/* Reads the case's recorded memory: a range it does not hold fails, as unmapped memory does. */
long bpf_probe_read_user(void *dst, __u32 size, const void *unsafe_ptr);
/* Calls @callback_fn(i, @ctx) for i < @nr until it returns non-zero, as the kernel does. */
long bpf_loop(__u32 nr, void *callback_fn, void *ctx, __u64 flags);
__u64 bpf_ktime_get_ns(void);
__u64 bpf_get_current_pid_tgid(void);
void *bpf_get_current_task_btf(void);
void *bpf_task_storage_get(void *map, void *task, void *value, __u64 flags);

/* The kernel's return probes pending on the walk's thread (cfi.bpf.h), as the case has them. */
struct pending_return;
__u64 uretprobe_trampoline(void);
__u64 uretprobe_first(void);
void uretprobe_read(__u64 at, struct pending_return *out);

/* The rest of the BPF object, as far as the walk uses it. */
struct proc_state;
extern struct alloctrace_config cfg;
struct proc_state *current_proc(void);
void count(enum counter idx);
void send_event(void *ev, __u64 size, struct proc_state *ps);

#endif
