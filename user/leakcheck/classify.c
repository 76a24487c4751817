// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Valgrind memcheck's leak search (coregrind's mc_leakcheck.c), over
 * blocks we did not allocate: mark from the roots, a start pointer from a
 * definite source making a block reachable and anything else making it
 * possibly lost; then each block still unreached, in address order, leads
 * a clique of the unreached blocks it reaches, which are indirectly lost
 * while the leaders stay definitely lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "leakcheck/classify.h"
#include "leakcheck/heuristics.h"
#include "lib/util.h"

enum state { UNREACHED, INDIRECT, POSSIBLE, REACHED };

/* Blocks read per batch: sorted, so that neighbours are read at once. */
#define BATCH 4096
/* Gaps up to this are read through rather than read apart. */
#define GAP   (64 * 1024)
#define CHUNK (1024 * 1024)

struct sorted_block {
	uint64_t addr;
	uint64_t size;
	size_t orig;
	uint32_t offset;  /* a wrapper's header: addr + offset is a start too */
	uint32_t held_at; /* the lowest interior offset a pointer from outside lost blocks had */
};

struct classifier {
	struct sorted_block *blocks;
	uint8_t *state;
	uint8_t *heur; /* the heuristic of the pointer that last reached it, or none */
	const struct heuristics *heuristics;
	size_t n;
	uint64_t lo, hi; /* all blocks lie in [lo, hi) */
	uint32_t *stack;
	size_t top, cap;
	uint8_t *buf;
	size_t buf_cap;
	struct leak_memory mem;
	const volatile sig_atomic_t *stop;
	uint64_t unreadable;
	uint8_t *cls, *cls_heur; /* by original index, once finished */
	uint32_t *held;		 /* each possibly lost block's held_at, by original index */
};

static int cmp_block(const void *a, const void *b)
{
	const struct sorted_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int sort_blocks(struct classifier *c, const struct leak_block *blocks)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		c->blocks[i] =
		    (struct sorted_block){blocks[i].addr, blocks[i].size, i, blocks[i].offset, 0};
	qsort(c->blocks, c->n, sizeof(*c->blocks), cmp_block);
	for (i = 1; i < c->n; i++)
		if (c->blocks[i - 1].addr + c->blocks[i - 1].size > c->blocks[i].addr ||
		    c->blocks[i - 1].addr == c->blocks[i].addr)
			return -EINVAL;
	if (c->n) {
		c->lo = c->blocks[0].addr;
		c->hi = c->blocks[c->n - 1].addr + c->blocks[c->n - 1].size + 1;
	}
	return 0;
}

struct classifier *classifier__new(const struct leak_block *blocks, size_t n,
				   const struct leak_memory *mem, const struct heuristics *heur,
				   const volatile sig_atomic_t *stop)
{
	struct classifier *c = calloc(1, sizeof(*c));
	int err = -ENOMEM;

	if (!c)
		return NULL;
	c->n = n;
	c->mem = *mem;
	c->stop = stop;
	c->heuristics = heur;
	c->blocks = calloc(n ? n : 1, sizeof(*c->blocks));
	c->state = calloc(n ? n : 1, 1);
	c->heur = calloc(n ? n : 1, 1);
	if (c->blocks && c->state && c->heur)
		err = sort_blocks(c, blocks);
	if (err) {
		classifier__free(c);
		errno = -err;
		return NULL;
	}
	return c;
}

void classifier__free(struct classifier *c)
{
	if (!c)
		return;
	free(c->blocks);
	free(c->state);
	free(c->heur);
	free(c->stack);
	free(c->buf);
	free(c->cls);
	free(c->cls_heur);
	free(c->held);
	free(c);
}

long classifier__find(const struct classifier *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n, mid;
	const struct sorted_block *b;

	if (addr < c->lo || addr >= c->hi)
		return -1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->blocks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	b = &c->blocks[lo - 1];
	/* A zero-sized block is reached only by its start, as in valgrind. */
	if (addr == b->addr || addr < b->addr + b->size)
		return lo - 1;
	return -1;
}

static int push(struct classifier *c, size_t i)
{
	uint32_t *s = array__grow(c->stack, &c->cap, c->top, sizeof(*s));

	if (!s)
		return -ENOMEM;
	c->stack = s;
	c->stack[c->top++] = i;
	return 0;
}

