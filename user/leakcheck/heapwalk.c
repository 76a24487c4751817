// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * glibc's malloc (malloc/malloc.c, arena.c) as seen from outside: chunks
 * of [prev_size, size | flags, user data...] laid end to end, a chunk in
 * use when the next one's PREV_INUSE bit is set. Layouts of glibc 2.32 to
 * 2.36 on x86-64; anything that does not fit them is left as roots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "leakcheck/heapwalk.h"
#include "lib/util.h"

#define HDR	       16 /* prev_size and size */
#define MIN_CHUNK      32
#define PREV_INUSE     1ULL
#define FLAGS	       7ULL
#define HEAP_MAX       (64ULL << 20) /* a thread arena's heap: this size and alignment */
#define ARENA_SIZE     2200	     /* sizeof(struct malloc_state) */
#define ARENA_FASTBINS 16	     /* offsetof(struct malloc_state, fastbinsY) */
#define ARENA_TOP      96	     /* offsetof(struct malloc_state, top) */
#define NFASTBINS      10
#define TCACHE_CHUNK   0x290 /* tcache_perthread_struct's chunk: 64 counts, 64 entries */
#define TCACHE_BINS    64
#define LIST_MAX       (1 << 20) /* a free list longer than this is corrupt */
#define WINDOW	       (1 << 20)

/* A chunk: its header's address and size. */
struct chunk {
	uint64_t p;
	uint64_t size;
};

struct chunks {
	struct chunk *c;
	size_t n, cap;
};

struct walk {
	const struct leak_memory *mem;
	const struct classifier *tracked;
	uint8_t *win;
	uint64_t win_at, win_len;
	struct chunks used;	/* in use by their headers, untracked */
	struct chunks firsts;	/* each heap's first chunk: maybe a tcache */
	struct range_set free;	/* chunks found on tcache and fastbin lists */
	uint64_t arena[64];	/* thread arenas' malloc_state */
	uint64_t top, main_top; /* the last heap's top chunk; [heap]'s */
	size_t nr_arenas;
	uint64_t key; /* tcache_key, read off a tcache entry */
	unsigned int *assume;
};

static int add_chunk(struct chunks *s, uint64_t p, uint64_t size)
{
	struct chunk *c = array__grow(s->c, &s->cap, s->n, sizeof(*c));

	if (!c)
		return -ENOMEM;
	s->c = c;
	s->c[s->n++] = (struct chunk){p, size};
	return 0;
}

/* One word of the target, through a window read a megabyte at a time. */
static int word(struct walk *w, uint64_t addr, uint64_t *val)
{
	int err;

	if (addr < w->win_at || addr + 8 > w->win_at + w->win_len) {
		w->win_at = addr & ~4095ULL;
		w->win_len = WINDOW;
		err = w->mem->read(w->mem->ctx, w->win_at, w->win, WINDOW);
		if (err) {
			/* The window runs off the mapping: fall back to the page. */
			w->win_len = 4096;
			err = w->mem->read(w->mem->ctx, w->win_at, w->win, 4096);
		}
		if (err) {
			w->win_len = 0;
			return err;
		}
	}
	memcpy(val, w->win + (addr - w->win_at), 8);
	return 0;
}

/*
 * Chunks from @p to @end. Past a header that cannot be a chunk's, the
 * rest stays a root: unknown is never taken for free.
 */
static int walk_heap(struct walk *w, uint64_t p, uint64_t end, struct range_set *inuse)
{
	uint64_t size, next;
	int err = add_chunk(&w->firsts, p, 0);

	w->top = 0;

	while (!err && p + HDR <= end) {
		if (word(w, p + 8, &size))
			break;
		size &= ~FLAGS;
		if (size == HDR) /* a fencepost: the heap's end */
			return 0;
		if (size < MIN_CHUNK || size % 16 || size > end - p)
			break;
		if (p + size == end) { /* the top chunk, always free */
			w->top = p;
			return 0;
		}
		if (word(w, p + size + 8, &next))
			break;
		if (next & PREV_INUSE)
			err = add_chunk(&w->used, p, size);
		p += size;
	}
	if (err)
		return err;
	*w->assume |= LEAK_ASSUME_HEAP_PARTIAL;
	return range_set__add(inuse, p, end);
}

