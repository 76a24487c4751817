// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"
#include "lib/util.h"

#define HASHMAP_MIN_CAP 256

/* A word at a time, each multiplied in and its high bits folded down: ids and addresses differ low.
 */
static size_t bytes_hash(const void *key, size_t size)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL, w;

	for (size_t i = 0; i < size; i += sizeof(w)) {
		w = 0;
		memcpy(&w, (const unsigned char *)key + i,
		       size - i < sizeof(w) ? size - i : sizeof(w));
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return (size_t)h;
}

static size_t slot_of(const struct hashmap *m, const void *key)
{
	return (m->hash ? m->hash(key) : bytes_hash(key, m->key_size)) & (m->cap - 1);
}

static bool key_equal(const struct hashmap *m, const void *key, const void *entry)
{
	return m->equal ? m->equal(key, entry) : !memcmp(key, entry, m->key_size);
}

static void *entry_at(const struct hashmap *m, size_t i)
{
	return m->entries + i * m->entry_size;
}

/* Where @key is, or the free slot that ends its probe chain. */
static size_t find_slot(const struct hashmap *m, const void *key)
{
	size_t i = slot_of(m, key);

	while (m->used[i] && !key_equal(m, key, entry_at(m, i)))
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *hashmap__find(const struct hashmap *m, const void *key)
{
	size_t i;

	if (!m->nr)
		return NULL;
	i = find_slot(m, key);
	return m->used[i] ? entry_at(m, i) : NULL;
}

/* Move every entry into a table of @cap slots. 0 or -ENOMEM, @m untouched then. */
static int resize(struct hashmap *m, size_t cap)
{
	struct hashmap bigger = *m;
	size_t i, j;

	bigger.cap = cap;
	bigger.entries = calloc(cap, m->entry_size);
	bigger.used = calloc(cap, sizeof(*bigger.used));
	if (!bigger.entries || !bigger.used) {
		free(bigger.entries);
		free(bigger.used);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		j = find_slot(&bigger, entry_at(m, i));
		memcpy(entry_at(&bigger, j), entry_at(m, i), m->entry_size);
		bigger.used[j] = true;
	}
	free(m->entries);
	free(m->used);
	*m = bigger;
	return 0;
}

void *hashmap__insert(struct hashmap *m, const void *key, bool *added)
{
	size_t i;
	int err;

	*added = false;
	if (2 * (m->nr + 1) > m->cap) {
		err = resize(m, m->cap ? 2 * m->cap : HASHMAP_MIN_CAP);
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	i = find_slot(m, key);
	if (!m->used[i]) {
		memset(entry_at(m, i), 0, m->entry_size);
		memcpy(entry_at(m, i), key, m->key_size);
		m->used[i] = true;
		m->nr++;
		*added = true;
	}
	return entry_at(m, i);
}

/*
 * Empty slot @i, then close the gap: an entry further down the chain whose
 * home slot is not between the gap and it moves into the gap (a find for
 * it would otherwise stop there).
 */
static void remove_at(struct hashmap *m, size_t i)
{
	size_t mask = m->cap - 1, j = i, home;

	m->used[i] = false;
	m->nr--;
	for (;;) {
		j = (j + 1) & mask;
		if (!m->used[j])
			return;
		home = slot_of(m, entry_at(m, j));
		/* Stays when its home is cyclically in (i, j]. */
		if ((j > i && home > i && home <= j) || (j < i && (home > i || home <= j)))
			continue;
		memcpy(entry_at(m, i), entry_at(m, j), m->entry_size);
		m->used[i] = true;
		m->used[j] = false;
		i = j;
	}
}

void hashmap__prune(struct hashmap *m, bool (*drop)(void *entry, void *ctx), void *ctx)
{
	size_t start, n, i;

	if (!m->nr)
		return;
	/*
	 * Start past a free slot: what remove_at() moves comes from further
	 * down a chain, which ends before it, so from slots not seen yet.
	 */
	for (start = 0; m->used[start]; start++)
		;
	for (n = 1; n <= m->cap; n++) {
		i = (start + n) & (m->cap - 1);
		/* A removal may move an unseen entry into slot i: look again. */
		while (m->used[i] && drop(entry_at(m, i), ctx))
			remove_at(m, i);
	}
}

void *hashmap__next(const struct hashmap *m, const void *prev)
{
	size_t i =
	    prev ? (size_t)((const unsigned char *)prev - m->entries) / m->entry_size + 1 : 0;

	for (; i < m->cap; i++) {
		if (m->used[i])
			return entry_at(m, i);
	}
	return NULL;
}

void hashmap__clear(struct hashmap *m)
{
	if (m->used)
		memset(m->used, 0, m->cap * sizeof(*m->used));
	m->nr = 0;
}

void hashmap__release(struct hashmap *m)
{
	free(m->entries);
	free(m->used);
	m->entries = NULL;
	m->used = NULL;
	m->cap = 0;
	m->nr = 0;
}

size_t hashmap_str_hash(const void *key)
{
	return hash_str(*(const char *const *)key);
}

bool hashmap_str_equal(const void *key, const void *other)
{
	return !strcmp(*(const char *const *)key, *(const char *const *)other);
}