/*
 * Interior pointer @word to block @i: a start pointer by a heuristic?
 * Its verdict is kept, as valgrind keeps it, until a start pointer
 * reaches the block. The pointer a declared wrapper returned is one
 * whatever the heuristics: it is where the caller's pointer is.
 */
static bool via_heuristic(struct classifier *c, uint64_t word, size_t i)
{
	const struct sorted_block *b = &c->blocks[i];

	if (b->offset && word == b->addr + b->offset) {
		c->heur[i] = LEAK_HEUR_WRAPPER;
		return true;
	}
	if (!c->heuristics)
		return false;
	c->heur[i] = heuristics__match(c->heuristics, word, b->addr, b->size);
	return c->heur[i] != LEAK_HEUR_NONE;
}

/*
 * An interior pointer @word from a root or a block not lost: where a
 * wrapper's caller would hold the block (a pointer into it past the
 * header the wrapper returned it past is at a higher offset).
 */
static void note_held_at(struct sorted_block *b, uint64_t word)
{
	uint32_t off = word - b->addr > UINT32_MAX ? UINT32_MAX : word - b->addr;

	if (!b->held_at || off < b->held_at)
		b->held_at = off;
}

/*
 * A word found in a root or a scanned block. @clique < 0: the root
 * phase, where @definite says the source is a root or a reachable block;
 * otherwise the clique of that unreached leader.
 */
static int mark(struct classifier *c, uint64_t word, int definite, long clique)
{
	long i = classifier__find(c, word);

	if (i < 0)
		return 0;
	if (clique >= 0) {
		if (c->state[i] != UNREACHED || i == clique)
			return 0;
		c->state[i] = INDIRECT;
		return push(c, i);
	}
	if (c->state[i] == REACHED) {
		/* A start pointer after all: not the heuristic's doing. */
		if (word == c->blocks[i].addr)
			c->heur[i] = LEAK_HEUR_NONE;
		return 0;
	}
	if (word == c->blocks[i].addr || via_heuristic(c, word, i)) {
		if (definite) {
			c->state[i] = REACHED;
			return push(c, i);
		}
	} else {
		note_held_at(&c->blocks[i], word);
	}
	if (c->state[i] == UNREACHED) {
		c->state[i] = POSSIBLE;
		return push(c, i);
	}
	return 0;
}

static int mark_words(struct classifier *c, const uint8_t *p, size_t len, int definite, long clique)
{
	uint64_t w;
	size_t off;
	int err;

	for (off = 0; off + 8 <= len; off += 8) {
		memcpy(&w, p + off, 8);
		if (w < c->lo || w >= c->hi)
			continue;
		err = mark(c, w, definite, clique);
		if (err)
			return err;
	}
	return 0;
}

static int grow_buf(struct classifier *c, size_t len)
{
	uint8_t *b;

	if (len <= c->buf_cap)
		return 0;
	b = realloc(c->buf, len);
	if (!b)
		return -ENOMEM;
	c->buf = b;
	c->buf_cap = len;
	return 0;
}

static bool stopped(const struct classifier *c)
{
	return c->stop && *c->stop;
}

int classifier__scan_words(struct classifier *c, const uint64_t *words, size_t n)
{
	return mark_words(c, (const uint8_t *)words, n * 8, 1, -1);
}

/* Scan [start, end) a chunk at a time; unread bytes are added to *@unread. */
static int scan_memory(struct classifier *c, uint64_t start, uint64_t end, int definite,
		       long clique, uint64_t *unread)
{
	uint64_t at = (start + 7) & ~7ULL;
	size_t len;
	int err;

	err = grow_buf(c, CHUNK);
	for (; !err && at + 8 <= end; at += len) {
		if (stopped(c))
			return -EINTR;
		len = end - at < CHUNK ? (end - at) & ~7ULL : CHUNK;
		if (c->mem.read(c->mem.ctx, at, c->buf, len)) {
			*unread += len;
			continue;
		}
		err = mark_words(c, c->buf, len, definite, clique);
	}
	return err;
}

