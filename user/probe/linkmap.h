/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_LINKMAP_H
#define ALLOCTRACE_LINKMAP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The objects of a process's main link map, read from its memory through
 * the dynamic loader's r_debug: the order in which symbol lookup visits
 * them (the executable, LD_PRELOAD objects, then libraries as loaded).
 */
struct link_names {
	char **names; /* paths as the loader opened them; [0] is "" (the executable) */
	size_t nr;
};

/* 0, -ENOENT when the process has no link map (static, or too early), or -errno. */
int link_names__read(pid_t pid, struct link_names *out);
void link_names__release(struct link_names *ln);

/*
 * Where a process's dynamic loader tells debuggers of each change to its
 * link map: r_debug.r_brk, the function (glibc's and musl's
 * _dl_debug_state) it calls before and after a change, with r_state saying
 * which (<link.h>).
 */
struct link_watch {
	char path[PATH_MAX]; /* the loader's file, through /proc/PID/map_files */
	char name[PATH_MAX]; /* its path as the process maps it, for messages */
	uint64_t offset;     /* r_brk's file offset */
	int64_t to_state;    /* from r_brk to r_debug.r_state, in the process's memory */
};

/* 0, -ENOENT for a process without a dynamic loader (or before it set r_debug), or -errno. */
int link_watch__find(pid_t pid, struct link_watch *w);

#endif
