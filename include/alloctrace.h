/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF programs and the loader share: map keys and values, event
 * layouts, counter indexes and the allocator function ids. Nothing else
 * belongs here.
 */
#ifndef ALLOCTRACE_H
#define ALLOCTRACE_H

/* BPF code gets the __u types from vmlinux.h, user space from the uapi. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "arch.h"

/* The kernel's own ceiling (perf_event_max_stack defaults to 127). */
#define MAX_STACK_DEPTH	    127
#define DEFAULT_STACK_DEPTH 64

/* Sampling gaps the loader draws for the BPF side (a power of two). */
#define SAMPLE_DRAWS 1024

/* Stack id 0 means "no stack": the capture failed or the map was full. */
#define STACK_ID_NONE 0

/*
 * Allocator entry points, one line each in alloc_funcs.def, which says
 * what each one is: its group, its kind, how its arguments are read, its
 * symbol.
 */
enum alloc_func {
#define ALLOC_FUNC(id, group, kind, nr_args, args, symbol, display) FUNC_##id,
#include "alloc_funcs.def"
#undef ALLOC_FUNC
	FUNC_MAX,
};

/* The loader keeps a set of functions in a 64-bit mask, the BPF side each kind's. */
_Static_assert(FUNC_MAX <= 64, "a bit per enum alloc_func must fit in 64 bits");

/* How a function's arguments are read (arg_shapes.def, alloc_funcs.def's args). */
enum arg_shape {
#define ALLOC_SHAPE(id, entry, reads)	ARGS_##id,
#define RELEASE_SHAPE(id, entry, reads) ARGS_##id,
#include "arg_shapes.def"
#undef ALLOC_SHAPE
#undef RELEASE_SHAPE
	NR_ARG_SHAPES, /* also the shape of an id no line has: it reads nothing */
};

/* How many arguments each shape reads. */
enum {
#define ALLOC_SHAPE(id, entry, reads)	ARGS_##id##_READS = (reads),
#define RELEASE_SHAPE(id, entry, reads) ARGS_##id##_READS = (reads),
#include "arg_shapes.def"
#undef ALLOC_SHAPE
#undef RELEASE_SHAPE
};

