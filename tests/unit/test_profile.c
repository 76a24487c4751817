// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "analysis/profile.h"

static int setup(void **state)
{
	*state = profile__new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	profile__free(*state);
	return 0;
}

static void add(struct profile *p, uint64_t id, uint64_t bytes, uint64_t nr, uint64_t allocs)
{
	struct stack_stats st = {
	    .outstanding_bytes = bytes,
	    .outstanding_allocs = nr,
	    .allocs = allocs,
	    .alloc_bytes = bytes,
	};
	struct stack_trace trace = {.nr = 1, .ips = {0x1000 + id}};

	assert_int_equal(profile__add(p, id, &st, &trace), 0);
}

/* The stack ids of profile__top(p, top), in order, into ids[]. */
static size_t top_ids(struct profile *p, size_t top, uint64_t *ids)
{
	const struct profile_stack *const *out;
	size_t i, n = profile__top(p, top, &out);

	for (i = 0; i < n; i++)
		ids[i] = out[i]->stack_id;
	return n;
}

static void add_mixed(struct profile *p)
{
	add(p, 7, 100, 1, 5);
	add(p, 3, 300, 2, 2);
	add(p, 9, 100, 2, 2); /* same bytes as 7, more blocks */
	add(p, 5, 100, 2, 3); /* same bytes and blocks as 9, lower id */
	add(p, 4, 0, 0, 8);   /* all freed */
	add(p, 8, 0, 1, 1);   /* a zero-size block still held */
	add(p, 1, 50, 1, 1);
}

static void test_order_and_tie_breaks(void **state)
{
	struct profile *p = *state;
	uint64_t ids[8];

	add_mixed(p);
	assert_int_equal(top_ids(p, 0, ids), 6);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 5);
	assert_int_equal(ids[2], 9);
	assert_int_equal(ids[3], 7);
	assert_int_equal(ids[4], 1);
	assert_int_equal(ids[5], 8);
	assert_int_equal(profile__nr_holding(p), 6);
}

static void test_top_cut(void **state)
{
	struct profile *p = *state;
	uint64_t ids[8];

	add_mixed(p);
	assert_int_equal(top_ids(p, 2, ids), 2);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 5);
	assert_int_equal(top_ids(p, 6, ids), 6);
	assert_int_equal(top_ids(p, 100, ids), 6);
	assert_int_equal(profile__nr_holding(p), 6);
}

static void test_empty(void **state)
{
	const struct profile_stack *const *out;
	struct profile *p = *state;

	assert_int_equal(profile__top(p, 0, &out), 0);
	assert_int_equal(profile__nr_holding(p), 0);
	assert_int_equal(profile__totals(p)->outstanding_bytes, 0);
	assert_int_equal(profile__totals(p)->lost, 0);
}

static void test_none_holding(void **state)
{
	struct profile *p = *state;
	uint64_t ids[1];

	add(p, 1, 0, 0, 10);
	add(p, 2, 0, 0, 1);
	assert_int_equal(top_ids(p, 0, ids), 0);
	assert_int_equal(profile__nr_holding(p), 0);
}

static void test_totals(void **state)
{
	uint64_t counters[CNT_MAX] = {
	    [CNT_ALLOCS] = 1000,      [CNT_FREES] = 900,	  [CNT_UNTRACKED_FREES] = 7,
	    [CNT_LOST_ALLOCS] = 1,    [CNT_LOST_STATS] = 20,	  [CNT_LOST_INFLIGHT] = 300,
	    [CNT_LOST_STACKS] = 4000, [CNT_STACK_ERRORS] = 50000, [CNT_LOST_EVENTS] = 600000,
	};
	struct profile *p = *state;
	const struct profile_totals *t;

	add_mixed(p);
	profile__set_counters(p, counters);
	t = profile__totals(p);
	assert_int_equal(t->outstanding_bytes, 650);
	assert_int_equal(t->outstanding_allocs, 9);
	assert_int_equal(t->allocs, 1000);
	assert_int_equal(t->frees, 900);
	assert_int_equal(t->untracked_frees, 7);
	assert_int_equal(t->lost, 600321);
	assert_memory_equal(t->counters, counters, sizeof(counters));
}

/*
 * A per-block pass of pages recorded at periods P (--growth's sampling):
 * each counts P pages and adds size^2 * P * (P - 1) to the variance, the
 * Horvitz-Thompson estimate; a page recorded for sure (P = 1) adds none.
 * A dropped stack takes its share out of the totals.
 */
