/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_LEAKCHECK_H
#define ALLOCTRACE_LEAKCHECK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct arch_regs;

/*
 * Leak verdicts for the live blocks of a running process: which of them
 * the program can still reach, by valgrind memcheck's definitions. The
 * target is stopped only while its registers are read and a copy-on-write
 * child is forked from it; the scan reads the child.
 */

/* Valgrind's classes, best first. */
enum leak_class {
	LEAK_REACHABLE, /* a chain of start pointers from a root */
	LEAK_POSSIBLE,	/* reached only through an interior pointer somewhere */
	LEAK_INDIRECT,	/* pointed to only from lost blocks */
	LEAK_DEFINITE,	/* no pointer to it from a root or a reached block */
	LEAK_CLASSES
};

const char *leak_class__name(enum leak_class cls);

/*
 * valgrind's --leak-check-heuristics: a block known only through an
 * interior pointer of one of these shapes is reachable, as valgrind's
 * default (all) has it.
 */
enum leak_heuristic {
	LEAK_HEUR_NONE,
	LEAK_HEUR_STDSTRING,		/* libstdc++'s reference-counted std::string */
	LEAK_HEUR_LENGTH64,		/* an 8-byte length of the rest before the data */
	LEAK_HEUR_NEWARRAY,		/* new T[n]'s element count before the elements */
	LEAK_HEUR_MULTIPLE_INHERITANCE, /* a second base class's vtable pointer */
	/*
	 * alloctrace's own, not valgrind's: an allocator wrapper's header,
	 * declared (--leak-check-wrapper) or learned, the pointer it returned
	 */
	LEAK_HEUR_WRAPPER,
	LEAK_HEURISTICS
};

/* valgrind's four, its default; the wrapper's is on only for declared or learned wrappers. */
#define LEAK_HEUR_ALL (((1u << LEAK_HEUR_WRAPPER) - 1) & ~(1u << LEAK_HEUR_NONE))

/* valgrind's name of each (LEAK_HEUR_NONE: "none"). */
const char *leak_heuristic__name(enum leak_heuristic h);

/* "all", "none" or a comma-separated list of names into *@set: 0 or -EINVAL. */
int leak_heuristics__parse(const char *list, unsigned int *set);

/*
 * --leak-check-wrapper FUNC:OFFSET: an allocator wrapper @func that calls
 * the allocator itself and returns the block + @offset, past a header of
 * its own (MariaDB's my_malloc), so that the caller holds that pointer.
 */
struct leak_wrapper {
	const char *func; /* its first @len bytes */
	size_t len;
	uint32_t offset;
};

/* Wrappers a run may declare, and the largest header. */
#define LEAK_MAX_WRAPPERS 16
#define LEAK_MAX_HEADER	  4096

/*
 * "FUNC:OFFSET" (the last colon's) into *@w, OFFSET from 1 to
 * LEAK_MAX_HEADER: @spec stays the name's storage. 0 or -EINVAL.
 */
int leak_wrapper__parse(const char *spec, struct leak_wrapper *w);

/*
 * The offset of the wrapper named @function (a demangled name matches
 * without its parameters) among @n of @w, or 0 when it is none of them.
 */
uint32_t leak_wrapper__offset(const struct leak_wrapper *w, size_t n, const char *function);

/*
 * A tracked block: its address, size and identity (an allocation stamp);
 * @offset, when not 0: a pointer to addr + offset is a start pointer too
 * (the block was allocated by a wrapper, declared or, @learned, learned).
 * @held_at, offered to learning: where a possibly lost block is held, as
 * past a wrapper's header, else 0 (see leakcheck_learn_fn).
 */
struct leak_block {
	uint64_t addr;
	uint64_t size;
	uint64_t id;
	uint32_t offset;
	uint32_t held_at;
	bool learned;
};

/* A wrapper learned in a check: its function, its header, the blocks held so. */
struct leak_learned {
	char *function;
	uint32_t offset;
	size_t evidence;
};

/*
 * Wrapper-offset learning: a wrapper returning its block + N, past a
 * header of its own, has its callers hold its blocks there. A block is
 * evidence of it when the lowest interior offset a pointer from a root or
 * a block not lost had is N, a multiple of 8 from LEAK_LEARN_MIN_HEADER
 * (8 is valgrind's length64) to LEAK_LEARN_MAX_HEADER, and a word of its
 * first N bytes holds the size of the rest (held_at). A function is taken
 * for a wrapper when at least LEAK_LEARN_MIN_BLOCKS of its possibly lost
 * blocks, and more than half of those that are evidence of some N, are
 * evidence of the same N. @held: the held_at of each of @n blocks of a
 * function (sorted in place). N, or 0; *@evidence: the blocks held at N.
 */
#define LEAK_LEARN_MIN_BLOCKS 2
#define LEAK_LEARN_MIN_HEADER 16
#define LEAK_LEARN_MAX_HEADER 64
uint32_t leak_wrapper__learn(uint32_t *held, size_t n, size_t *evidence);

