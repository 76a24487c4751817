/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_HASHMAP_H
#define ALLOCTRACE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The loader's one hash table: open addressing with linear probing, kept
 * at most half full, over entries of a fixed size that each begin with
 * their key. The entries live in the table: a pointer to one holds until
 * the next insert. Keys are compared and hashed as bytes unless @hash and
 * @equal are given (strings: hashmap_str_hash and hashmap_str_equal, for
 * a key that is a `const char *`).
 */
struct hashmap {
	unsigned char *entries;
	bool *used;
	size_t cap; /* a power of two, or 0 before the first insert */
	size_t nr;
	size_t key_size, entry_size;
	size_t (*hash)(const void *key);
	bool (*equal)(const void *key, const void *other);
};

/* An empty table of entries of @entry_size bytes, each starting with a key of @key_size. */
#define HASHMAP_INIT(key_size_, entry_size_, hash_, equal_)                                        \
	((struct hashmap){.key_size = (key_size_),                                                 \
			  .entry_size = (entry_size_),                                             \
			  .hash = (hash_),                                                         \
			  .equal = (equal_)})

/* The entry of @key, or NULL. */
void *hashmap__find(const struct hashmap *m, const void *key);

/*
 * The entry of @key, made if new (zeroed but for its key, and *@added set
 * then): the caller fills the rest. NULL with errno set when out of memory.
 */
void *hashmap__insert(struct hashmap *m, const void *key, bool *added);

/* Drop every entry for which @drop says true; the others stay where a find finds them. */
void hashmap__prune(struct hashmap *m, bool (*drop)(void *entry, void *ctx), void *ctx);

/* The entry after @prev (NULL: the first), or NULL: every entry once, in no order. */
void *hashmap__next(const struct hashmap *m, const void *prev);

/* Empty, keeping its room for the next use. */
void hashmap__clear(struct hashmap *m);

/* Free its room; it is empty and usable again. */
void hashmap__release(struct hashmap *m);

size_t hashmap_str_hash(const void *key);
bool hashmap_str_equal(const void *key, const void *other);

#endif