static void test_block_weights(void **state)
{
	static const struct {
		uint64_t stack;
		double weight;
	} pages[] = {{1, 1}, {1, 1}, {1, 64}, {1, 2}, {2, 8}, {2, 1}, {3, 1}};
	struct profile *p = *state;
	const struct profile_totals *t;

	add(p, 1, 0, 0, 0);
	add(p, 2, 0, 0, 0);
	add(p, 3, 0, 0, 0);
	assert_int_equal(profile__begin_blocks(p), 0);
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		assert_int_equal(profile__add_block(p, pages[i].stack, 4096, pages[i].weight, 7,
						    0x10000 * (i + 1)),
				 0);
	assert_int_equal(profile__end_blocks(p), 0);
	t = profile__totals(p);
	assert_int_equal(t->outstanding_allocs, 1 + 1 + 64 + 2 + 8 + 1 + 1);
	assert_int_equal(t->outstanding_bytes, 4096 * t->outstanding_allocs);
	assert_true(t->outstanding_var == 4096.0 * 4096 * (64 * 63 + 2 * 1 + 8 * 7));
	assert_int_equal(profile__stack(p, 0)->stats.outstanding_allocs, 68);
	assert_true(profile__stack(p, 0)->outstanding_var == 4096.0 * 4096 * (64 * 63 + 2));
	assert_true(profile__stack(p, 2)->outstanding_var == 0);
	profile__drop_stack(p, 0);
	assert_int_equal(t->outstanding_allocs, 10);
	assert_true(t->outstanding_var == 4096.0 * 4096 * 8 * 7);
}

