// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/json.h"
#include "report/report.h"
#include "fixtures.h"

/* 2023-11-14 22:13:20 UTC */
#define T0 1700000000.25

static const struct report_stack stacks[] = {
    {.outstanding_bytes = 1048576,
     .outstanding_allocs = 10,
     .allocs = 10,
     .nr_frames = ARRAY_SIZE(frames_a),
     .frames = frames_a},
    {.outstanding_bytes = 1536,
     .outstanding_allocs = 1,
     .allocs = 3,
     .nr_frames = ARRAY_SIZE(frames_b),
     .frames = frames_b},
    {.outstanding_bytes = 100,
     .outstanding_allocs = 1,
     .allocs = 1,
     .nr_frames = 0,
     .frames = NULL},
};

static const struct profile_totals totals = {
    .outstanding_bytes = 1050212,
    .outstanding_allocs = 12,
    .allocs = 10530,
    .frees = 9326,
    .counters = {[CNT_ALLOCS] = 10530, [CNT_FREES] = 9326},
};

static const struct report periodic = {
    .time = T0,
    .pid = 1234,
    .comm = "leaky",
    .totals = &totals,
    .nr_stacks = ARRAY_SIZE(stacks),
    .nr_holding = 5,
    .stacks = stacks,
    .exit = {.status = -1},
};

static const struct profile_totals lossy_totals = {
    .allocs = 1,
    .frees = 1,
    .untracked_frees = 2,
    .lost = 1200,
    .counters =
	{
	    [CNT_ALLOCS] = 1,
	    [CNT_FREES] = 1,
	    [CNT_UNTRACKED_FREES] = 2,
	    [CNT_LOST_ALLOCS] = 1200,
	    [CNT_LOST_STACKS] = 3,
	},
    .stacks_incomplete = true,
};

static const struct big_alloc big = {
    .time = T0 + 1.25,
    .pid = 1234,
    .tid = 1235,
    .func = "malloc",
    .size = 16777216,
    .addr = 0x7f0000001000,
    .nr_frames = 1,
    .frames = frames_a,
};

/* What the writer prints for @r, or for @a when @r is NULL; free() it. */
static char *render(enum report_format format, const struct report *r, const struct big_alloc *a)
{
	struct report_writer *w;
	char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&data, &size);

	assert_non_null(f);
	w = report_writer__new(format, f);
	assert_non_null(w);
	assert_int_equal(r ? report_writer__report(w, r) : report_writer__big_alloc(w, a), 0);
	report_writer__free(w);
	assert_int_equal(fclose(f), 0);
	return data;
}

static void assert_renders(enum report_format format, const struct report *r,
			   const struct big_alloc *a, const char *expected)
{
	char *got = render(format, r, a);

	assert_string_equal(got, expected);
	free(got);
}

static void assert_json_string(const char *s, const char *expected)
{
	char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&data, &size);

	assert_non_null(f);
	json__string(f, s);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(data, expected);
	free(data);
}

#define FRAMES_A_JSON                                                                              \
	"{\"addr\":\"0x555555555189\",\"module\":\"/usr/bin/leaky\",\"offset\":\"0x1189\","        \
	"\"function\":\"leak_a\",\"file\":\"leak.c\",\"line\":42,\"inlined\":false,"               \
	"\"build_id\":\"0123456789abcdef0123456789abcdef01234567\"},"                              \
	"{\"addr\":\"0x5555555551a0\",\"module\":\"/usr/bin/leaky\",\"offset\":\"0x11a0\","        \
	"\"function\":\"helper\",\"file\":\"leak.h\",\"line\":10,\"inlined\":true,"                \
	"\"build_id\":\"0123456789abcdef0123456789abcdef01234567\"},"                              \
	"{\"addr\":\"0x5555555551a0\",\"module\":\"/usr/bin/leaky\",\"offset\":\"0x11a0\","        \
	"\"function\":\"main\",\"file\":\"leak.c\",\"line\":80,\"inlined\":false,"                 \
	"\"build_id\":\"0123456789abcdef0123456789abcdef01234567\"}"

