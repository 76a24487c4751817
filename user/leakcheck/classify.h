/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CLASSIFY_H
#define ALLOCTRACE_CLASSIFY_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "leakcheck/leakcheck.h"

/*
 * Valgrind memcheck's leak classification of a set of blocks, given the
 * memory they and the roots live in. Only aligned 8-byte words count as
 * pointers; a word pointing at a block's first byte is a start pointer,
 * one pointing inside it an interior pointer.
 */
struct classifier;

/* Reads @len bytes at @addr of the scanned process into @buf: 0 or -errno. */
struct leak_memory {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

struct heuristics;

/*
 * A classifier for @n blocks (any order, none overlapping another), with
 * valgrind's @heur (NULL: none). A non-zero *@stop makes a scan return
 * -EINTR. NULL with errno set.
 */
struct classifier *classifier__new(const struct leak_block *blocks, size_t n,
				   const struct leak_memory *mem, const struct heuristics *heur,
				   const volatile sig_atomic_t *stop);
void classifier__free(struct classifier *c);

/* Root values (registers) and root memory [start, end). 0 or -errno. */
int classifier__scan_words(struct classifier *c, const uint64_t *words, size_t n);
int classifier__scan_range(struct classifier *c, uint64_t start, uint64_t end);

/* After the roots: blocks reached through them, then the lost ones' cliques. */
int classifier__finish(struct classifier *c);

/* Block @i (in the order given to classifier__new) once finished. */
enum leak_class classifier__class(const struct classifier *c, size_t i);
/* The heuristic through which a reachable block @i was reached, or LEAK_HEUR_NONE. */
enum leak_heuristic classifier__heuristic(const struct classifier *c, size_t i);

/*
 * A possibly lost block @i's lowest interior offset that a pointer from a
 * root or a block not lost had; 0 for a block of another class.
 */
uint32_t classifier__held_at(const struct classifier *c, size_t i);

/* Root bytes that could not be read (a lost verdict rests on them being pointer-free). */
uint64_t classifier__unreadable(const struct classifier *c);

/* The tracked block holding @addr (start or interior), or -1. */
long classifier__find(const struct classifier *c, uint64_t addr);

#endif
