// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shapes are valgrind's, checked on the memory as it is: valgrind
 * also requires the words it reads to be initialised, which a copy of the
 * memory cannot tell, so a block whose header words were never written
 * can match here where valgrind would not (its bytes are then whatever
 * the allocator left, rarely a plausible length).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "leakcheck/heuristics.h"
#include "leakcheck/leakcheck.h"
#include "lib/util.h"

/* A vtable holds at least two function pointers in its first words. */
#define VTABLE_WORDS 21
#define PAGE	     4096

static bool in(const struct heuristics *h, enum leak_heuristic which)
{
	return h->set & (1u << which);
}

static bool file_mapping(const struct mapping *m)
{
	return m && m->path && m->path[0] == '/';
}

/*
 * A vtable pointer: into a readable mapping of a file, at a table whose
 * first words are null or point into executable mappings of files, two of
 * them at least before anything else.
 */
static bool is_vtable(const struct heuristics *h, uint64_t addr)
{
	const struct mapping *m = proc_maps__find(h->maps, addr);
	uint64_t words[VTABLE_WORDS];
	size_t n, i, fns = 0;

	if (addr < PAGE || addr & 7 || !file_mapping(m) || !m->read)
		return false;
	n = (m->end - addr) / 8 < VTABLE_WORDS ? (m->end - addr) / 8 : VTABLE_WORDS;
	if (h->mem.read(h->mem.ctx, addr, words, n * 8))
		return false;
	for (i = 0; i < n; i++) {
		if (!words[i])
			continue;
		m = proc_maps__find(h->maps, words[i]);
		if (!file_mapping(m) || !m->exec)
			return false;
		if (++fns == 2)
			return true;
	}
	return false;
}

/* A second base class: its vtable pointer at @ptr, the first base's at the start. */
static bool multiple_inheritance(const struct heuristics *h, uint64_t ptr, uint64_t start,
				 uint64_t size, uint64_t first)
{
	uint64_t inner;

	if (ptr & 7 || ptr + 8 > start + size || h->mem.read(h->mem.ctx, ptr, &inner, 8))
		return false;
	return is_vtable(h, inner) && is_vtable(h, first);
}

enum leak_heuristic heuristics__match(const struct heuristics *h, uint64_t ptr, uint64_t start,
				      uint64_t size)
{
	uint64_t w[3] = {}; /* the block's first words: as many as it has */
	size_t n = size / 8 < 3 ? size / 8 : 3;

	if (!n || h->mem.read(h->mem.ctx, start, w, n * 8))
		return LEAK_HEUR_NONE;
	/* length, capacity, refcount, then the characters and their null */
	if (in(h, LEAK_HEUR_STDSTRING) && ptr == start + 24 && 24 + w[1] + 1 == size &&
	    w[0] <= w[1])
		return LEAK_HEUR_STDSTRING;
	/* the length of what follows (sqlite's allocations) */
	if (in(h, LEAK_HEUR_LENGTH64) && ptr == start + 8 && w[0] && w[0] == size - 8)
		return LEAK_HEUR_LENGTH64;
	/* new T[n] of a T with a destructor: n, then the elements */
	if (in(h, LEAK_HEUR_NEWARRAY) && ptr == start + 8 && w[0] && (size - 8) % w[0] == 0)
		return LEAK_HEUR_NEWARRAY;
	if (in(h, LEAK_HEUR_MULTIPLE_INHERITANCE) &&
	    multiple_inheritance(h, ptr, start, size, w[0]))
		return LEAK_HEUR_MULTIPLE_INHERITANCE;
	return LEAK_HEUR_NONE;
}

/* The names valgrind gives them; the command line's parser (cli/) links this file alone. */
static const char *const heuristic_names[LEAK_HEURISTICS] = {
    [LEAK_HEUR_NONE] = "none",
    [LEAK_HEUR_STDSTRING] = "stdstring",
    [LEAK_HEUR_LENGTH64] = "length64",
    [LEAK_HEUR_NEWARRAY] = "newarray",
    [LEAK_HEUR_MULTIPLE_INHERITANCE] = "multipleinheritance",
    [LEAK_HEUR_WRAPPER] = "wrapper",
};

const char *leak_heuristic__name(enum leak_heuristic h)
{
	return h < LEAK_HEURISTICS ? heuristic_names[h] : "?";
}

/* valgrind's names only: the wrapper's is on by --leak-check-wrapper. */
static int heuristic_bit(const char *name, size_t len, unsigned int *set)
{
	for (int h = LEAK_HEUR_NONE + 1; h < LEAK_HEUR_WRAPPER; h++) {
		if (strlen(heuristic_names[h]) == len && !strncmp(name, heuristic_names[h], len)) {
			*set |= 1u << h;
			return 0;
		}
	}
	return -EINVAL;
}

int leak_heuristics__parse(const char *list, unsigned int *set)
{
	const char *at = list, *comma;
	size_t len;

	*set = 0;
	if (!strcmp(list, "all") || !strcmp(list, "none")) {
		*set = list[0] == 'a' ? LEAK_HEUR_ALL : 0;
		return 0;
	}
	do {
		comma = strchr(at, ',');
		len = comma ? (size_t)(comma - at) : strlen(at);
		if (heuristic_bit(at, len, set))
			return -EINVAL;
		at = comma + 1;
	} while (comma);
	return 0;
}

int leak_wrapper__parse(const char *spec, struct leak_wrapper *w)
{
	const char *colon = strrchr(spec, ':');
	unsigned long off;
	char *end;

	if (!colon || colon == spec || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	off = strtoul(colon + 1, &end, 10);
	if (errno || *end || !off || off > LEAK_MAX_HEADER)
		return -EINVAL;
	*w = (struct leak_wrapper){.func = spec, .len = colon - spec, .offset = off};
	return 0;
}

/* @function is @name, or @name followed by its parameters (a demangled C++ name). */
static bool same_function(const char *function, const char *name, size_t len)
{
	return !strncmp(function, name, len) && (!function[len] || function[len] == '(');
}

uint32_t leak_wrapper__offset(const struct leak_wrapper *w, size_t n, const char *function)
{
	for (size_t i = 0; function && i < n; i++)
		if (same_function(function, w[i].func, w[i].len))
			return w[i].offset;
	return 0;
}

uint32_t leak_wrapper__learn(uint32_t *held, size_t n, size_t *evidence)
{
	size_t i, run, best = 0;
	uint32_t at = 0;

	qsort(held, n, sizeof(*held), cmp_u32);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && held[i + run] == held[i]; run++)
			;
		if (run > best) {
			best = run;
			at = held[i];
		}
	}
	*evidence = best;
	if (best < LEAK_LEARN_MIN_BLOCKS || 2 * best <= n || at % 8 || at < LEAK_LEARN_MIN_HEADER ||
	    at > LEAK_LEARN_MAX_HEADER)
		return 0;
	return at;
}