static void test_json_report(void **state UNUSED)
{
	assert_renders(
	    FORMAT_JSON, &periodic, NULL,
	    "{\"type\":\"report\",\"final\":false,\"time\":1700000000.250,\"pid\":1234,"
	    "\"comm\":\"leaky\","
	    "\"totals\":{\"outstanding_bytes\":1050212,\"outstanding_allocs\":12,"
	    "\"allocs\":10530,\"frees\":9326,\"untracked_frees\":0,\"lost\":0},"
	    "\"counters\":{\"allocs\":10530,\"frees\":9326,\"untracked_frees\":0,"
	    "\"lost_allocs\":0,\"lost_stats\":0,\"lost_inflight\":0,\"lost_stacks\":0,"
	    "\"stack_errors\":0,\"lost_events\":0,\"lost_cap\":0,\"lost_procs\":0,"
	    "\"stacks_cut\":0,\"unwind_misses\":0,\"stacks_recalled\":0,\"unwind_full\":0,"
	    "\"unopened\":0,\"pages_sampled_out\":0,\"pages_unclassified\":0,\"pages_classified_"
	    "late\":0},"
	    "\"complete\":true,\"stacks_complete\":true,\"stacks_holding\":5,\"stacks\":["
	    "{\"outstanding_bytes\":1048576,\"outstanding_allocs\":10,\"allocs\":10,"
	    "\"alloc_bytes\":0,\"frames\":[" FRAMES_A_JSON "],\"stack_flags\":[]},"
	    "{\"outstanding_bytes\":1536,\"outstanding_allocs\":1,\"allocs\":3,\"alloc_bytes\":0,"
	    "\"frames\":["
	    "{\"addr\":\"0x7f0012345678\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\","
	    "\"offset\":\"0x27678\",\"function\":null,\"file\":null,\"line\":null,"
	    "\"inlined\":false,\"build_id\":null},"
	    "{\"addr\":\"0x7f00deadbeef\",\"module\":null,\"offset\":null,\"function\":null,"
	    "\"file\":null,\"line\":null,\"inlined\":false,\"build_id\":null}],\"stack_flags\":[]},"
	    "{\"outstanding_bytes\":100,\"outstanding_allocs\":1,\"allocs\":1,\"alloc_bytes\":0,"
	    "\"frames\":[],\"stack_flags\":[]}"
	    "]}\n");
}

#define LOSSY_JSON_HEAD                                                                            \
	"{\"type\":\"report\",\"final\":true,\"time\":1700000000.250,\"pid\":1234,"                \
	"\"comm\":\"a\\\"b\\\\c\\nd\\u0001\\ufffd\","                                              \
	"\"totals\":{\"outstanding_bytes\":0,\"outstanding_allocs\":0,"                            \
	"\"allocs\":1,\"frees\":1,\"untracked_frees\":2,\"lost\":1200},"                           \
	"\"counters\":{\"allocs\":1,\"frees\":1,\"untracked_frees\":2,"                            \
	"\"lost_allocs\":1200,\"lost_stats\":0,\"lost_inflight\":0,\"lost_stacks\":3,"             \
	"\"stack_errors\":0,\"lost_events\":0,\"lost_cap\":0,\"lost_procs\":0,"                    \
	"\"stacks_cut\":0,\"unwind_misses\":0,\"stacks_recalled\":0,\"unwind_full\":0,"            \
	"\"unopened\":0,\"pages_sampled_out\":0,\"pages_unclassified\":0,\"pages_classified_"      \
	"late\":0},"                                                                               \
	"\"complete\":false,\"stacks_complete\":false,\"stacks_holding\":0,\"stacks\":[]"

static void test_json_final_exit_status(void **state UNUSED)
{
	struct report r = {
	    .final = true,
	    .time = T0,
	    .pid = 1234,
	    .comm = "a\"b\\c\nd\x01\xff",
	    .totals = &lossy_totals,
	    .exit = {.exited = true, .status = 0},
	};

	assert_renders(FORMAT_JSON, &r, NULL,
		       LOSSY_JSON_HEAD
		       ",\"exit\":{\"status\":0,\"signal\":null,\"oom_killed\":false}}\n");
}

