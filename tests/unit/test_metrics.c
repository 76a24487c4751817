// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "export/metrics.h"
#include "fixtures.h"

/* A name that would break the format: a quote, a backslash, a newline. */
static const struct frame_info frames_odd[] = {
    {.addr = 0x401000, .module = "/bin/x", .offset = 0x1000, .function = "we\"i\\rd\nname"},
};

static const struct report_stack stacks[] = {
    {.stack_id = 0xa1,
     .outstanding_bytes = 4000,
     .outstanding_allocs = 4,
     .nr_frames = ARRAY_SIZE(frames_a),
     .frames = frames_a},
    {.stack_id = 0xb2, .outstanding_bytes = 300, .outstanding_allocs = 3, .nr_frames = 0},
    {.stack_id = 0xc3,
     .outstanding_bytes = 20,
     .outstanding_allocs = 2,
     .nr_frames = ARRAY_SIZE(frames_odd),
     .frames = frames_odd},
};

/* 1 byte in 1 block held through stacks below the top three. */
static const struct profile_totals totals = {
    .outstanding_bytes = 4321,
    .outstanding_allocs = 10,
    .allocs = 25,
    .frees = 15,
    .lost = 7,
    .counters = {[CNT_LOST_ALLOCS] = 5, [CNT_LOST_STACKS] = 2, [CNT_STACKS_RECALLED] = 9},
};

static char *render(struct metrics *m, const struct report *r)
{
	char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&data, &size);

	assert_non_null(f);
	assert_int_equal(metrics__render(m, r, f), 0);
	assert_int_equal(fclose(f), 0);
	return data;
}

static void assert_renders(struct metrics *m, const struct report *r, const char *expected)
{
	char *got = render(m, r);

	assert_string_equal(got, expected);
	free(got);
}

#define LABELS			 "{pid=\"1234\",comm=\"leaky\"}"
#define FAMILY(name, type, help) "# HELP " name " " help "\n# TYPE " name " " type "\n"
#define COUNTER(name, v)                                                                           \
	FAMILY("alloctrace_" name "_total", "counter",                                             \
	       "A counter of the JSON report's \"counters\".")                                     \
	"alloctrace_" name "_total" LABELS " " v "\n"

/* clang-format 14 splits a long macro of joined strings a character a line. */
// clang-format off
#define PROC_FAMILIES(big, growth)                                                                 \
	FAMILY("alloctrace_outstanding_bytes", "gauge", "Bytes allocated and not freed.")          \
	"alloctrace_outstanding_bytes" LABELS " 4321\n"                                            \
	FAMILY("alloctrace_outstanding_blocks", "gauge", "Blocks allocated and not freed.")        \
	"alloctrace_outstanding_blocks" LABELS " 10\n"                                             \
	FAMILY("alloctrace_allocs_total", "counter", "Allocation calls since tracing began.")      \
	"alloctrace_allocs_total" LABELS " 25\n"                                                   \
	FAMILY("alloctrace_frees_total", "counter",                                                \
	       "Releases of tracked blocks since tracing began.")                                  \
	"alloctrace_frees_total" LABELS " 15\n"                                                    \
	FAMILY("alloctrace_big_allocs_total", "counter",                                           \
	       "Allocations of at least --big bytes seen since tracing began.")                    \
	"alloctrace_big_allocs_total" LABELS " " big "\n"                                          \
	FAMILY("alloctrace_lost_total", "counter",                                                 \
	       "Calls or blocks missing from the numbers (the sum of the lost_ counters).")        \
	"alloctrace_lost_total" LABELS " 7\n"                                                      \
	FAMILY("alloctrace_growth_bytes_per_second", "gauge",                                      \
	       "Change of the outstanding bytes since the previous report.")                       \
	growth                                                                                     \
	COUNTER("untracked_frees", "0")                                                            \
	COUNTER("lost_allocs", "5")                                                                \
	COUNTER("lost_stats", "0")                                                                 \
	COUNTER("lost_inflight", "0")                                                              \
	COUNTER("lost_stacks", "2")                                                                \
	COUNTER("stack_errors", "0")                                                               \
	COUNTER("lost_events", "0")                                                                \
	COUNTER("lost_cap", "0")                                                                   \
	COUNTER("lost_procs", "0")                                                                 \
	COUNTER("stacks_cut", "0")                                                                 \
	COUNTER("unwind_misses", "0")                                                              \
	COUNTER("stacks_recalled", "9")                                                            \
	COUNTER("unwind_full", "0")                                                                \
	COUNTER("unopened", "0")                                                                   \
	COUNTER("pages_sampled_out", "0")                                                         \
	COUNTER("pages_unclassified", "0")                                                        \
	COUNTER("pages_classified_late", "0")