static void test_clear(void **state)
{
	uint64_t counters[CNT_MAX] = {[CNT_ALLOCS] = 3, [CNT_LOST_ALLOCS] = 2};
	struct profile *p = *state;
	const struct profile_totals *t = profile__totals(p);
	uint64_t ids[8];

	add_mixed(p);
	profile__set_counters(p, counters);
	profile__clear(p);
	assert_int_equal(top_ids(p, 0, ids), 0);
	assert_int_equal(profile__nr_holding(p), 0);
	assert_int_equal(t->outstanding_bytes, 0);
	assert_int_equal(t->outstanding_allocs, 0);
	/* Counters are global, not per stack: the next collection sets them. */
	assert_int_equal(t->allocs, 3);
	assert_int_equal(t->lost, 2);

	add(p, 2, 10, 1, 1);
	assert_int_equal(top_ids(p, 0, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_int_equal(t->outstanding_bytes, 10);
	assert_int_equal(profile__nr_holding(p), 1);
}

static void test_copies_stats_and_ips(void **state)
{
	struct stack_stats st = {4096, 2, 5, 8192};
	struct stack_trace trace = {
	    .nr = 3, .flags = STACK_CUT, .ips = {0x401000, 0x401100, 0x401200}};
	const struct profile_stack *const *out;
	struct profile *p = *state;

	assert_int_equal(profile__add(p, 42, &st, &trace), 0);
	memset(&st, 0, sizeof(st));
	memset(&trace, 0, sizeof(trace));
	assert_int_equal(profile__top(p, 0, &out), 1);
	assert_int_equal(out[0]->stack_id, 42);
	assert_int_equal(out[0]->stats.outstanding_bytes, 4096);
	assert_int_equal(out[0]->stats.outstanding_allocs, 2);
	assert_int_equal(out[0]->stats.allocs, 5);
	assert_int_equal(out[0]->stats.alloc_bytes, 8192);
	assert_int_equal(out[0]->nr_ips, 3);
	assert_int_equal(out[0]->flags, STACK_CUT);
	assert_int_equal(out[0]->ips[0], 0x401000);
	assert_int_equal(out[0]->ips[2], 0x401200);
}

static void test_ips_clamped(void **state)
{
	struct stack_stats st = {.outstanding_bytes = 1, .outstanding_allocs = 1};
	struct stack_trace trace = {.nr = MAX_STACK_DEPTH + 3};
	const struct profile_stack *const *out;
	struct profile *p = *state;
	size_t i;

	for (i = 0; i < MAX_STACK_DEPTH; i++)
		trace.ips[i] = i + 1;
	assert_int_equal(profile__add(p, 1, &st, &trace), 0);
	assert_int_equal(profile__top(p, 0, &out), 1);
	assert_int_equal(out[0]->nr_ips, MAX_STACK_DEPTH);
	assert_int_equal(out[0]->ips[MAX_STACK_DEPTH - 1], MAX_STACK_DEPTH);
}

static void test_no_ips(void **state)
{
	struct stack_stats st = {.outstanding_bytes = 8, .outstanding_allocs = 1};
	const struct profile_stack *const *out;
	struct profile *p = *state;

	assert_int_equal(profile__add(p, STACK_ID_NONE, &st, NULL), 0);
	assert_int_equal(profile__top(p, 0, &out), 1);
	assert_int_equal(out[0]->stack_id, STACK_ID_NONE);
	assert_int_equal(out[0]->nr_ips, 0);
}

/* Enough stacks to grow the arrays several times; the id breaks every tie. */
static void test_many(void **state)
{
	const struct profile_stack *const *out;
	struct profile *p = *state;
	size_t i, n;

	for (i = 0; i < 1000; i++)
		add(p, 1000 - i, (i % 10) * 16, 1, 1);
	n = profile__top(p, 0, &out);
	assert_int_equal(n, 1000);
	assert_int_equal(profile__totals(p)->outstanding_bytes, 100 * 45 * 16);
	for (i = 1; i < n; i++) {
		assert_true(out[i - 1]->stats.outstanding_bytes >= out[i]->stats.outstanding_bytes);
		if (out[i - 1]->stats.outstanding_bytes == out[i]->stats.outstanding_bytes)
			assert_true(out[i - 1]->stack_id < out[i]->stack_id);
	}
	assert_int_equal(out[0]->stats.outstanding_bytes, 144);
	assert_int_equal(out[0]->stack_id, 1);
	assert_int_equal(out[999]->stats.outstanding_bytes, 0);
	assert_int_equal(out[999]->stack_id, 1000);
}

/*
 * Stacks of every depth: the frames' pool moves many times as it grows,
 * and after a clear it is filled again; each stack keeps its own frames.
 */
static void test_frames_of_every_depth(void **state)
{
	struct stack_stats st = {.outstanding_bytes = 1, .outstanding_allocs = 1};
	struct stack_trace trace;
	struct profile *p = *state;

	for (int round = 0; round < 2; round++) {
		profile__clear(p);
		for (uint64_t id = 0; id < 300; id++) {
			trace.nr = id % (MAX_STACK_DEPTH + 1);
			for (uint32_t j = 0; j < trace.nr; j++)
				trace.ips[j] = id << 8 | j;
			assert_int_equal(profile__add(p, id, &st, &trace), 0);
		}
		assert_int_equal(profile__nr_stacks(p), 300);
		for (uint64_t id = 0; id < 300; id++) {
			const struct profile_stack *s = profile__stack(p, id);

			assert_int_equal(s->nr_ips, id % (MAX_STACK_DEPTH + 1));
			for (uint32_t j = 0; j < s->nr_ips; j++)
				assert_int_equal(s->ips[j], id << 8 | j);
		}
	}
}

static void test_counter_names(void **state __attribute__((unused)))
{
	static const char *const names[CNT_MAX] = {
	    "allocs",
	    "frees",
	    "untracked_frees",
	    "lost_allocs",
	    "lost_stats",
	    "lost_inflight",
	    "lost_stacks",
	    "stack_errors",
	    "lost_events",
	    "lost_cap",
	    "lost_procs",
	    "stacks_cut",
	    "unwind_misses",
	    "stacks_recalled",
	    "unwind_full",
	    "unopened",
	    "pages_sampled_out",
	    "pages_unclassified",
	    "pages_classified_late",
	};
	int c;

	for (c = 0; c < CNT_MAX; c++)
		assert_string_equal(counter_name(c), names[c]);
	assert_null(counter_name(CNT_MAX));
}

/*
 * What each counter says of a report, one counter at a time, against the
 * lists written out here: a counter added to counters.def with the wrong
 * kind, or without its warning, fails.
 */
static void test_counter_kinds(void **state __attribute__((unused)))
{
	static const char *const lost =
	    " lost_allocs lost_stats lost_inflight lost_events lost_cap "
	    "lost_procs pages_unclassified ";
	static const char *const stacks = " lost_stacks stack_errors stacks_cut unwind_misses "
					  "unwind_full unopened ";
	char word[40];

	for (int c = 0; c < CNT_MAX; c++) {
		uint64_t counters[CNT_MAX] = {0};
		struct profile_totals t = {0};

		counters[c] = 3;

		snprintf(word, sizeof(word), " %s ", counter_name(c));
		profile_totals__set_counters(&t, counters);
		assert_int_equal(t.lost, strstr(lost, word) ? 3 : 0);
		assert_int_equal(t.stacks_incomplete, !!strstr(stacks, word));
		assert_int_equal(!counter_reason(c), counter_kind(c) == CNT_KIND_PLAIN);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_order_and_tie_breaks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_top_cut, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_none_holding, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_totals, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_block_weights, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copies_stats_and_ips, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ips_clamped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_ips, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_frames_of_every_depth, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many, setup, teardown),
	    cmocka_unit_test(test_counter_names),
	    cmocka_unit_test(test_counter_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