int classifier__scan_range(struct classifier *c, uint64_t start, uint64_t end)
{
	return scan_memory(c, start, end, 1, -1, &c->unreadable);
}

/*
 * Scan blocks batch[first..last] (sorted) from one read of their span.
 * Blocks the memory cannot give are left unscanned: they hold nothing.
 */
static int scan_span(struct classifier *c, const uint32_t *batch, size_t first, size_t last,
		     long clique)
{
	const struct sorted_block *a = &c->blocks[batch[first]], *b;
	uint64_t span = c->blocks[batch[last]].addr + c->blocks[batch[last]].size - a->addr;
	uint64_t unread = 0;
	size_t k;
	int err;

	/* The state now, not when pushed: a block may have become reachable since. */
	if (span > CHUNK)
		return scan_memory(c, a->addr, a->addr + a->size, c->state[batch[first]] == REACHED,
				   clique, &unread);
	err = grow_buf(c, span);
	if (err || c->mem.read(c->mem.ctx, a->addr, c->buf, span))
		return err;
	for (k = first; k <= last && !err; k++) {
		b = &c->blocks[batch[k]];
		err = mark_words(c, c->buf + (b->addr - a->addr), b->size,
				 c->state[batch[k]] == REACHED, clique);
	}
	return err;
}

/* Take up to BATCH blocks off the stack and scan them, neighbours together. */
static int scan_batch(struct classifier *c, uint32_t *batch, long clique)
{
	size_t n = c->top < BATCH ? c->top : BATCH, first = 0, k;
	const struct sorted_block *prev, *next;
	int err = 0;

	c->top -= n;
	memcpy(batch, c->stack + c->top, n * sizeof(*batch));
	qsort(batch, n, sizeof(*batch), cmp_u32);
	for (k = 1; k <= n && !err; k++) {
		if (k < n) {
			prev = &c->blocks[batch[k - 1]];
			next = &c->blocks[batch[k]];
			if (next->addr - (prev->addr + prev->size) <= GAP &&
			    next->addr + next->size - c->blocks[batch[first]].addr <= CHUNK)
				continue;
		}
		err = scan_span(c, batch, first, k - 1, clique);
		first = k;
	}
	return err;
}

static int drain(struct classifier *c, long clique)
{
	uint32_t batch[BATCH];
	int err = 0;

	while (c->top && !err) {
		if (stopped(c))
			return -EINTR;
		err = scan_batch(c, batch, clique);
	}
	return err;
}

static const enum leak_class class_of[] = {
    [UNREACHED] = LEAK_DEFINITE,
    [INDIRECT] = LEAK_INDIRECT,
    [POSSIBLE] = LEAK_POSSIBLE,
    [REACHED] = LEAK_REACHABLE,
};

int classifier__finish(struct classifier *c)
{
	size_t i;
	int err;

	err = drain(c, -1);
	for (i = 0; i < c->n && !err; i++) {
		if (c->state[i] != UNREACHED)
			continue;
		err = push(c, i) ?: drain(c, i);
	}
	if (err)
		return err;
	c->cls = malloc(c->n ? c->n : 1);
	c->cls_heur = malloc(c->n ? c->n : 1);
	c->held = malloc((c->n ? c->n : 1) * sizeof(*c->held));
	if (!c->cls || !c->cls_heur || !c->held)
		return -ENOMEM;
	for (i = 0; i < c->n; i++) {
		c->cls[c->blocks[i].orig] = class_of[c->state[i]];
		c->held[c->blocks[i].orig] = c->state[i] == POSSIBLE ? c->blocks[i].held_at : 0;
		/* valgrind counts a possibly lost block's too: not as reachable here. */
		c->cls_heur[c->blocks[i].orig] =
		    c->state[i] == REACHED ? c->heur[i] : LEAK_HEUR_NONE;
	}
	return 0;
}

enum leak_class classifier__class(const struct classifier *c, size_t i)
{
	return c->cls[i];
}

enum leak_heuristic classifier__heuristic(const struct classifier *c, size_t i)
{
	return c->cls_heur[i];
}

uint32_t classifier__held_at(const struct classifier *c, size_t i)
{
	return c->held[i];
}

uint64_t classifier__unreadable(const struct classifier *c)
{
	return c->unreadable;
}