static void test_json_final_exit_signal(void **state UNUSED)
{
	struct report r = {
	    .final = true,
	    .time = T0,
	    .pid = 1234,
	    .comm = "a\"b\\c\nd\x01\xff",
	    .totals = &lossy_totals,
	    .exit = {.exited = true, .status = -1, .signal = 9, .oom_killed = true},
	};

	assert_renders(FORMAT_JSON, &r, NULL,
		       LOSSY_JSON_HEAD ",\"exit\":{\"status\":null,\"signal\":9,"
				       "\"oom_killed\":true}}\n");
}

static void test_json_final_still_running(void **state UNUSED)
{
	struct report r = {
	    .final = true,
	    .time = T0,
	    .pid = 1234,
	    .comm = "a\"b\\c\nd\x01\xff",
	    .totals = &lossy_totals,
	    .exit = {.status = -1},
	};

	assert_renders(FORMAT_JSON, &r, NULL, LOSSY_JSON_HEAD "}\n");
}

/* Two of three processes: one holding a stack, a forked child that exited. */
static const struct profile_totals child_totals = {
    .allocs = 7,
    .untracked_frees = 2,
    .lost = 4,
    .counters = {[CNT_ALLOCS] = 7, [CNT_UNTRACKED_FREES] = 2, [CNT_LOST_CAP] = 4},
};

static const struct report procs[] = {
    {.pid = 1234,
     .comm = "leaky",
     .totals = &totals,
     .nr_stacks = 1,
     .nr_holding = 1,
     .stacks = stacks,
     .exit = {.status = -1}},
    {.pid = 1240,
     .parent = 1234,
     .comm = "child",
     .totals = &child_totals,
     .exit = {.exited = true, .status = 5}},
};

static const struct report several = {
    .time = T0,
    .totals = &totals,
    .per_process = true,
    .nr_procs = ARRAY_SIZE(procs),
    .nr_procs_total = 3,
    .procs = procs,
};

#define COUNTERS_JSON(allocs, frees, untracked, cap)                                               \
	"\"counters\":{\"allocs\":" allocs ",\"frees\":" frees ",\"untracked_frees\":" untracked   \
	",\"lost_allocs\":0,\"lost_stats\":0,\"lost_inflight\":0,\"lost_stacks\":0,"               \
	"\"stack_errors\":0,\"lost_events\":0,\"lost_cap\":" cap ",\"lost_procs\":0,"              \
	"\"stacks_cut\":0,\"unwind_misses\":0,\"stacks_recalled\":0,\"unwind_full\":0,"            \
	"\"unopened\":0,\"pages_sampled_out\":0,\"pages_unclassified\":0,\"pages_classified_"      \
	"late\":0}"

static void test_json_processes(void **state UNUSED)
{
	assert_renders(
	    FORMAT_JSON, &several, NULL,
	    "{\"type\":\"report\",\"final\":false,\"time\":1700000000.250,"
	    "\"totals\":{\"outstanding_bytes\":1050212,\"outstanding_allocs\":12,"
	    "\"allocs\":10530,\"frees\":9326,\"untracked_frees\":0,\"lost\":0}," COUNTERS_JSON(
		"10530", "9326", "0",
		"0") ",\"complete\":true,\"stacks_complete\":true,"
		     "\"processes_total\":3,\"processes\":["
		     "{\"pid\":1234,\"comm\":\"leaky\","
		     "\"totals\":{\"outstanding_bytes\":1050212,\"outstanding_allocs\":12,"
		     "\"allocs\":10530,\"frees\":9326,\"untracked_frees\":0,\"lost\":0}"
		     "," COUNTERS_JSON(
			 "10530", "9326", "0",
			 "0") ",\"complete\":true,\"stacks_complete\":true,"
			      "\"stacks_holding\":1,\"stacks\":["
			      "{\"outstanding_bytes\":1048576,\"outstanding_allocs\":10,\"allocs\":"
			      "10,"
			      "\"alloc_bytes\":0,\"frames\":[" FRAMES_A_JSON
			      "],\"stack_flags\":[]}]},"
			      "{\"pid\":1240,\"parent\":1234,\"comm\":\"child\","
			      "\"totals\":{\"outstanding_bytes\":0,\"outstanding_allocs\":0,"
			      "\"allocs\":7,\"frees\":0,\"untracked_frees\":2,\"lost\":4}"
			      "," COUNTERS_JSON("7", "0", "2",
						"4") ",\"complete\":false,\"stacks_complete\":true,"
						     "\"stacks_holding\":0,\"stacks\":[],"
						     "\"exit\":{\"status\":5,\"signal\":null,\"oom_"
						     "killed\":false}}"
						     "]}\n");
}

