// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "export/exporters.h"
#include "fixtures.h"

/* Names that would break the format: ';' between frames, '\n' between lines. */
static const struct frame_info frames_odd[] = {
    {.addr = 0x401000, .module = "/bin/x", .offset = 0x1000, .function = "we;ird\nname\x7f"},
    {.addr = 0x401100,
     .module = "/bin/x",
     .offset = 0x1100,
     .function = "std::vector<int>::push_back(int const&)"},
};

static const struct report_stack stacks[] = {
    LEAKY_STACKS,
    {.stack_id = 5,
     .outstanding_bytes = 7,
     .outstanding_allocs = 1,
     .allocs = 1,
     .alloc_bytes = 7,
     .nr_frames = ARRAY_SIZE(frames_odd),
     .frames = frames_odd},
    /* Holding nothing: left out. */
    {.stack_id = 6,
     .outstanding_bytes = 0,
     .outstanding_allocs = 0,
     .allocs = 4,
     .alloc_bytes = 64,
     .nr_frames = ARRAY_SIZE(frames_b),
     .frames = frames_b},
};

static const struct profile_totals totals = {.outstanding_bytes = 1053716};

static const struct report final_report = FINAL_REPORT(stacks, &totals);

/* What the exporter writes after seeing @reports; free() it. */
static char *render(void *state, const struct report *reports, size_t nr)
{
	char *data = NULL;
	size_t size = 0, i;
	FILE *f = open_memstream(&data, &size);

	assert_non_null(state);
	assert_non_null(f);
	for (i = 0; i < nr; i++)
		assert_int_equal(folded_ops.report(state, &reports[i]), 0);
	assert_int_equal(folded_ops.finish(state, f), 0);
	folded_ops.free(state);
	assert_int_equal(fclose(f), 0);
	return data;
}

static void assert_renders(void *state, const struct report *reports, size_t nr,
			   const char *expected)
{
	char *got = render(state, reports, nr);

	assert_string_equal(got, expected);
	free(got);
}

static void test_bytes(void **state UNUSED)
{
	assert_renders(folded_bytes_new(), &final_report, 1,
		       "0x7f00deadbeef;/lib/x86_64-linux-gnu/libc.so.6+0x27678 1536\n"
		       "[stack unknown] 100\n"
		       "main;helper_[i];leak_a 1052672\n"
		       "std::vector<int>::push_back(int const&);we?ird?name? 7\n");
}

static void test_count(void **state UNUSED)
{
	assert_renders(folded_count_new(), &final_report, 1,
		       "0x7f00deadbeef;/lib/x86_64-linux-gnu/libc.so.6+0x27678 1\n"
		       "[stack unknown] 1\n"
		       "main;helper_[i];leak_a 12\n"
		       "std::vector<int>::push_back(int const&);we?ird?name? 1\n");
}

/* Only the last report counts: its numbers are cumulative. */
static void test_last_report(void **state UNUSED)
{
	struct report reports[2] = {final_report, final_report};

	reports[0].final = false;
	reports[1].nr_stacks = 1;
	assert_renders(folded_bytes_new(), reports, 2, "main;helper_[i];leak_a 1048576\n");
}

static void test_empty(void **state UNUSED)
{
	struct report r = final_report;

	r.nr_stacks = 0;
	r.stacks = NULL;
	assert_renders(folded_bytes_new(), &r, 1, "");
	assert_renders(folded_bytes_new(), NULL, 0, "");
}

/*
 * Lines sort whole, weight included: a stack that is a prefix of another
 * up to a space could order apart from its line.
 */
static void test_line_order(void **state UNUSED)
{
	static const struct frame_info f1[] = {{.addr = 1, .function = "f"}};
	static const struct frame_info f2[] = {{.addr = 2, .function = "f 1"}};
	static const struct report_stack s[] = {
	    {.stack_id = 1,
	     .outstanding_bytes = 2,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .alloc_bytes = 2,
	     .nr_frames = 1,
	     .frames = f1},
	    {.stack_id = 2,
	     .outstanding_bytes = 5,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .alloc_bytes = 5,
	     .nr_frames = 1,
	     .frames = f2},
	};
	struct report r = final_report;

	r.stacks = s;
	r.nr_stacks = ARRAY_SIZE(s);
	assert_renders(folded_bytes_new(), &r, 1, "f 1 5\nf 2\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bytes),	cmocka_unit_test(test_count),
	    cmocka_unit_test(test_last_report), cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_line_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
