/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_LINKMAP_H
#define ALLOCTRACE_LINKMAP_H

#include <stddef.h>
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

#endif
