/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_UNWINDER_H
#define ALLOCTRACE_UNWINDER_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The loader's half of CFI unwinding: builds each mapped object's unwind
 * rows once (keyed by build id, so processes share them), appends them to
 * the BPF row and page arrays, adding chunks to them as they fill, and
 * gives each traced process its table of executable mappings.
 */
struct unwinder;

struct unwinder_opts {
	size_t sz;	    /* sizeof(struct unwinder_opts), so the struct can grow */
	int rows_fd;	    /* BPF array of maps: chunks of struct unwind_row */
	int pages_fd;	    /* BPF array of maps: chunks of __u32, the page index */
	int procs_fd;	    /* BPF hash: tgid -> struct unwind_proc */
	uint32_t max_rows;  /* at most the outer map's chunks times UNWIND_CHUNK_ENTRIES */
	uint32_t max_pages; /* likewise */
	/* Bumped after each change to the tables: BPF forgets the walks it remembered. */
	__u64 *walk_gen;
};

/* NULL with errno set. */
struct unwinder *unwinder__new(const struct unwinder_opts *opts);
void unwinder__free(struct unwinder *u);

/*
 * Read @pid's mappings (again) and give it tables for every executable
 * object in them; objects without usable CFI get none, and their frames
 * are walked by frame pointers. 0, -ENOENT for a process without any
 * (a kernel thread), -ESRCH when it is gone, or -errno.
 */
int unwinder__add_process(struct unwinder *u, pid_t pid);

/* How many objects got no rows because the tables were full. */
uint32_t unwinder__nr_full(const struct unwinder *u);

/*
 * How many mappings of code were left without rows because the file
 * there was not the one mapped or no regular file (mapping__open()).
 */
uint32_t unwinder__nr_unopened(const struct unwinder *u);

/* Kernel memory the rows and page index take, chunks made so far. */
uint64_t unwinder__bytes(const struct unwinder *u);

/* Drop @pid's table of mappings: it exited or became another program. */
void unwinder__forget_process(struct unwinder *u, pid_t pid);

#endif
