/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CHOOSE_H
#define ALLOCTRACE_CHOOSE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest name --comm takes: the kernel keeps 15 bytes of a program's name. */
#define COMM_MAX 15

/*
 * Which processes --all is narrowed to: those in a cgroup v2 or below it,
 * those of a name, or both. NULL members do not narrow.
 */
struct proc_choice {
	const char *cgroup; /* --cgroup: the cgroup's directory */
	const char *comm;   /* --comm: the name, as pgrep -x matches it */
};

/* A cgroup as the BPF side tells it: bpf_get_current_ancestor_cgroup_id(level) == id. */
struct cgroup_ref {
	uint64_t id;	/* its directory's inode number */
	uint32_t level; /* its depth under the root cgroup, which is 0 */
};

/* Whether --cgroup or --comm narrows the processes at all. */
static inline bool proc_choice__narrows(const struct proc_choice *c)
{
	return c->cgroup || c->comm;
}

/*
 * The cgroup v2 directory @path into @cg. 0 or -errno, after one line
 * saying what is wrong with @path.
 */
int cgroup__resolve(const char *path, struct cgroup_ref *cg);

/*
 * Call @fn for every running process @c chooses but @self: the processes
 * of its cgroup and those below it, or of the whole system, of its name if
 * it has one. Stops at @fn's first non-zero return and returns it; 0 or
 * -errno otherwise.
 */
int proc_choice__for_each(const struct proc_choice *c, pid_t self, int (*fn)(void *ctx, pid_t pid),
			  void *ctx);

#endif
