// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lib/hashmap.c: finds, growth, collisions, pruning across the wrap, strings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"

struct entry {
	uint64_t key;
	uint64_t value;
};

static struct entry *put(struct hashmap *m, uint64_t key, uint64_t value)
{
	bool added;
	struct entry *e = hashmap__insert(m, &key, &added);

	assert_non_null(e);
	assert_true(added);
	assert_int_equal(e->key, key);
	assert_int_equal(e->value, 0);
	e->value = value;
	return e;
}

static uint64_t value_of(const struct hashmap *m, uint64_t key)
{
	const struct entry *e = hashmap__find(m, &key);

	return e ? e->value : UINT64_MAX;
}

static size_t count(const struct hashmap *m)
{
	size_t n = 0;

	for (void *e = hashmap__next(m, NULL); e; e = hashmap__next(m, e))
		n++;
	return n;
}

/* 10,000 keys through five doublings, each found with its value; absent keys are not. */
static void test_grow_and_find(void **state)
{
	struct hashmap m = HASHMAP_INIT(sizeof(uint64_t), sizeof(struct entry), NULL, NULL);
	bool added;

	assert_null(hashmap__find(&m, &(uint64_t){1}));
	for (uint64_t k = 0; k < 10000; k++)
		put(&m, k * 4096, k + 1);
	assert_int_equal(m.nr, 10000);
	assert_int_equal(m.cap, 32768);
	assert_int_equal(count(&m), 10000);
	for (uint64_t k = 0; k < 10000; k++)
		assert_int_equal(value_of(&m, k * 4096), k + 1);
	assert_int_equal(value_of(&m, 4095), UINT64_MAX);
	/* A key met again is the same entry, its value kept. */
	assert_int_equal(((struct entry *)hashmap__insert(&m, &(uint64_t){8192}, &added))->value,
			 3);
	assert_false(added);
	assert_int_equal(m.nr, 10000);

	hashmap__clear(&m);
	assert_int_equal(m.nr, 0);
	assert_int_equal(m.cap, 32768);
	assert_int_equal(value_of(&m, 8192), UINT64_MAX);
	assert_null(hashmap__next(&m, NULL));
	put(&m, 8192, 7);
	assert_int_equal(value_of(&m, 8192), 7);
	hashmap__release(&m);
	assert_int_equal(m.cap, 0);
	assert_null(hashmap__find(&m, &(uint64_t){8192}));
}

/* Every key hashes to the last slot: one chain, wrapping to slot 0. */
static size_t last_slot(const void *key)
{
	return SIZE_MAX;
}

static bool drop_odd(void *entry, void *ctx)
{
	struct entry *e = entry;

	(*(int *)ctx)++;
	return e->key & 1;
}

static void test_prune_chain(void **state)
{
	struct hashmap m = HASHMAP_INIT(sizeof(uint64_t), sizeof(struct entry), last_slot, NULL);
	int asked = 0;

	for (uint64_t k = 0; k < 100; k++)
		put(&m, k, k * 10);
	hashmap__prune(&m, drop_odd, &asked);
	assert_int_equal(m.nr, 50);
	assert_int_equal(count(&m), 50);
	/* Each entry asked about once, or again after one moved into its slot. */
	assert_true(asked >= 100);
	for (uint64_t k = 0; k < 100; k++)
		assert_int_equal(value_of(&m, k), k & 1 ? UINT64_MAX : k * 10);
	hashmap__release(&m);
}

/* Pruning keys spread by the byte hash leaves the others findable. */
static bool drop_below(void *entry, void *ctx)
{
	return ((struct entry *)entry)->key < *(uint64_t *)ctx;
}

static void test_prune_spread(void **state)
{
	struct hashmap m = HASHMAP_INIT(sizeof(uint64_t), sizeof(struct entry), NULL, NULL);
	uint64_t below = 3000;

	for (uint64_t k = 0; k < 5000; k++)
		put(&m, k, k);
	hashmap__prune(&m, drop_below, &below);
	assert_int_equal(m.nr, 2000);
	for (uint64_t k = 0; k < 5000; k++)
		assert_int_equal(value_of(&m, k), k < 3000 ? UINT64_MAX : k);
	hashmap__release(&m);
}

/* Keys of two numbers, compared whole. */
static void test_pairs(void **state)
{
	struct pair {
		uint64_t a, b;
		uint64_t id;
	} * e;
	struct hashmap m = HASHMAP_INIT(2 * sizeof(uint64_t), sizeof(struct pair), NULL, NULL);
	bool added;

	e = hashmap__insert(&m, &(uint64_t[2]){1, 2}, &added);
	e->id = 1;
	e = hashmap__insert(&m, &(uint64_t[2]){2, 1}, &added);
	assert_true(added);
	e->id = 2;
	assert_int_equal(((struct pair *)hashmap__find(&m, &(uint64_t[2]){1, 2}))->id, 1);
	assert_int_equal(((struct pair *)hashmap__find(&m, &(uint64_t[2]){2, 1}))->id, 2);
	assert_null(hashmap__find(&m, &(uint64_t[2]){1, 1}));
	hashmap__release(&m);
}

/* String keys by their contents, not their address. */
static void test_strings(void **state)
{
	struct name {
		const char *str;
		size_t index;
	} * e;
	struct hashmap m = HASHMAP_INIT(sizeof(const char *), sizeof(struct name), hashmap_str_hash,
					hashmap_str_equal);
	char buf[32], other[32];
	bool added;

	for (size_t i = 0; i < 1000; i++) {
		snprintf(buf, sizeof(buf), "name%zu", i);
		e = hashmap__insert(&m, &(const char *){strdup(buf)}, &added);
		assert_true(added);
		e->index = i;
	}
	for (size_t i = 0; i < 1000; i++) {
		snprintf(other, sizeof(other), "name%zu", i);
		e = hashmap__find(&m, &(const char *){other});
		assert_non_null(e);
		assert_string_equal(e->str, other);
		assert_int_equal(e->index, i);
	}
	assert_null(hashmap__find(&m, &(const char *){"name1000"}));
	for (e = hashmap__next(&m, NULL); e; e = hashmap__next(&m, e))
		free((char *)e->str);
	hashmap__release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow_and_find), cmocka_unit_test(test_prune_chain),
	    cmocka_unit_test(test_prune_spread),  cmocka_unit_test(test_pairs),
	    cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
