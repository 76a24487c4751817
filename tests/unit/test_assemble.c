// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Report assembly: profiles and history in, a report's exact parts out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "report/assemble.h"

#define UNUSED __attribute__((unused))

/* Function names by return address: 0x10 "f10", 0x20 "f20", ... */
static const char *const names[] = {"f10", "f20", "f30", "f40", "f50", "f60"};

/* One frame per address, named from the table; counts its calls. */
static size_t table_frames(void *ctx, const __u64 *ips, uint32_t nr, struct frame_info *out)
{
	int *calls = ctx;

	(*calls)++;
	for (uint32_t i = 0; i < nr; i++)
		out[i] = (struct frame_info){.addr = ips[i], .function = names[ips[i] / 0x10 - 1]};
	return nr;
}

/* Stack i+1 holds bytes[i] in one block; its frames are 0x10 * (i+1), 0x10 * (i+2). */
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
		struct stack_trace tr = {.nr = 2, .ips = {0x10 * (i + 1), 0x10 * (i + 2)}};

		assert_int_equal(profile__add(p, i + 1, &st, &tr), 0);
	}
}

static void expect_stack(const struct report_stack *s, uint64_t id, uint64_t bytes,
			 const char *trend, const char *f0, const char *f1)
{
	assert_int_equal(s->stack_id, id);
	assert_int_equal(s->outstanding_bytes, bytes);
	assert_string_equal(s->trend, trend);
	assert_int_equal(s->nr_frames, 2);
	assert_string_equal(s->frames[0].function, f0);
	assert_string_equal(s->frames[1].function, f1);
}

/*
 * Three stacks over four reports: 1 stable at 5000, 2 growing by 10, 3
 * growing by 50. Top 2, the growing list and the peak, exactly.
 */
static void test_assemble_lists(void **state UNUSED)
{
	static const uint64_t r[][3] = {
	    {5000, 10, 50},
	    {5000, 20, 100},
	    {5000, 30, 150},
	    {5000, 40, 200},
	};
	struct profile *p = profile__new();
	struct history *h = history__new(0);
	int calls = 0;
	struct assemble_source src = {.frames = table_frames, .ctx = &calls};
	struct assemble_opts o = {.top = 2, .peak = true};
	struct report rep = {0};
	struct report_parts *parts;

	for (size_t i = 0; i < 4; i++) {
		collect(p, r[i], 3);
		assert_int_equal(history__update(h, p, 10 * i + 10), 0);
	}
	parts = report_parts__assemble(p, h, &o, &src, &rep);
	assert_non_null(parts);
	assert_int_equal(rep.nr_holding, 3);
	assert_int_equal(rep.totals->outstanding_bytes, 5240);
	assert_int_equal(rep.nr_stacks, 2);
	expect_stack(&rep.stacks[0], 1, 5000, "stable", "f10", "f20");
	expect_stack(&rep.stacks[1], 3, 200, "growing", "f30", "f40");
	assert_int_equal(rep.nr_growing, 2);
	expect_stack(&rep.growing[0], 3, 200, "growing", "f30", "f40");
	expect_stack(&rep.growing[1], 2, 40, "growing", "f20", "f30");
	assert_non_null(rep.peak);
	assert_true(rep.peak->time == 40);
	assert_int_equal(rep.peak->outstanding_bytes, 5240);
	assert_int_equal(rep.peak->nr_stacks, 3);
	expect_stack(&rep.peak->stacks[2], 2, 40, "growing", "f20", "f30");
	assert_int_equal(rep.nr_threads, 0);
	/* One call per stack listed: 2 top, 2 growing, 3 at the peak. */
	assert_int_equal(calls, 7);
	/* Each stack's frames are its own: no two lists share an array. */
	assert_ptr_not_equal(rep.stacks[1].frames, rep.growing[0].frames);
	report_parts__free(parts);
	history__free(h);
	profile__free(p);
}