static int free_chunk(struct walk *w, uint64_t p)
{
	return range_set__add(&w->free, p, p + 1);
}

/* A safe-linked list (glibc 2.32+): each next pointer is xored with its own address >> 12. */
static int walk_list(struct walk *w, uint64_t e, uint64_t link_off, uint64_t hdr_off,
		     unsigned int max)
{
	uint64_t raw;
	unsigned int k;
	int err = 0;

	for (k = 0; e && !(e & 15) && k < max && !err; k++) {
		err = free_chunk(w, e - hdr_off);
		if (!err && !w->key && link_off == 0 && word(w, e + 8, &raw) == 0)
			w->key = raw;
		if (err || word(w, e + link_off, &raw))
			break;
		e = raw ^ ((e + link_off) >> 12);
	}
	return err;
}

/* The tcache a heap's first chunk may be: 64 counts, then 64 list heads. */
static int walk_tcache(struct walk *w, const struct chunk *c)
{
	uint64_t mem = c->p + HDR, size, counts, e;
	unsigned int i, n;
	int err = 0;

	if (word(w, c->p + 8, &size) || (size & ~FLAGS) != TCACHE_CHUNK)
		return 0;
	for (i = 0; i < TCACHE_BINS && !err; i++) {
		if (word(w, mem + (i / 4) * 8, &counts) || word(w, mem + 128 + 8 * i, &e))
			return 0;
		n = (counts >> (16 * (i % 4))) & 0xffff;
		err = walk_list(w, e, 0, HDR, n);
	}
	return err;
}

static int walk_fastbins(struct walk *w, uint64_t arena)
{
	uint64_t head;
	int i, err = 0;

	for (i = 0; i < NFASTBINS && !err; i++)
		if (word(w, arena + ARENA_FASTBINS + 8 * i, &head) == 0)
			err = walk_list(w, head, HDR, 0, LIST_MAX);
	return err;
}

/* main_arena sits in libc's data: the word there that points at [heap]'s top. */
static uint64_t find_main_arena(struct walk *w, const struct proc_maps *maps)
{
	const struct mapping *m;
	uint64_t a, v;
	size_t i;

	for (i = 0; w->main_top && i < maps->nr; i++) {
		m = &maps->maps[i];
		if (!m->write || !m->path || !strstr(m->path, "/libc"))
			continue;
		for (a = m->start; a + 8 <= m->end; a += 8)
			if (word(w, a, &v) == 0 && v == w->main_top && a - m->start >= ARENA_TOP)
				return a - ARENA_TOP;
	}
	return 0;
}

/* A thread arena's first heap starts with heap_info, then its malloc_state. */
static uint64_t first_heap_arena(struct walk *w, const struct mapping *m)
{
	uint64_t ar;

	if (m->path || !m->write || m->start % HEAP_MAX || word(w, m->start, &ar))
		return 0;
	/* sizeof(heap_info): 32, or 48 with glibc 2.35's pagesize field */
	return ar == m->start + 32 || ar == m->start + 48 ? ar : 0;
}

static bool known_arena(const struct walk *w, uint64_t ar)
{
	size_t i;

	for (i = 0; i < w->nr_arenas; i++)
		if (w->arena[i] == ar)
			return true;
	return false;
}

/* The thread arenas' heaps: first heaps, then the heaps they grew into. */
static int walk_thread_arenas(struct walk *w, const struct proc_maps *maps,
			      struct range_set *arenas, struct range_set *inuse)
{
	const struct mapping *m;
	uint64_t ar, size, first;
	size_t i;
	int pass, err = 0;