static void test_json_big_alloc(void **state UNUSED)
{
	struct big_alloc a = big;

	a.nr_frames = ARRAY_SIZE(frames_a);
	assert_renders(FORMAT_JSON, NULL, &a,
		       "{\"type\":\"big_alloc\",\"time\":1700000001.500,\"pid\":1234,\"tid\":1235,"
		       "\"func\":\"malloc\",\"size\":16777216,\"addr\":\"0x7f0000001000\","
		       "\"frames\":[" FRAMES_A_JSON "],\"stack_flags\":[]}\n");
}

static void test_json_escaping(void **state UNUSED)
{
	assert_json_string(NULL, "null");
	assert_json_string("", "\"\"");
	assert_json_string("plain /path", "\"plain /path\"");
	assert_json_string("q\"b\\s/", "\"q\\\"b\\\\s/\"");
	assert_json_string("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	assert_json_string("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"");
	/* Well-formed UTF-8 passes as is: é, €, U+1F600, U+10FFFF. */
	assert_json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
			   "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
	/* A stray continuation byte, a lead byte cut short, one out of range. */
	assert_json_string("a\x80z", "\"a\\ufffdz\"");
	assert_json_string("a\xc3", "\"a\\ufffd\"");
	assert_json_string("\xe2\x82z", "\"\\ufffd\\ufffdz\"");
	assert_json_string("\xff\xfe", "\"\\ufffd\\ufffd\"");
	/* Overlong "/", a UTF-16 surrogate, past U+10FFFF. */
	assert_json_string("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	assert_json_string("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	assert_json_string("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	assert_json_string("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

static void test_text_report(void **state UNUSED)
{
	assert_renders(FORMAT_TEXT, &periodic, NULL,
		       "[22:13:20] pid 1234 (leaky): 1.0 MiB (1,050,212 bytes) outstanding in "
		       "12 blocks; 10,530 allocs, 9,326 frees, 0 untracked frees\n"
		       "  1.0 MiB (1,048,576 bytes) in 10 blocks, 10 allocs\n"
		       "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
		       "    #1 [inlined] helper (/usr/bin/leaky+0x11a0) at leak.h:10\n"
		       "    #2 main+0x40 (/usr/bin/leaky+0x11a0) at leak.c:80\n"
		       "  1.5 KiB (1,536 bytes) in 1 block, 3 allocs\n"
		       "    #0 ?? (/lib/x86_64-linux-gnu/libc.so.6+0x27678)\n"
		       "    #1 0x7f00deadbeef (unknown)\n"
		       "  100 bytes in 1 block, 1 alloc\n"
		       "    (stack unknown)\n"
		       "  ... 2 more stacks holding memory (use -T 0 to show all)\n"
		       "\n");
}

#define LOSSY_TEXT_TAIL                                                                            \
	": 0 bytes outstanding in 0 blocks; 1 alloc, 1 free, 2 untracked frees; stacks "           \
	"incomplete\n"                                                                             \
	"  warning: numbers incomplete: lost_allocs=1,200 (live-allocation map full), "            \
	"lost_stacks=3 (stack map full, counted under an unknown stack)\n"                         \
	"\n"

static void test_text_final(void **state UNUSED)
{
	struct report r = {
	    .final = true,
	    .time = T0,
	    .pid = 1234,
	    .comm = "ev\x1b[1mil",
	    .totals = &lossy_totals,
	    .exit = {.exited = true, .status = 0},
	};

	assert_renders(
	    FORMAT_TEXT, &r, NULL,
	    "[22:13:20] final report, pid 1234 (ev?[1mil) exited with status 0" LOSSY_TEXT_TAIL);
	r.exit.status = -1;
	r.exit.signal = SIGKILL;
	assert_renders(FORMAT_TEXT, &r, NULL,
		       "[22:13:20] final report, pid 1234 (ev?[1mil) killed by signal 9 "
		       "(SIGKILL)" LOSSY_TEXT_TAIL);
	r.exit.signal = 0;
	assert_renders(FORMAT_TEXT, &r, NULL,
		       "[22:13:20] final report, pid 1234 (ev?[1mil) exited" LOSSY_TEXT_TAIL);
	r.exit.exited = false;
	r.comm = NULL;
	assert_renders(FORMAT_TEXT, &r, NULL,
		       "[22:13:20] final report, pid 1234 (?)" LOSSY_TEXT_TAIL);
}

/*
 * --leak-check: a stack's blocks newer than the snapshot have no class;
 * they are said, and a stack with none classified shows no line of zeros.
 */
static void test_text_unclassified(void **state UNUSED)
{
	struct report_stack st = stacks[0];
	struct report r = periodic;

	st.nr_frames = 1;
	st.classified = true;
	st.class_bytes[LEAK_DEFINITE] = 209715;
	st.class_allocs[LEAK_DEFINITE] = 2;
	r.stacks = &st;
	r.nr_stacks = r.nr_holding = 1;
	assert_renders(
	    FORMAT_TEXT, &r, NULL,
	    "[22:13:20] pid 1234 (leaky): 1.0 MiB (1,050,212 bytes) outstanding in "
	    "12 blocks; 10,530 allocs, 9,326 frees, 0 untracked frees\n"
	    "  1.0 MiB (1,048,576 bytes) in 10 blocks, 10 allocs\n"
	    "    definitely lost 209,715 bytes in 2 blocks, indirectly lost 0 bytes in 0 "
	    "blocks, possibly lost 0 bytes in 0 blocks, still reachable 0 bytes in 0 "
	    "blocks\n"
	    "    8 blocks newer than the leak check's snapshot, not classified yet\n"
	    "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
	    "\n");
	st.class_bytes[LEAK_DEFINITE] = st.class_allocs[LEAK_DEFINITE] = 0;
	assert_renders(FORMAT_TEXT, &r, NULL,
		       "[22:13:20] pid 1234 (leaky): 1.0 MiB (1,050,212 bytes) outstanding in "
		       "12 blocks; 10,530 allocs, 9,326 frees, 0 untracked frees\n"
		       "  1.0 MiB (1,048,576 bytes) in 10 blocks, 10 allocs\n"
		       "    10 blocks newer than the leak check's snapshot, not classified yet\n"
		       "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
		       "\n");
}

static void test_text_processes(void **state UNUSED)
{
	assert_renders(FORMAT_TEXT, &several, NULL,
		       "[22:13:20] 3 processes: 1.0 MiB (1,050,212 bytes) outstanding in "
		       "12 blocks; 10,530 allocs, 9,326 frees, 0 untracked frees\n"
		       "pid 1234 (leaky): 1.0 MiB (1,050,212 bytes) outstanding in "
		       "12 blocks; 10,530 allocs, 9,326 frees, 0 untracked frees\n"
		       "  1.0 MiB (1,048,576 bytes) in 10 blocks, 10 allocs\n"
		       "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
		       "    #1 [inlined] helper (/usr/bin/leaky+0x11a0) at leak.h:10\n"
		       "    #2 main+0x40 (/usr/bin/leaky+0x11a0) at leak.c:80\n"
		       "pid 1240 (child) exited with status 5: 0 bytes outstanding in 0 blocks; "
		       "7 allocs, 0 frees, 2 untracked frees\n"
		       "  warning: numbers incomplete: lost_cap=4 (over --max-per-process, "
		       "not recorded)\n"
		       "... 1 more process (use --top-processes 0 to show all)\n"
		       "\n");
}

static void test_text_sizes(void **state UNUSED)
{
	static const struct report_stack sized[] = {
	    {.outstanding_bytes = 18446744073709551615ull,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 0,
	     .frames = NULL},
	    {.outstanding_bytes = 1099511627776,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 0,
	     .frames = NULL},
	    {.outstanding_bytes = 1048575,
	     .outstanding_allocs = 2,
	     .allocs = 2,
	     .nr_frames = 0,
	     .frames = NULL},
	    {.outstanding_bytes = 1048471,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 0,
	     .frames = NULL},
	    {.outstanding_bytes = 1024,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 0,
	     .frames = NULL},
	    {.outstanding_bytes = 1023,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 0,
	     .frames = NULL},
	    {.outstanding_bytes = 1,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 0,
	     .frames = NULL},
	};
	struct report r = periodic;
	char *got, *body;

	r.stacks = sized;
	r.nr_stacks = ARRAY_SIZE(sized);
	r.nr_holding = r.nr_stacks + 1;
	got = render(FORMAT_TEXT, &r, NULL);
	body = strchr(got, '\n');
	assert_non_null(body);
	assert_string_equal(body + 1,
			    "  16.0 EiB (18,446,744,073,709,551,615 bytes) in 1 block, 1 alloc\n"
			    "    (stack unknown)\n"
			    "  1.0 TiB (1,099,511,627,776 bytes) in 1 block, 1 alloc\n"
			    "    (stack unknown)\n"
			    "  1.0 MiB (1,048,575 bytes) in 2 blocks, 2 allocs\n"
			    "    (stack unknown)\n"
			    "  1023.9 KiB (1,048,471 bytes) in 1 block, 1 alloc\n"
			    "    (stack unknown)\n"
			    "  1.0 KiB (1,024 bytes) in 1 block, 1 alloc\n"
			    "    (stack unknown)\n"
			    "  1023 bytes in 1 block, 1 alloc\n"
			    "    (stack unknown)\n"
			    "  1 byte in 1 block, 1 alloc\n"
			    "    (stack unknown)\n"
			    "  ... 1 more stack holding memory (use -T 0 to show all)\n"
			    "\n");
	free(got);
}

static void test_text_big_alloc(void **state UNUSED)
{
	struct big_alloc a = big;

	assert_renders(FORMAT_TEXT, NULL, &a,
		       "[22:13:21] BIG ALLOC pid 1234 tid 1235: malloc 16.0 MiB (16,777,216 bytes)"
		       " = 0x7f0000001000\n"
		       "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
		       "\n");
	a.size = 1000;
	a.nr_frames = 0;
	assert_renders(
	    FORMAT_TEXT, NULL, &a,
	    "[22:13:21] BIG ALLOC pid 1234 tid 1235: malloc 1000 bytes = 0x7f0000001000\n"
	    "    (stack unknown)\n"
	    "\n");
}

static void test_text_frame_without_line(void **state UNUSED)
{
	static const struct frame_info frame = {
	    .addr = 0x401000,
	    .module = "/bin/x",
	    .offset = 0x1000,
	    .function = "f",
	    .file = "x.c",
	};
	struct big_alloc a = big;

	a.frames = &frame;
	assert_renders(FORMAT_TEXT, NULL, &a,
		       "[22:13:21] BIG ALLOC pid 1234 tid 1235: malloc 16.0 MiB (16,777,216 bytes)"
		       " = 0x7f0000001000\n"
		       "    #0 f+0x0 (/bin/x+0x1000) at x.c\n"
		       "\n");
}

/* What a walk says of its stack shows under the frames, and in JSON's stack_flags. */
static void test_stack_flags(void **state UNUSED)
{
	struct report_stack flagged[] = {
	    {.outstanding_bytes = 64,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 1,
	     .frames = frames_a,
	     .stack_flags = STACK_CUT | STACK_FP},
	    {.outstanding_bytes = 32,
	     .outstanding_allocs = 1,
	     .allocs = 1,
	     .nr_frames = 1,
	     .frames = frames_a,
	     .stack_flags = STACK_TRUNCATED},
	};
	struct profile_totals t = {
	    .outstanding_bytes = 96,
	    .outstanding_allocs = 2,
	    .allocs = 2,
	    .counters = {[CNT_ALLOCS] = 2, [CNT_STACKS_CUT] = 1, [CNT_UNWIND_MISSES] = 4},
	    .stacks_incomplete = true,
	};
	struct report r = periodic;
	char *json;

	r.totals = &t;
	r.stacks = flagged;
	r.nr_stacks = r.nr_holding = ARRAY_SIZE(flagged);
	assert_renders(FORMAT_TEXT, &r, NULL,
		       "[22:13:20] pid 1234 (leaky): 96 bytes outstanding in 2 blocks; 2 allocs, "
		       "0 frees, 0 untracked frees; stacks incomplete\n"
		       "  warning: stacks incomplete: stacks_cut=1 (the walk stopped before the "
		       "outermost frame), unwind_misses=4 (frames in code without unwind tables "
		       "yet, walked by frame pointers)\n"
		       "  64 bytes in 1 block, 1 alloc\n"
		       "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
		       "    (stack cut short: the walk stopped before the outermost frame)\n"
		       "    (some frames from frame pointers: callers may be missing)\n"
		       "  32 bytes in 1 block, 1 alloc\n"
		       "    #0 leak_a+0x1d (/usr/bin/leaky+0x1189) at leak.c:42\n"
		       "    (more frames beyond --max-depth)\n"
		       "\n");
	json = render(FORMAT_JSON, &r, NULL);
	assert_non_null(strstr(json, "\"stacks_cut\":1,\"unwind_misses\":4,"));
	assert_non_null(strstr(json, "\"stack_flags\":[\"cut\",\"frame_pointers\"]}"));
	assert_non_null(strstr(json, "\"stack_flags\":[\"truncated\"]}"));
	/* Cut stacks still count every byte: the numbers stay complete. */
	assert_non_null(strstr(json, "\"complete\":true,\"stacks_complete\":false,"));
	free(json);
}

/* Output goes through a buffer: the error shows when the object is flushed. */
static void test_write_error_enospc(void **state UNUSED)
{
	FILE *f = fopen("/dev/full", "w");
	struct report_writer *w;

	assert_non_null(f);
	w = report_writer__new(FORMAT_JSON, f);
	assert_non_null(w);
	assert_int_equal(report_writer__report(w, &periodic), -ENOSPC);
	assert_int_equal(report_writer__big_alloc(w, &big), -ENOSPC);
	report_writer__free(w);
	fclose(f);
}

static void test_write_error_epipe(void **state UNUSED)
{
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	struct report_writer *w;
	int fds[2];
	FILE *f;

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(close(fds[0]), 0);
	f = fdopen(fds[1], "w");
	assert_non_null(f);
	w = report_writer__new(FORMAT_TEXT, f);
	assert_non_null(w);
	assert_int_equal(report_writer__report(w, &periodic), -EPIPE);
	report_writer__free(w);
	fclose(f);
	signal(SIGPIPE, old);
}

static void test_new_invalid(void **state UNUSED)
{
	errno = 0;
	assert_null(report_writer__new((enum report_format)2, stdout));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(report_writer__new(FORMAT_TEXT, NULL));
	assert_int_equal(errno, EINVAL);
}

/* Text reports print local time: pin it. */
static int group_setup(void **state UNUSED)
{
	if (setenv("TZ", "UTC", 1))
		return -1;
	tzset();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_report),
	    cmocka_unit_test(test_json_final_exit_status),
	    cmocka_unit_test(test_json_final_exit_signal),
	    cmocka_unit_test(test_json_final_still_running),
	    cmocka_unit_test(test_json_processes),
	    cmocka_unit_test(test_json_big_alloc),
	    cmocka_unit_test(test_json_escaping),
	    cmocka_unit_test(test_text_report),
	    cmocka_unit_test(test_text_unclassified),
	    cmocka_unit_test(test_text_final),
	    cmocka_unit_test(test_text_processes),
	    cmocka_unit_test(test_text_sizes),
	    cmocka_unit_test(test_text_big_alloc),
	    cmocka_unit_test(test_text_frame_without_line),
	    cmocka_unit_test(test_stack_flags),
	    cmocka_unit_test(test_write_error_enospc),
	    cmocka_unit_test(test_write_error_epipe),
	    cmocka_unit_test(test_new_invalid),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
