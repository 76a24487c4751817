/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which processes are traced and as whom: one process by its tgid alone,
 * several through the procs map, which forks, execs and exits keep up to
 * date. And the counters, for the whole run and per process.
 */
#ifndef ALLOCTRACE_PROCS_BPF_H
#define ALLOCTRACE_PROCS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "alloctrace.h"
#include "config.bpf.h"

/* With several processes: the traced ones, by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_PROCS);
	__type(key, __u32);
	__type(value, struct proc_state);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * Who a call belongs to: the process, its program image and, with several
 * processes, its entry in the procs map (NULL with one).
 */
struct owner {
	struct proc_state *ps;
	__u32 tgid;
	__u32 gen;
};

/*
 * Count @delta for the whole run and, with several processes, for @ps's
 * process. The counts are u64s that wrap, so a count taken back (-1) keeps
 * the sums true.
 */
static __always_inline void count_by(struct proc_state *ps, enum counter idx, __s64 delta)
{
	__u32 key = idx;
	__u64 *val = bpf_map_lookup_elem(&counters, &key);

	if (val)
		*val += delta;
	if (ps && idx < CNT_MAX)
		__sync_fetch_and_add(&ps->counters[idx], delta);
}

static __always_inline void count_in(struct proc_state *ps, enum counter idx)
{
	count_by(ps, idx, 1);
}

static __always_inline struct proc_state *current_proc(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return cfg.multi_proc ? bpf_map_lookup_elem(&procs, &tgid) : NULL;
}

static __always_inline void count(enum counter idx)
{
	count_in(current_proc(), idx);
}

/* Without sampling every release of an unknown block is a fact worth counting. */
static __always_inline void count_untracked(struct proc_state *ps)
{
	if (!cfg.sample_rate)
		count_in(ps, CNT_UNTRACKED_FREES);
}

/*
 * Not root (cfg.owner_only): is @task the caller's, its real, effective and
 * saved ids all the caller's real ones, as the kernel's ptrace check asks
 * of a caller without CAP_SYS_PTRACE (user/proc/access.c)? A process that
 * runs a setuid program is not.
 */
static __always_inline bool owned(struct task_struct *task)
{
	const struct cred *c = BPF_CORE_READ(task, real_cred);
	__u32 u = cfg.owner_uid, g = cfg.owner_gid;

	return BPF_CORE_READ(c, uid.val) == u && BPF_CORE_READ(c, euid.val) == u &&
	       BPF_CORE_READ(c, suid.val) == u && BPF_CORE_READ(c, gid.val) == g &&
	       BPF_CORE_READ(c, egid.val) == g && BPF_CORE_READ(c, sgid.val) == g;
}

/*
 * --comm: is the current process's name, its main thread's, cfg.comm? Read
 * straight from the task as two words, each compared under the mask of
 * the bytes that count (user/cli/config.c): a string read through a helper
 * cost every call of every other process about 90 ns more.
 */
static __always_inline bool comm_chosen(void)
{
	const __u64 *name = (const __u64 *)bpf_get_current_task_btf()->group_leader->comm;

	return !((name[0] ^ cfg.comm[0]) & cfg.comm_mask[0]) &&
	       !((name[1] ^ cfg.comm[1]) & cfg.comm_mask[1]);
}

/*
 * --cgroup, --comm: is the current process one of those --all is narrowed
 * to? Its cgroup or one below it (the ancestor at the cgroup's level is
 * the cgroup itself), and its main thread's name, as pgrep -x matches it.
 */
static __always_inline bool chosen(void)
{
	if (cfg.owner_only && !owned((struct task_struct *)bpf_get_current_task()))
		return false;
	if (cfg.cgroup_id && bpf_get_current_ancestor_cgroup_id(cfg.cgroup_level) != cfg.cgroup_id)
		return false;
	return !cfg.comm_mask[0] || comm_chosen();
}

/* --all narrowed to some processes by --cgroup or --comm. */
static __always_inline bool chosen_only(void)
{
	return cfg.trace_all && (cfg.cgroup_id || cfg.comm_mask[0]);
}