/* Placement keeps a function's nr_args readable: its shape must read no more. */
#define ALLOC_FUNC(id, group, kind, nr_args, args, symbol, display)                                \
	_Static_assert((nr_args) >= ARGS_##args##_READS, #id ": its args read past its nr_args");
#include "alloc_funcs.def"
#undef ALLOC_FUNC

/* Which objects and options probe a function (alloc_funcs.def). */
enum func_group {
	FUNC_GROUP_C,
	FUNC_GROUP_CXX,
	FUNC_GROUP_MMAP,
	FUNC_GROUP_BRK,
};

/* What a function does with blocks (alloc_funcs.def). */
enum func_kind {
	FUNC_KIND_ALLOCS,
	FUNC_KIND_REALLOCS,
	FUNC_KIND_FREES,
	FUNC_KIND_HELD_FREES,
};

/*
 * A probe's BPF cookie: the function id in its low 16 bits; in the next 16
 * an entry probe's stack adjustment (placement moved it past code that
 * moves the stack pointer: the probe's plus this is the call's); above
 * them 5 bits per argument, the register the entry program reads it from
 * (x86 by encoding: rax 0, rcx 1, ... r15 15; arm64 x0-x30), XORed with
 * the one the ABI passes it in (ABI_ARG_REG, arch.h), so that a cookie of
 * the id alone reads each argument where the call put it. Placement may
 * move a probe past code that copies an argument to another register and
 * reuses the first.
 * A return program's cookie has COOKIE_AT_RET where it sits on a return
 * instruction, not at a return probe's trampoline.
 */
#define COOKIE_FUNC(c)	    ((__u32)(c)&0xffff)
#define COOKIE_SP_SHIFT	    16
#define COOKIE_SP_ADJUST(c) ((__u32)(c) >> COOKIE_SP_SHIFT)
#define COOKIE_AT_RET	    (1ULL << 62)
/* An entry probe on an instruction the kernel single-steps: its calls are counted. */
#define COOKIE_STEPPED	    (1ULL << 63)
#define COOKIE_ARGS	    6
#define COOKIE_ARG_BITS	    5
#define COOKIE_ARG_MASK	    ((1U << COOKIE_ARG_BITS) - 1)
#define COOKIE_ARG_SHIFT(i) (32 + COOKIE_ARG_BITS * (i))
_Static_assert(COOKIE_ARG_SHIFT(COOKIE_ARGS) <= 62, "COOKIE_AT_RET above the arguments");

/*
 * Per-CPU counters, one line each in counters.def. Everything the tool
 * could not record is counted under one of the LOST_* names so that every
 * report can say so.
 */
enum counter {
#define COUNTER(id, name, kind, reason) CNT_##id,
#include "counters.def"
#undef COUNTER
	CNT_MAX,
};

/* What a counter says of a report (counters.def). */
enum counter_kind {
	CNT_KIND_PLAIN,
	CNT_KIND_LOST,
	CNT_KIND_UNKNOWN_STACK,
	CNT_KIND_STACK,
};

/*
 * A block a traced process holds, as the live-allocation table knows it.
 * @gen tells the program images of one process apart: an exec leaves the
 * old image's blocks behind, never to be freed.
 */
struct alloc_key {
	__u64 addr;
	__u32 tgid;
	__u32 gen;
};

struct alloc_info {
	__u64 size;
	__u64 stack_id;
	__u64 time_ns; /* with --min-age only */
	__u32 tid;
	__u32 func; /* --growth's pages: 0, or PAGE_UNCLASSIFIED */
};

/* A page first touched while its mapping could not be looked up: the loader classifies it. */
#define PAGE_UNCLASSIFIED 1

/*
 * A slot of the live-allocation table (open addressing in an array): a
 * block, or one of these in key.addr, which no block's address can be.
 */
#define LIVE_EMPTY 0 /* never used: a search for a block ends here */
#define LIVE_GONE  1 /* its block was released: reused by the next block on its path */
#define LIVE_BUSY  2 /* claimed by a probe that is writing its block */
/* Slots a block may be placed at or looked for in, from its home slot on. */
#define LIVE_PROBES 32

struct live_block {
	struct alloc_key key;
	struct alloc_info info;
};

/* Key of the per-stack statistics map. */
struct stack_key {
	__u64 stack_id;
	__u32 tgid;
	__u32 gen;
};

/* The per-process map's limit: more processes than any one report can show. */
#define MAX_PROCS 16384

#define PROC_EXITED 1
#define PROC_EXECED 2 /* runs another program than the one it was forked as */

/*
 * Value of the per-process map (key: tgid), used when several processes
 * are traced: which ones, their counters, and what the loader cannot read
 * once they are gone.
 */
struct proc_state {
	__u64 counters[CNT_MAX]; /* this process's share of the counters */
	__u64 live;		 /* its blocks in the live-allocation map */
	__u32 gen;		 /* its program image: bumped at each exec */
	__u32 parent;		 /* the traced process it was forked from, or 0 */
	__u32 flags;		 /* PROC_EXITED, PROC_EXECED */
	__s32 exit_code;	 /* as wait(2) reports it, once exited */
	__u32 ns_pid;		 /* its pid in its own pid namespace, 0 in the first one */
	char comm[16];		 /* its main thread's name */
};

/*
 * What the per-stack statistics map counts, per CPU: only ever added to,
 * two atomic adds at each end of a block's life. What is outstanding is
 * the loader's subtraction.
 */
struct stack_counts {
	__u64 allocs;
	__u64 alloc_bytes;
	__u64 frees;
	__u64 freed_bytes;
};

/* What a stack walk says of the stack it returns (stack_trace.flags). */
enum stack_flags {
	STACK_CUT = 1 << 0,	  /* stopped before the outermost frame */
	STACK_TRUNCATED = 1 << 1, /* stopped at the depth limit */
	STACK_FP = 1 << 2,	  /* some frames came from frame pointers, not CFI */
};

/*
 * Value of the stack map, keyed by a 64-bit hash of the frames. The map's
 * value size is cut to the configured depth at load time, so only the
 * first entries of ips[] exist there.
 */
struct stack_trace {
	__u32 nr;
	__u32 flags;
	__u64 ips[MAX_STACK_DEPTH];
};

/*
 * --growth counts pages of this size; a page recorded at sampling period P
 * is recorded as P of them (bpf/faults.bpf.h).
 */
#define GROWTH_PAGE_SIZE 4096ULL

/*
 * CFI unwinding (x86-64). The loader turns each object's .eh_frame into
 * rows, one per address range with its own rule, sorted by address, with
 * an index of the row in effect at the start of each "page" of text; the
 * BPF side finds a frame's row with two lookups and a short binary search.
 * Index pages are 256 bytes, so that the search takes a few steps.
 */
#define UNWIND_PAGE_SHIFT 8

/*
 * The rows and the page index are each an array of map-in-map "chunks" of
 * 64K entries: the loader adds a chunk when the objects it loads need one,
 * so kernel memory follows what the traced processes map. Entry i is in
 * chunk i >> UNWIND_CHUNK_SHIFT.
 */
#define UNWIND_CHUNK_SHIFT   16
#define UNWIND_CHUNK_ENTRIES (1U << UNWIND_CHUNK_SHIFT)

/* How to find the caller's frame (unwind_row.kind). */
enum unwind_kind {
	UNWIND_NONE,	/* no CFI here: frame pointers are all there is */
	UNWIND_CFA_SP,	/* CFA = sp + cfa_off */
	UNWIND_CFA_FP,	/* CFA = the frame pointer (rbp, x29) + cfa_off */
	UNWIND_CFA_PLT, /* an x86-64 PLT stub: CFA = rsp + 8, or + 16 past its push */
	UNWIND_END,	/* the outermost frame (_start, a thread's first) */
	/*
	 * The sigreturn trampoline (libc's __restore_rt, the vdso's
	 * __kernel_rt_sigreturn, its CIE marked 'S'): the interrupted registers are in the kernel's
	 * signal frame at the CFA the handler returned to (bpf/arch.bpf.h), not in rules.
	 */
	UNWIND_SIGFRAME,
};

/*
 * unwind_row.ra_off: the return address is at CFA + 8 * ra_off; or, where
 * it is UNWIND_RA_LR, still in the link register (arm64's x30 before the
 * prologue saves it); or, where UNWIND_RA_RECORD, in the word after the
 * saved frame pointer, a frame record {fp, return address} anywhere in the
 * frame (arm64's stp x29, x30); or, where UNWIND_RA_SP, at sp + 8 * fp_off,
 * the frame pointer not saved: arm64's GCC saves x30 (with x19, say) at
 * the bottom of a frame, too far below the CFA for these 5 bits in any
 * frame with more than 120 bytes (run_plugin's 4 KiB buffer: CFA - 4104,
 * sp + 8); or, where UNWIND_RA_SP_RECORD, a frame record {fp, return
 * address} at sp + 8 * fp_off, as glibc's _dl_get_origin keeps x29 and x30
 * at the bottom of 4144 bytes. x86-64's is always -1.
 */
#define UNWIND_RA_LR	    0
#define UNWIND_RA_RECORD    -16
#define UNWIND_RA_SP	    15
#define UNWIND_RA_SP_RECORD 14
#define UNWIND_RA_MIN	    -15
#define UNWIND_RA_MAX	    13

/*
 * One rule of the call frame information, in 8 bytes: the caller's frame
 * pointer (rbp, x29), when saved, at CFA + 8 * fp_off; the return address
 * where ra_off says (above).
 */
struct unwind_row {
	__u32 pc;	 /* from the table's base; the row holds until the next one */
	__u8 kind : 3;	 /* enum unwind_kind */
	__s8 ra_off : 5; /* UNWIND_RA_LR, _RECORD, _SP or in UNWIND_RA_MIN..MAX */
	/* 0: the frame pointer is not saved here, the caller's is the same; UNWIND_RA_SP*: from sp
	 */
	__s8 fp_off;
	__s16 cfa_off; /* in units of 8 bytes */
};

_Static_assert(sizeof(struct unwind_row) == 8, "a row stays 8 bytes (README's memory figures)");
_Static_assert(UNWIND_SIGFRAME < 8, "enum unwind_kind fits unwind_row.kind's 3 bits");

/* An executable mapping of a traced process and the rows for its object. */
struct unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 table_base; /* the address unwind_row.pc counts from */
	__u32 page_first; /* its first entry in the page index */
	__u32 nr_pages;	  /* 0: no rows (JIT, vdso, no CFI): frame pointers */
};

