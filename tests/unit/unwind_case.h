/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A recorded stop of a real program, on which the BPF stack walker
 * (bpf/cfi.bpf.h, bpf/memo.bpf.h, compiled for user space) is replayed:
 * the registers, the stack memory the walk read, the process's executable
 * mappings with the unwind rows and page index entries the walk looked
 * up, and the frames it must find. tests/unit/unwind_cases/README.md
 * describes the file format and how to record one
 * (tests/drivers/unwind_record.c).
 */
#ifndef ALLOCTRACE_UNWIND_CASE_H
#define ALLOCTRACE_UNWIND_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "alloctrace.h"

/* What a case holds of an entry of the rows or of the page index. */
enum case_entry {
	ENTRY_ABSENT,
	ENTRY_HELD, /* known, not (yet) read by a walk */
	ENTRY_READ,
};

/* Memory of the process, as it was at the stop. */
struct case_memory {
	__u64 addr;
	__u32 len;
	__u8 *bytes;
};

/*
 * The registers a walk starts from (struct user_regs): x86-64's rip, rsp,
 * rbp; arm64's pc, sp, x29 and x30, the link register (lr, 0 on x86-64).
 */
struct case_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 lr;
};

struct unwind_case;
struct case_walk;

/* An architecture a case may be for, with the walker built for it (unwind_walk.c). */
struct case_arch {
	const char *name;    /* the "arch" line's: x86_64, arm64 */
	const char *regs[4]; /* the "regs" line's names of ip, sp, bp, lr; NULL past the last */
	int (*walk)(struct unwind_case *c, struct case_walk *out);
};

/* The architecture named @name, or NULL. */
const struct case_arch *case_arch__find(const char *name);

/* A pending return probe's instance (the kernel's struct return_instance). */
struct case_return {
	__u64 stack;
	__u64 orig;
	bool chained;
};

/*
 * Return probes pending on the thread: none in a recorded case (tramp 0);
 * test_unwind_replay puts some in.
 */
struct case_pending {
	__u64 tramp;
	struct case_return ret[4];
	__u32 nr;
	__u32 reads; /* instances the walk read */
};

struct unwind_case {
	const struct case_arch *arch; /* from the "arch" line, before "regs" */
	struct case_regs regs;
	struct case_pending pending;
	__u32 depth; /* cfg.stack_depth of the walk */
	struct unwind_proc proc;
	char *map_names[UNWIND_MAX_MAPPINGS]; /* "offset build-id path", kept for the reader */
	struct unwind_row *rows;
	__u32 *pages;
	__u8 *row_state; /* enum case_entry, per entry */
	__u8 *page_state;
	__u32 nr_rows; /* entries the arrays have room for */
	__u32 nr_pages;
	struct case_memory *mem; /* sorted by address, apart */
	size_t nr_mem;
	int mem_fd; /* recording: /proc/PID/mem, read instead of mem and noted in it; else -1 */
	/* What the walk must find. */
	__u64 frames[MAX_STACK_DEPTH];
	char *frame_notes[MAX_STACK_DEPTH]; /* the function, for the reader */
	__u32 nr_frames;
	__u32 flags;	  /* enum stack_flags of the stack */
	bool memo_recall; /* a second stop at the same place recalls the walk */
	char *notes;	  /* comment lines, kept as they are */
	__u32 absent;	  /* lookups of rows or pages the case does not hold */
};

/* What the walker did on a case. */
struct case_walk {
	struct stack_trace st;
	bool started;	       /* walk_cfi() said the walk could start */
	bool recalled;	       /* the same stop again recalled the remembered walk */
	bool recalled_changed; /* ... after a word the walk read had changed (must not) */
	bool recalled_stale;   /* ... after walk_gen moved on (must not) */
	__u32 misses;	       /* CNT_UNWIND_MISSES counted */
};

/* 0, or -errno with a message naming @path on stderr. */
int unwind_case__load(struct unwind_case *c, const char *path);
int unwind_case__save(const struct unwind_case *c, FILE *f);
void unwind_case__init(struct unwind_case *c);
void unwind_case__release(struct unwind_case *c);
/* Room for @nr_rows rows and @nr_pages page entries, all absent; 0 or -ENOMEM. */
int unwind_case__size(struct unwind_case *c, __u32 nr_rows, __u32 nr_pages);
/* Add memory the walk may read; 0 or -ENOMEM. */
int unwind_case__add_memory(struct unwind_case *c, __u64 addr, const void *bytes, __u32 len);
/* A "frame IP NOTE" line, added to the frames the walk must find: 0 or -EINVAL. */
int unwind_case__add_frame(struct unwind_case *c, const char *line);
/* Forget the rows and pages no walk read (before a recorded case is saved). */
void unwind_case__trim(struct unwind_case *c);

/*
 * Walk @c's stack with the BPF walker of its architecture, twice (the
 * second to recall it): 0, -ENOMEM, or -EINVAL for a case of no architecture.
 */
int unwind_case__replay(struct unwind_case *c, struct case_walk *out);
/* Each architecture's walker, as unwind_case__replay() calls it. */
int unwind_case__walk_x86(struct unwind_case *c, struct case_walk *out);
int unwind_case__walk_arm64(struct unwind_case *c, struct case_walk *out);

#endif