/* What a verdict rests on (leakcheck__assumptions). */
enum leak_assumption {
	/* in-use chunks the tracer does not know (allocated before attach) were roots */
	LEAK_ASSUME_UNTRACKED_ROOTS = 1 << 0,
	/* no glibc heap was found: the allocator's free memory counted as roots */
	LEAK_ASSUME_UNKNOWN_HEAP = 1 << 1,
	/* a heap walk stopped at a header it could not read: the rest counted as roots */
	LEAK_ASSUME_HEAP_PARTIAL = 1 << 2,
	/* some root memory could not be read: lost verdicts assume it held no pointer */
	LEAK_ASSUME_ROOTS_UNREADABLE = 1 << 3,
	/* no snapshot child (seccomp, or asked): the target stayed stopped for the scan */
	LEAK_ASSUME_STOPPED = 1 << 4,
	/* a thread stopped in user code: the 128 bytes below its stack pointer were roots */
	LEAK_ASSUME_RED_ZONE = 1 << 5,
	/* blocks of a declared wrapper: a pointer at its offset was a start pointer */
	LEAK_ASSUME_WRAPPER = 1 << 6,
	/* blocks of a learned wrapper (leak_wrapper__learn): the same */
	LEAK_ASSUME_WRAPPER_LEARNED = 1 << 7,
	/*
	 * at a launched command's exit: its other threads' registers, read at
	 * each one's exit stop as exit_group ended it, were roots
	 */
	LEAK_ASSUME_EXIT_REGISTERS = 1 << 8,
	LEAK_ASSUME_LAST = LEAK_ASSUME_EXIT_REGISTERS,
};

/* Each assumption bit's name (a JSON string), and what it means to a reader. */
const char *leak_assumption__name(enum leak_assumption a);
const char *leak_assumption__describe(enum leak_assumption a);

/*
 * Offered the @n classified blocks, their held_at set (leak_wrapper__learn),
 * it may give some an offset it learned (and @learned): it returns how
 * many it gave one, and then they are classified again, from the same
 * snapshot.
 */
typedef size_t (*leakcheck_learn_fn)(void *ctx, struct leak_block *blocks, size_t n);

struct leakcheck_opts {
	bool no_fork;			   /* scan the stopped target itself */
	bool ours;			   /* the caller holds it in a ptrace stop */
	unsigned int heuristics;	   /* 1 << enum leak_heuristic, each one on */
	const volatile sig_atomic_t *stop; /* non-zero: end the scan, -EINTR */
	leakcheck_learn_fn learn;	   /* NULL: no learning */
	void *learn_ctx;
	/*
	 * ours: the registers of its other threads, which the caller traces
	 * too: held with it, or read at each one's exit stop (@at_exit: it is
	 * in its exit stop)
	 */
	const struct arch_regs *threads;
	size_t nr_threads;
	bool at_exit;
};

struct leakcheck_stats {
	uint64_t pause_ns;	/* the target stopped, seize to resume */
	uint64_t clone_ns;	/* of which the snapshot's clone (its page-table copy) */
	uint64_t reap_pause_ns; /* the second stop that reaps the snapshot child */
	uint64_t scan_ns;	/* heap walk and classification */
	uint64_t root_bytes;	/* root memory scanned */
	uint64_t block_bytes;	/* tracked bytes */
	unsigned int threads;	/* whose registers were roots */
	uint64_t bytes[LEAK_CLASSES];
	uint64_t blocks[LEAK_CLASSES];
	/* of the reachable ones, those reached through a heuristic's pointer */
	uint64_t heur_bytes[LEAK_HEURISTICS];
	uint64_t heur_blocks[LEAK_HEURISTICS];
	unsigned int assumptions; /* enum leak_assumption bits */
};

struct leakcheck;

/* A scan of process @pid. NULL with errno set. */
struct leakcheck *leakcheck__new(pid_t pid, const struct leakcheck_opts *opts);
void leakcheck__free(struct leakcheck *lc);

/*
 * Called twice by leakcheck__run: before the target stops and once the
 * snapshot is taken. It adds the live blocks with leakcheck__add_block;
 * only blocks added both times with the same id are classified, since
 * only they were surely live when the snapshot was taken.
 */
typedef int (*leakcheck_collect_fn)(void *ctx, struct leakcheck *lc);
int leakcheck__add_block(struct leakcheck *lc, const struct leak_block *b);

/*
 * Stop, snapshot and resume the target, then classify. The target is
 * resumed on every path. -EBUSY when it is already being traced,
 * -ESRCH when it exited before the check ended: no verdicts, since
 * its blocks may have gone from the caller's table before the second
 * collection; -EINTR when *opts->stop became non-zero. 0 or -errno.
 */
int leakcheck__run(struct leakcheck *lc, leakcheck_collect_fn collect, void *ctx);

/* After a run: the classified blocks, and each one's class. */
size_t leakcheck__nr_blocks(const struct leakcheck *lc);
const struct leak_block *leakcheck__block(const struct leakcheck *lc, size_t i);
enum leak_class leakcheck__class(const struct leakcheck *lc, size_t i);
/* The heuristic that made reachable block @i, or LEAK_HEUR_NONE. */
enum leak_heuristic leakcheck__heuristic(const struct leakcheck *lc, size_t i);
const struct leakcheck_stats *leakcheck__stats(const struct leakcheck *lc);

#endif