// clang-format on

#define STACK(name, id, fn, mod, v)                                                                \
	name "{pid=\"1234\",comm=\"leaky\",stack=\"" id "\",function=\"" fn "\",module=\"" mod     \
	     "\"} " v "\n"
#define BYTES  "alloctrace_stack_outstanding_bytes"
#define BLOCKS "alloctrace_stack_outstanding_blocks"

/* The top two stacks each a series, the third and the rest summed as "other". */
static void test_top_and_other(void **state)
{
	struct report r = FINAL_REPORT(stacks, &totals);
	struct metrics *m = metrics__new(2);

	assert_non_null(m);
	assert_int_equal(metrics__big_alloc(m, 1234), 0);
	assert_int_equal(metrics__big_alloc(m, 1234), 0);
	assert_renders(
	    m, &r,
	    PROC_FAMILIES("2", "") FAMILY(BYTES, "gauge", "Bytes held through a stack.")
		STACK(BYTES, "00000000000000a1", "leak_a", "/usr/bin/leaky", "4000")
		    STACK(BYTES, "00000000000000b2", "[stack unknown]", "", "300")
			STACK(BYTES, "other", "", "", "21")
			    FAMILY(BLOCKS, "gauge", "Blocks held through a stack.")
				STACK(BLOCKS, "00000000000000a1", "leak_a", "/usr/bin/leaky", "4")
				    STACK(BLOCKS, "00000000000000b2", "[stack unknown]", "", "3")
					STACK(BLOCKS, "other", "", "", "3"));
	metrics__free(m);
}

/* The growth rate is over the time between two reports; label values escaped. */
static void test_growth_and_escapes(void **state)
{
	struct profile_totals before = totals;
	struct report r = FINAL_REPORT(stacks, &before);
	struct metrics *m = metrics__new(0);
	char *got;

	before.outstanding_bytes = 321;
	r.time -= 2;
	got = render(m, &r);
	free(got);
	r = (struct report)FINAL_REPORT(stacks, &totals);
	assert_renders(
	    m, &r,
	    PROC_FAMILIES("0", "alloctrace_growth_bytes_per_second" LABELS " 2000\n")
		FAMILY(BYTES, "gauge", "Bytes held through a stack.")
		    STACK(BYTES, "00000000000000a1", "leak_a", "/usr/bin/leaky",
			  "4000") STACK(BYTES, "00000000000000b2", "[stack unknown]", "", "300")
			STACK(BYTES, "00000000000000c3", "we\\\"i\\\\rd?name", "/bin/x",
			      "20") STACK(BYTES, "other", "", "", "1")
			    FAMILY(BLOCKS, "gauge", "Blocks held through a stack.")
				STACK(BLOCKS, "00000000000000a1", "leak_a", "/usr/bin/leaky", "4")
				    STACK(BLOCKS, "00000000000000b2", "[stack unknown]", "", "3")
					STACK(BLOCKS, "00000000000000c3", "we\\\"i\\\\rd?name",
					      "/bin/x", "2") STACK(BLOCKS, "other", "", "", "1"));
	metrics__free(m);
}

/* Several processes: each family lists them all, in the report's order. */
static void test_processes(void **state)
{
	static const struct profile_totals small = {.outstanding_bytes = 8,
						    .outstanding_allocs = 1};
	struct report procs[2] = {FINAL_REPORT(stacks, &totals), FINAL_REPORT(stacks, &small)};
	struct report r = {.final = true, .per_process = true, .procs = procs, .nr_procs = 2};
	struct metrics *m = metrics__new(1);
	char *got;

	procs[1].pid = 99;
	procs[1].comm = "b";
	procs[1].nr_stacks = 0;
	got = render(m, &r);
	assert_non_null(strstr(got, "alloctrace_outstanding_bytes" LABELS " 4321\n"
				    "alloctrace_outstanding_bytes{pid=\"99\",comm=\"b\"} 8\n"));
	assert_non_null(strstr(
	    got,
	    STACK(BLOCKS, "other", "", "",
		  "6") "alloctrace_stack_outstanding_blocks{pid=\"99\",comm=\"b\",stack=\"other\","
		       "function=\"\",module=\"\"} 1\n"));
	free(got);
	metrics__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_top_and_other),
	    cmocka_unit_test(test_growth_and_escapes),
	    cmocka_unit_test(test_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