#define UNWIND_MAX_MAPPINGS 256

/*
 * Per process: its executable mappings, sorted by start. A frame outside
 * them makes BPF ask the loader to read them again, once until the loader
 * writes a new table (which clears .asked), or again a second later if the
 * mappings had not changed.
 */
struct unwind_proc {
	__u32 nr;
	__u32 asked;
	__u64 asked_ns;
	struct unwind_mapping maps[UNWIND_MAX_MAPPINGS];
};

/* What the ring buffer carries; every event starts with its type. */
enum event_type {
	EVENT_BIG_ALLOC = 1,
	EVENT_OOM_VICTIM,  /* the kernel's OOM killer chose the target */
	EVENT_EXEC,	   /* a traced process runs a new program */
	EVENT_UNWIND_MISS, /* a process ran code without unwind tables */
	EVENT_LINKMAP,	   /* a process's dynamic loader mapped or unmapped objects */
	EVENT_EXIT,	   /* a traced process ended (cfg.multi_proc) */
	EVENT_PAGE,	   /* --growth: a first touch whose mapping was busy */
};

/*
 * The signal the dynamic loader's probe (bpf/linkmap.bpf.h) sends a thread
 * of a launched command to hold it in a ptrace stop while its new
 * objects' unwind tables are made: SIGURG, ignored unless handled, so that
 * one that reached the thread untraced would do nothing.
 */
#define LINKMAP_HOLD_SIGNAL 23

/* A big allocation, sent as it happens. */
struct big_alloc_event {
	__u32 type;
	__u32 tgid;
	__u64 time_ns;
	__u64 size;
	__u64 addr;
	__u32 tid;
	__u32 func;
	struct stack_trace stack;
};

/* EVENT_OOM_VICTIM, EVENT_EXEC, EVENT_LINKMAP and EVENT_EXIT. */
struct task_event {
	__u32 type;
	__u32 tgid;
	__u64 time_ns;
};

/* @ip lies outside the mappings the loader gave @tgid's unwind tables for. */
struct unwind_miss_event {
	__u32 type;
	__u32 tgid;
	__u64 ip;
};

/* EVENT_PAGE: the loader classifies the page at once, while its mapping is there to read. */
struct page_event {
	__u32 type;
	__u32 tgid;
	__u64 addr;
	__u32 gen;
	__u32 pad;
};

#endif /* ALLOCTRACE_H */