/* @task's pid in the pid namespace it lives in, 0 in the first one. */
static __always_inline __u32 ns_pid_of(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid upid = {};

	if (level)
		bpf_core_read(&upid, sizeof(upid), &pid->numbers[level]);
	return upid.nr;
}

/*
 * --all: a process calls the allocator for the first time since attach,
 * or, narrowed by --cgroup or --comm, runs a program as one chosen.
 * @old: the exited process whose tgid it has now, whose keys it must not
 * take for its own.
 */
static __always_inline struct proc_state *new_proc(__u32 tgid, const struct proc_state *old)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct proc_state st = {.gen = old ? old->gen + 1 : 0}, *ps;

	st.ns_pid = ns_pid_of(task);
	BPF_CORE_READ_STR_INTO(&st.comm, task, group_leader, comm);
	/* Another of its threads may come first: that entry is as good. */
	bpf_map_update_elem(&procs, &tgid, &st, old ? BPF_ANY : BPF_NOEXIST);
	ps = bpf_map_lookup_elem(&procs, &tgid);
	if (!ps)
		count_in(NULL, CNT_LOST_PROCS);
	return ps;
}

/*
 * Can the calling process be traced at all? No map lookup, for programs
 * that run on every syscall of every process: with one target it is the
 * whole answer, and the others must go on to owner_of().
 */
static __always_inline bool maybe_traced(__u64 pid_tgid)
{
	return cfg.multi_proc || !cfg.targ_tgid || pid_tgid >> 32 == cfg.targ_tgid;
}

/*
 * Is the calling process traced, and as whom? An exited entry still
 * waiting for its last report does not count: its tgid is another
 * process's now, which --all takes up under a new image number.
 */
static __always_inline bool owner_of(__u64 pid_tgid, struct owner *o)
{
	o->tgid = pid_tgid >> 32;
	o->gen = 0;
	o->ps = NULL;
	if (!cfg.multi_proc)
		return maybe_traced(pid_tgid);
	o->ps = bpf_map_lookup_elem(&procs, &o->tgid);
	if (o->ps && !(o->ps->flags & PROC_EXITED)) {
		o->gen = o->ps->gen;
		return true;
	}
	if (!cfg.trace_all || o->tgid == cfg.self_tgid || !chosen())
		return false;
	o->ps = new_proc(o->tgid, o->ps);
	if (!o->ps)
		return false;
	o->gen = o->ps->gen;
	return true;
}

/* Is @task's process traced? *@ps: its entry, with several processes. */
static __always_inline bool traced_task(struct task_struct *task, struct proc_state **ps)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	*ps = NULL;
	if (!cfg.multi_proc)
		return cfg.targ_tgid && tgid == cfg.targ_tgid;
	*ps = bpf_map_lookup_elem(&procs, &tgid);
	return *ps && !((*ps)->flags & PROC_EXITED);
}

/*
 * Trace @ctgid (@child), a child of the traced process @ptgid (entry @pps). A
 * recycled tgid whose last report is pending keeps its keys apart.
 */
static __always_inline void proc_adopt(__u32 ptgid, const struct proc_state *pps,
				       struct task_struct *child, __u32 ctgid)
{
	struct proc_state *old = bpf_map_lookup_elem(&procs, &ctgid), st = {};

	st.gen = old ? old->gen + 1 : 0;
	st.parent = ptgid;
	st.ns_pid = ns_pid_of(child);
	__builtin_memcpy(st.comm, pps->comm, sizeof(st.comm));
	if (bpf_map_update_elem(&procs, &ctgid, &st, BPF_ANY))
		count_in(NULL, CNT_LOST_PROCS);
}

/*
 * @task's process (entry @ps) runs a new program: a new image number keeps
 * the old one's blocks from matching the new program's frees. 0 or -errno.
 */
static __always_inline long proc_new_image(struct task_struct *task, __u32 tgid,
					   const struct proc_state *ps)
{
	struct proc_state st = {
	    .gen = ps->gen + 1, .parent = ps->parent, .flags = PROC_EXECED, .ns_pid = ps->ns_pid};

	BPF_CORE_READ_STR_INTO(&st.comm, task, comm);
	return bpf_map_update_elem(&procs, &tgid, &st, BPF_EXIST);
}

#endif
