// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/options.h"

/*
 * The BPF side compares a task's 16-byte name word by word under a mask
 * (bpf/procs.bpf.h, comm_chosen()): the bytes that count are the name's
 * and the NUL after it, as pgrep -x compares them, whatever follows.
 */
static void set_comm(struct alloctrace_config *cfg, const char *comm)
{
	char name[sizeof(cfg->comm)] = "";
	unsigned char mask[sizeof(cfg->comm_mask)] = {};

	snprintf(name, sizeof(name), "%s", comm);
	memset(mask, 0xff, strlen(name) + 1);
	memcpy(cfg->comm, name, sizeof(name));
	memcpy(cfg->comm_mask, mask, sizeof(mask));
}

void options__config(const struct options *o, pid_t pid, const struct cgroup_ref *cg,
		     struct alloctrace_config *cfg)
{
	bool multi = options__multi_proc(o);

	*cfg = (struct alloctrace_config){
	    .targ_tgid = multi ? 0 : pid,
	    .self_tgid = getpid(),
	    .multi_proc = multi,
	    .trace_all = o->all,
	    /* --all: a child's parent names it and lends it its mappings if it dies young. */
	    .follow_forks = o->follow_forks || o->all,
	    .block_ages = o->filter.min_age > 0,
	    .unwind_cfi = o->unwind_cfi,
	    .growth = o->growth,
	    .big_only = o->alloc.big_only,
	    .stack_depth = o->stack_depth ? o->stack_depth : DEFAULT_STACK_DEPTH,
	    .max_per_proc = o->max_per_proc,
	    .big_threshold = o->big,
	    .sample_rate = o->sample,
	    .cgroup_id = cg ? cg->id : 0,
	    .cgroup_level = cg ? cg->level : 0,
	    /* With one CPU a waiting thread would keep the loader from answering. */
	    .linkmap_wait_ns = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? LINKMAP_WAIT_NS : 0,
	};
	if (o->choice.comm)
		set_comm(cfg, o->choice.comm);
}