/* No history: no growing list, no peak; top 0 lists every stack holding memory. */
static void test_assemble_without_history(void **state UNUSED)
{
	static const uint64_t bytes[] = {300, 0, 100};
	struct profile *p = profile__new();
	int calls = 0;
	struct assemble_source src = {.frames = table_frames, .ctx = &calls};
	struct assemble_opts o = {.peak = true};
	struct report rep = {0};
	struct report_parts *parts;

	collect(p, bytes, 3);
	parts = report_parts__assemble(p, NULL, &o, &src, &rep);
	assert_non_null(parts);
	assert_int_equal(rep.nr_stacks, 2);
	assert_int_equal(rep.stacks[0].stack_id, 1);
	assert_int_equal(rep.stacks[1].stack_id, 3);
	assert_string_equal(rep.stacks[1].frames[0].function, "f30");
	assert_int_equal(rep.nr_growing, 0);
	assert_null(rep.peak);
	assert_int_equal(calls, 2);
	report_parts__free(parts);
	profile__free(p);
}

/*
 * --leak-check: stacks 1 (300 bytes, reachable), 2 (100, all definitely
 * lost), 3 (200: 50 definitely lost, 150 indirectly) and an unlisted
 * stack 9's verdict. Definitely lost first, the most first, cut to top 2;
 * each stack's classes and the totals of every verdict, exactly.
 */
static void test_assemble_leak_classes(void **state UNUSED)
{
	static const uint64_t bytes[] = {300, 100, 200};
	static const struct leak_verdict v[] = {
	    {1, 300, LEAK_REACHABLE, LEAK_HEUR_NONE}, {2, 60, LEAK_DEFINITE, LEAK_HEUR_NONE},
	    {2, 40, LEAK_DEFINITE, LEAK_HEUR_NONE},   {3, 50, LEAK_DEFINITE, LEAK_HEUR_NONE},
	    {3, 150, LEAK_INDIRECT, LEAK_HEUR_NONE},  {9, 7, LEAK_POSSIBLE, LEAK_HEUR_NONE},
	};
	struct assemble_leaks leaks = {
	    .verdicts = v,
	    .nr = 6,
	    .check = {.pause_ms = 1.5, .bytes_scanned = 4096},
	};
	struct profile *p = profile__new();
	int calls = 0;
	struct assemble_source src = {.frames = table_frames, .ctx = &calls};
	struct assemble_opts o = {.top = 2, .leaks = &leaks};
	struct report rep = {0};
	struct report_parts *parts;

	collect(p, bytes, 3);
	parts = report_parts__assemble(p, NULL, &o, &src, &rep);
	assert_non_null(parts);
	assert_int_equal(rep.nr_stacks, 2);
	assert_int_equal(rep.stacks[0].stack_id, 2);
	assert_true(rep.stacks[0].classified);
	assert_int_equal(rep.stacks[0].class_bytes[LEAK_DEFINITE], 100);
	assert_int_equal(rep.stacks[0].class_allocs[LEAK_DEFINITE], 2);
	assert_int_equal(rep.stacks[1].stack_id, 3);
	assert_int_equal(rep.stacks[1].class_bytes[LEAK_DEFINITE], 50);
	assert_int_equal(rep.stacks[1].class_bytes[LEAK_INDIRECT], 150);
	assert_int_equal(rep.stacks[1].class_allocs[LEAK_INDIRECT], 1);
	assert_int_equal(rep.stacks[1].class_bytes[LEAK_REACHABLE], 0);
	assert_non_null(rep.leak_check);
	assert_int_equal(rep.leak_check->bytes_scanned, 4096);
	assert_int_equal(rep.leak_check->class_bytes[LEAK_DEFINITE], 150);
	assert_int_equal(rep.leak_check->class_allocs[LEAK_DEFINITE], 3);
	assert_int_equal(rep.leak_check->class_bytes[LEAK_INDIRECT], 150);
	assert_int_equal(rep.leak_check->class_bytes[LEAK_POSSIBLE], 7);
	assert_int_equal(rep.leak_check->class_bytes[LEAK_REACHABLE], 300);
	assert_int_equal(rep.leak_check->class_allocs[LEAK_REACHABLE], 1);
	report_parts__free(parts);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_assemble_lists),
	    cmocka_unit_test(test_assemble_without_history),
	    cmocka_unit_test(test_assemble_leak_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