	for (pass = 0; pass < 2 && !err; pass++) {
		for (i = 0; i < maps->nr && !err; i++) {
			m = &maps->maps[i];
			ar = first_heap_arena(w, m);
			if (pass == 0 && ar && w->nr_arenas < 64) {
				w->arena[w->nr_arenas++] = ar;
				first = (ar + ARENA_SIZE + HDR + 15) / 16 * 16 - HDR;
			} else if (pass == 1 && !ar && !m->path && m->write &&
				   !(m->start % HEAP_MAX) && word(w, m->start, &ar) == 0 &&
				   known_arena(w, ar)) {
				first = m->start + (w->arena[0] - (w->arena[0] & ~(HEAP_MAX - 1)));
			} else {
				continue;
			}
			if (word(w, m->start + 16, &size) || size > m->end - m->start)
				size = m->end - m->start;
			err = range_set__add(arenas, m->start, m->end)
				  ?: walk_heap(w, first, m->start + size, inuse);
		}
	}
	return err;
}

/*
 * The free lists; main_arena itself joins @arenas, never a root: its top
 * and bin pointers point at chunk headers, which lie inside the previous
 * block's last word, and would make a lost block look possibly lost.
 */
static int find_free(struct walk *w, const struct proc_maps *maps, struct range_set *arenas)
{
	uint64_t main_arena = find_main_arena(w, maps);
	size_t i;
	int err = 0;

	for (i = 0; i < w->firsts.n && !err; i++)
		err = walk_tcache(w, &w->firsts.c[i]);
	if (main_arena && !err)
		err = range_set__add(arenas, main_arena, main_arena + ARENA_SIZE)
			  ?: walk_fastbins(w, main_arena);
	for (i = 0; i < w->nr_arenas && !err; i++)
		err = walk_fastbins(w, w->arena[i]);
	range_set__normalize(&w->free);
	return err;
}

static bool on_free_list(const struct walk *w, uint64_t p)
{
	size_t lo = 0, hi = w->free.n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->free.r[mid].end <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->free.n && w->free.r[lo].start <= p;
}

/*
 * The in-use chunks that are roots: untracked, not on a free list, and
 * without the tcache key where a freed tcache entry keeps it. A chunk's
 * data runs on into the next chunk's prev_size field.
 */
static int untracked_roots(struct walk *w, struct range_set *inuse)
{
	const struct chunk *c;
	uint64_t key;
	size_t i;
	int err = 0;

	for (i = 0; i < w->used.n && !err; i++) {
		c = &w->used.c[i];
		if (classifier__find(w->tracked, c->p + HDR) >= 0 || on_free_list(w, c->p))
			continue;
		if (w->key && word(w, c->p + HDR + 8, &key) == 0 && key == w->key)
			continue;
		err = range_set__add(inuse, c->p + HDR, c->p + c->size + 8);
		*w->assume |= LEAK_ASSUME_UNTRACKED_ROOTS;
	}
	return err;
}

int glibc_heap__walk(const struct leak_memory *mem, const struct proc_maps *maps,
		     const struct classifier *tracked, struct range_set *arenas,
		     struct range_set *inuse, unsigned int *assume)
{
	struct walk w = {.mem = mem, .tracked = tracked, .assume = assume};
	const struct mapping *m;
	size_t i;
	int err = 0;

	w.win = malloc(WINDOW);
	if (!w.win)
		return -ENOMEM;
	for (i = 0; i < maps->nr && !err; i++) {
		m = &maps->maps[i];
		if (m->path && !strcmp(m->path, "[heap]")) {
			err = range_set__add(arenas, m->start, m->end)
				  ?: walk_heap(&w, m->start, m->end, inuse);
			w.main_top = w.top;
		}
	}
	err = err ?: walk_thread_arenas(&w, maps, arenas, inuse);
	if (!arenas->n)
		*assume |= LEAK_ASSUME_UNKNOWN_HEAP;
	err = err ?: find_free(&w, maps, arenas) ?: untracked_roots(&w, inuse);
	range_set__normalize(arenas);
	range_set__normalize(inuse);
	free(w.win);
	free(w.used.c);
	free(w.firsts.c);
	range_set__release(&w.free);
	return err;
}
