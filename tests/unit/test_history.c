// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Trend, growth and peak across reports; the per-block pass of profile.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "analysis/history.h"
#include "analysis/profile.h"

#define UNUSED __attribute__((unused))

/* One collection: stack i holds bytes[i] in one block; its frames say both. */
static void collect(struct profile *p, const uint64_t *bytes, size_t n)
{
	profile__clear(p);
	for (size_t i = 0; i < n; i++) {
		struct stack_stats st = {
		    .outstanding_bytes = bytes[i],
		    .outstanding_allocs = bytes[i] ? 1 : 0,
		    .allocs = 1,
		    .alloc_bytes = bytes[i],
		};
		struct stack_trace trace = {.nr = 2, .ips = {i + 1, bytes[i]}};

		assert_int_equal(profile__add(p, i + 1, &st, &trace), 0);
	}
}

static enum trend trend_after(const uint64_t *values, size_t n)
{
	struct profile *p = profile__new();
	struct history *h = history__new(0);
	enum trend t;

	for (size_t i = 0; i < n; i++) {
		collect(p, &values[i], 1);
		assert_int_equal(history__update(h, p, 1000 + i), 0);
	}
	t = profile__stack(p, 0)->trend;
	history__free(h);
	profile__free(p);
	return t;
}

static void test_trends(void **state UNUSED)
{
	static const uint64_t growing[] = {100, 200, 300, 400};
	static const uint64_t growing_pause[] = {100, 200, 200, 300};
	static const uint64_t stable[] = {1000, 1020, 990, 1000};
	static const uint64_t shrinking[] = {900, 500, 400, 100};
	static const uint64_t varying[] = {100, 900, 200, 800};
	static const uint64_t dips_once[] = {100, 200, 150, 300};

	assert_int_equal(trend_after(growing, 2), TREND_NEW);
	assert_int_equal(trend_after(growing, 4), TREND_GROWING);
	assert_int_equal(trend_after(growing_pause, 4), TREND_GROWING);
	assert_int_equal(trend_after(stable, 4), TREND_STABLE);
	assert_int_equal(trend_after(shrinking, 4), TREND_SHRINKING);
	assert_int_equal(trend_after(varying, 4), TREND_VARYING);
	/* A leak never gives memory back: one fall and it is not "growing". */
	assert_int_equal(trend_after(dips_once, 4), TREND_VARYING);
}

static void test_growth_and_ranking(void **state UNUSED)
{
	struct profile *p = profile__new();
	struct history *h = history__new(0);
	const struct profile_stack *grow[2];
	/* Stack 1 stable and large, 2 grows by 10, 3 grows by 50. */
	static const uint64_t r[][3] = {
	    {5000, 10, 50},
	    {5000, 20, 100},
	    {5000, 30, 150},
	    {5000, 40, 200},
	};

	for (size_t i = 0; i < 4; i++) {
		collect(p, r[i], 3);
		assert_int_equal(history__update(h, p, 10 * i), 0);
	}
	assert_int_equal(profile__stack(p, 0)->growth_bytes, 0);
	assert_int_equal(profile__stack(p, 1)->growth_bytes, 10);
	assert_int_equal(profile__stack(p, 2)->growth_bytes, 50);
	assert_int_equal(history__growing(p, grow, 2), 2);
	assert_int_equal(grow[0]->stack_id, 3);
	assert_int_equal(grow[1]->stack_id, 2);
	assert_int_equal(history__growing(p, grow, 1), 1);
	assert_int_equal(grow[0]->stack_id, 3);
	history__free(h);
	profile__free(p);
}

/* A report soon after the previous one stands in for it. */
static void test_close_reports(void **state UNUSED)
{
	struct profile *p = profile__new();
	struct history *h = history__new(2.5);
	static const uint64_t v[] = {100, 200, 300, 400, 420};
	static const double t[] = {0, 5, 10, 15, 16};

	for (size_t i = 0; i < 5; i++) {
		collect(p, &v[i], 1);
		assert_int_equal(history__update(h, p, t[i]), 0);
	}
	assert_int_equal(profile__stack(p, 0)->trend, TREND_GROWING);
	assert_int_equal(profile__stack(p, 0)->growth_bytes, 120);
	history__free(h);
	profile__free(p);
}

static void test_peak(void **state UNUSED)
{
	struct profile *p = profile__new();
	struct history *h = history__new(0);
	static const uint64_t r[][2] = {{100, 0}, {700, 300}, {50, 10}};
	const struct peak *pk;

	for (size_t i = 0; i < 3; i++) {
		collect(p, r[i], 2);
		assert_int_equal(history__update(h, p, 100 + i), 0);
	}
	pk = history__peak(h);
	assert_true(pk->time == 101);
	assert_int_equal(pk->outstanding_bytes, 1000);
	assert_int_equal(pk->nr_stacks, 2);
	assert_int_equal(pk->stacks[0].stack_id, 1);
	assert_int_equal(pk->stacks[0].stats.outstanding_bytes, 700);
	/* The frames of the peak's time, not of the profile's last collection. */
	assert_int_equal(pk->stacks[0].nr_ips, 2);
	assert_int_equal(pk->stacks[0].ips[1], 700);
	assert_int_equal(pk->stacks[1].ips[0], 2);
	assert_int_equal(pk->stacks[1].ips[1], 300);
	history__free(h);
	profile__free(p);
}

static void test_block_pass(void **state UNUSED)
{
	struct profile *p = profile__new();
	const struct profile_thread *th;
	static const uint64_t bytes[] = {999, 999};

	collect(p, bytes, 2);
	assert_int_equal(profile__begin_blocks(p), 0);
	/* Stack 1: 3 blocks in two threads; stack 2 none; an unknown stack is skipped. */
	assert_int_equal(profile__add_block(p, 1, 100, 1, 7, 0x1000), 0);
	assert_int_equal(profile__add_block(p, 1, 50, 1, 8, 0x2000), 0);
	assert_int_equal(profile__add_block(p, 1, 25, 1, 7, 0x3000), 0);
	assert_int_equal(profile__add_block(p, 42, 1, 1, 7, 0x4000), 0);
	assert_int_equal(profile__end_blocks(p), 0);

	assert_int_equal(profile__totals(p)->outstanding_bytes, 175);
	assert_int_equal(profile__totals(p)->outstanding_allocs, 3);
	assert_int_equal(profile__nr_holding(p), 1);
	assert_int_equal(profile__stack(p, 0)->stats.outstanding_bytes, 175);
	assert_int_equal(profile__stack(p, 0)->sample_addr, 0x1000);
	assert_int_equal(profile__stack(p, 0)->sample_size, 100);
	assert_int_equal(profile__stack(p, 1)->stats.outstanding_bytes, 0);
	assert_int_equal(profile__threads(p, &th), 2);
	assert_int_equal(th[0].tid, 7);
	assert_int_equal(th[0].outstanding_bytes, 125);
	assert_int_equal(th[0].outstanding_allocs, 2);
	assert_int_equal(th[0].nr_stacks, 1);
	assert_int_equal(th[0].stacks[0].index, 0);
	assert_int_equal(th[1].tid, 8);
	assert_int_equal(th[1].outstanding_bytes, 50);

	profile__drop_stack(p, 0);
	assert_int_equal(profile__totals(p)->outstanding_bytes, 0);
	assert_int_equal(profile__nr_holding(p), 0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trends),	  cmocka_unit_test(test_growth_and_ranking),
	    cmocka_unit_test(test_close_reports), cmocka_unit_test(test_peak),
	    cmocka_unit_test(test_block_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
