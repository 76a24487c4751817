// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTML exporter: the page carries the data blob with the numbers of
 * the reports and alerts it was given, nothing from the target can end
 * the blob's <script> element, and long runs stay bounded. Drawing the page
 * is checked in a browser by tests/integration/test_html.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "export/exporters.h"
#include "report/report.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define BLOB_OPEN  "<script type=\"application/json\" id=\"alloctrace-data\">"
#define BLOB_CLOSE "</script>"

static const struct frame_info frames_a[] = {
    {.addr = 0x555555555189,
     .module = "/usr/bin/leaky",
     .offset = 0x1189,
     .function = "leak_a",
     .function_offset = 0x1d,
     .file = "leak.c",
     .line = 42},
    {.addr = 0x5555555551a0,
     .module = "/usr/bin/leaky",
     .offset = 0x11a0,
     .function = "main",
     .function_offset = 0x40,
     .file = "leak.c",
     .line = 80},
};

/* Names a hostile or unlucky target could have: each would end the blob. */
static const struct frame_info frames_evil[] = {
    {.addr = 0x7f0012345678,
     .module = "/tmp/</script><script>alert(1)</script>.so",
     .offset = 0x678,
     .function = "</SCRIPT>",
     .file = "<!--x.c",
     .line = 1},
};

static const struct report_stack stacks1[] = {
    {.stack_id = 1,
     .outstanding_bytes = 4096,
     .outstanding_allocs = 4,
     .allocs = 5,
     .nr_frames = ARRAY_SIZE(frames_a),
     .frames = frames_a},
};

static const struct report_stack stacks2[] = {
    {.stack_id = 1,
     .outstanding_bytes = 1048576,
     .outstanding_allocs = 10,
     .allocs = 12,
     .nr_frames = ARRAY_SIZE(frames_a),
     .frames = frames_a},
    {.stack_id = 2,
     .outstanding_bytes = 1536,
     .outstanding_allocs = 1,
     .allocs = 3,
     .nr_frames = ARRAY_SIZE(frames_evil),
     .frames = frames_evil},
    {.stack_id = 3, .outstanding_bytes = 100, .outstanding_allocs = 1, .allocs = 1},
};

static const struct profile_totals totals1 = {
    .outstanding_bytes = 4096,
    .outstanding_allocs = 4,
    .allocs = 5,
    .frees = 1,
    .counters = {[CNT_ALLOCS] = 5, [CNT_FREES] = 1},
};

static const struct profile_totals totals2 = {
    .outstanding_bytes = 1050212,
    .outstanding_allocs = 12,
    .allocs = 10530,
    .frees = 9326,
    .lost = 7,
    .counters = {[CNT_ALLOCS] = 10530, [CNT_FREES] = 9326, [CNT_LOST_ALLOCS] = 7},
};

/* Reports and alerts in the near future, so that they follow html_new(). */
static double t0(void)
{
	return (double)time(NULL) + 100.5;
}

static struct report report_at(double t, bool final, const struct profile_totals *totals,
			       const struct report_stack *stacks, size_t nr)
{
	return (struct report){
	    .final = final,
	    .time = t,
	    .pid = 4242,
	    .comm = "leaky",
	    .totals = totals,
	    .nr_stacks = nr,
	    .nr_holding = nr,
	    .stacks = stacks,
	    .exit = {.exited = final, .status = final ? 0 : -1},
	    .rss_bytes = final ? 8388608 : 0,
	    .interval = 5,
	};
}

static struct big_alloc big_at(double t, const struct frame_info *frames, size_t nr)
{
	return (struct big_alloc){
	    .time = t,
	    .pid = 4242,
	    .tid = 4243,
	    .func = "malloc",
	    .size = 16777216,
	    .addr = 0x7f0000001000,
	    .nr_frames = nr,
	    .frames = frames,
	};
}

/* The page html_ops.finish() writes for state @h; free() it. */
static char *finish_page(void *h)
{
	char *page = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&page, &size);

	assert_non_null(f);
	assert_int_equal(html_ops.finish(h, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(page);
	return page;
}

/* The JSON blob of @page, a new string; free() it. */
static char *blob_of(const char *page)
{
	const char *start = strstr(page, BLOB_OPEN), *end;

	assert_non_null(start);
	start += strlen(BLOB_OPEN);
	end = strstr(start, BLOB_CLOSE);
	assert_non_null(end);
	return strndup(start, end - start);
}

/*
 * Just enough of a JSON check to catch a broken blob: strings closed,
 * brackets balanced and nested right, one value in all.
 */
static void assert_json_shape(const char *s)
{
	char stack[64];
	size_t depth = 0;
	bool in_string = false;

	assert_true(*s == '{');
	/* One line: for line tools, and the integration test's sed. */
	assert_null(strchr(s, '\n'));
	for (; *s; s++) {
		if (in_string) {
			assert_true((unsigned char)*s >= 0x20);
			if (*s == '\\')
				s++;
			else if (*s == '"')
				in_string = false;
			continue;
		}
		if (*s == '"') {
			in_string = true;
		} else if (*s == '{' || *s == '[') {
			assert_true(depth < sizeof(stack));
			stack[depth++] = *s == '{' ? '}' : ']';
		} else if (*s == '}' || *s == ']') {
			assert_true(depth > 0);
			assert_int_equal(*s, stack[--depth]);
			if (!depth)
				assert_true(s[1] == '\0');
		}
	}
	assert_false(in_string);
	assert_int_equal(depth, 0);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle))) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" not found in %.300s...", needle, haystack);
}

static void test_page_carries_the_numbers(void **state)
{
	double t = t0();
	void *h = html_new();
	struct report r1 = report_at(t + 5, false, &totals1, stacks1, ARRAY_SIZE(stacks1));
	struct report r2 = report_at(t + 10, true, &totals2, stacks2, ARRAY_SIZE(stacks2));
	struct big_alloc a = big_at(t + 7.25, frames_a, ARRAY_SIZE(frames_a));
	char *page, *blob, want[256];

	assert_non_null(h);
	assert_int_equal(html_ops.report(h, &r1), 0);
	assert_int_equal(html_ops.big_alloc(h, &a), 0);
	assert_int_equal(html_ops.report(h, &r2), 0);
	page = finish_page(h);
	html_ops.free(h);

	/* The template's markers were filled: the style and the script are in. */
	assert_null(strstr(page, "/*@"));
	assert_contains(page, "'use strict'");
	assert_contains(page, "--accent");
	assert_int_equal(count(page, BLOB_OPEN), 1);

	blob = blob_of(page);
	assert_json_shape(blob);
	assert_contains(blob, "\"reports\":2,");
	/* The first report began one interval before it was made. */
	snprintf(want, sizeof(want), "\"start\":%.3f,\"interval\":5.000,", t);
	assert_contains(blob, want);
	/* One point per report: time, outstanding bytes, blocks, RSS. */
	snprintf(want, sizeof(want), "\"series\":[[%.3f,4096,4,null],[%.3f,1050212,12,8388608]]",
		 t + 5, t + 10);
	assert_contains(blob, want);
	/* The last report, as --format json writes it. */
	assert_contains(blob, "\"report\":{\"type\":\"report\",\"final\":true,");
	assert_contains(blob, "\"totals\":{\"outstanding_bytes\":1050212,\"outstanding_allocs\":12,"
			      "\"allocs\":10530,\"frees\":9326,\"untracked_frees\":0,\"lost\":7}");
	assert_contains(blob, "\"lost_allocs\":7");
	assert_contains(blob, "\"complete\":false");
	assert_contains(blob, "{\"outstanding_bytes\":1048576,\"outstanding_allocs\":10,"
			      "\"allocs\":12,\"alloc_bytes\":0,"
			      "\"frames\":[{\"addr\":\"0x555555555189\","
			      "\"module\":\"/usr/bin/leaky\",\"offset\":\"0x1189\","
			      "\"function\":\"leak_a\",\"file\":\"leak.c\",\"line\":42,");
	assert_contains(blob, "\"exit\":{\"status\":0,\"signal\":null,\"oom_killed\":false}");
	/* Only the last report's stacks: the first one's 4096 is gone. */
	assert_int_equal(count(blob, "\"type\":\"report\""), 1);
	assert_null(
	    strstr(blob, "\"outstanding_bytes\":4096,\"outstanding_allocs\":4,\"allocs\":5"));
	/* The alert. */
	snprintf(want, sizeof(want),
		 "\"big_allocs\":[{\"type\":\"big_alloc\",\"time\":%.3f,\"pid\":4242,"
		 "\"tid\":4243,\"func\":\"malloc\",\"size\":16777216,\"addr\":\"0x7f0000001000\","
		 "\"frames\":[{\"addr\":\"0x555555555189\"",
		 t + 7.25);
	assert_contains(blob, want);
	assert_contains(blob, "\"big_allocs_seen\":1,\"counters\":{");
	/* Each counter that warns, with the text report's reason: counters.def's last one. */
	assert_contains(blob, "\"pages_unclassified\":{\"kind\":\"lost\",\"reason\":"
			      "\"page faults whose mapping was busy and gone before it was read, "
			      "not recorded\"}}}");
	free(blob);
	free(page);
}

/* '<' inside the blob would let "</script" or "<!--" end or bend it. */
static void test_names_cannot_break_out(void **state)
{
	double t = t0();
	void *h = html_new();
	struct report r = report_at(t + 5, true, &totals2, stacks2, ARRAY_SIZE(stacks2));
	struct big_alloc a = big_at(t + 1, frames_evil, ARRAY_SIZE(frames_evil));
	char *page, *blob;

	r.comm = "</script><b>";
	assert_non_null(h);
	assert_int_equal(html_ops.big_alloc(h, &a), 0);
	assert_int_equal(html_ops.report(h, &r), 0);
	page = finish_page(h);
	html_ops.free(h);

	blob = blob_of(page);
	assert_json_shape(blob);
	assert_null(strchr(blob, '<'));
	assert_contains(blob, "\"comm\":\"\\u003c/script>\\u003cb>\"");
	assert_contains(blob, "\"function\":\"\\u003c/SCRIPT>\"");
	assert_contains(blob, "\"module\":\"/tmp/\\u003c/script>\\u003cscript>alert(1)"
			      "\\u003c/script>.so\"");
	assert_contains(blob, "\"file\":\"\\u003c!--x.c\"");
	/* The blob's own end tag is the first one after it. */
	assert_contains(page, "\\u003c/script>.so\"");
	free(blob);
	free(page);
}

/* A run that ended before any report still makes a page that says so. */
static void test_no_report(void **state)
{
	void *h = html_new();
	char *page, *blob;

	assert_non_null(h);
	page = finish_page(h);
	html_ops.free(h);
	blob = blob_of(page);
	assert_json_shape(blob);
	assert_contains(blob, "\"reports\":0,");
	assert_contains(blob, "\"series\":[],\"report\":null,\"big_allocs\":[],"
			      "\"big_allocs_seen\":0,\"counters\":{");
	free(blob);
	free(page);
}

/* A long run: the series thins out but keeps its first and final points. */
static void test_long_run_is_bounded(void **state)
{
	const unsigned int nr = 10000;
	double t = t0();
	void *h = html_new();
	char *page, *blob, want[128];
	struct report r;
	unsigned int i;
	size_t points;

	assert_non_null(h);
	for (i = 0; i < nr; i++) {
		r = report_at(t + 5 + i, i == nr - 1, &totals1, NULL, 0);
		assert_int_equal(html_ops.report(h, &r), 0);
	}
	for (i = 0; i < 1005; i++) {
		struct big_alloc a = big_at(t + 6 + i, frames_a, ARRAY_SIZE(frames_a));

		assert_int_equal(html_ops.big_alloc(h, &a), 0);
	}
	page = finish_page(h);
	html_ops.free(h);
	blob = blob_of(page);
	assert_json_shape(blob);
	assert_contains(blob, "\"reports\":10000,");
	points = count(blob, ",4096,4,");
	assert_true(points > 1000);
	assert_true(points <= 2048);
	snprintf(want, sizeof(want), "\"series\":[[%.3f,4096,4,null],[", t + 5);
	assert_contains(blob, want);
	snprintf(want, sizeof(want), "[%.3f,4096,4,8388608]],\"report\":", t + 5 + nr - 1);
	assert_contains(blob, want);
	/* The first 1000 alerts are kept, all are counted. */
	assert_int_equal(count(blob, "\"type\":\"big_alloc\""), 1000);
	assert_contains(blob, "\"big_allocs_seen\":1005,\"counters\":{");
	free(blob);
	free(page);
}

/* A huge report: the page keeps the biggest stacks and says how many held. */
static void test_stacks_are_bounded(void **state)
{
	const size_t nr = 2500;
	struct report_stack *many = calloc(nr, sizeof(*many));
	double t = t0();
	void *h = html_new();
	struct report r;
	char *page, *blob;
	size_t i;

	assert_non_null(many);
	assert_non_null(h);
	for (i = 0; i < nr; i++) {
		many[i] = (struct report_stack){.stack_id = i,
						.outstanding_bytes = 3 * nr - i,
						.outstanding_allocs = 1,
						.allocs = 1};
	}
	r = report_at(t + 5, true, &totals1, many, nr);
	assert_int_equal(html_ops.report(h, &r), 0);
	page = finish_page(h);
	html_ops.free(h);
	blob = blob_of(page);
	assert_json_shape(blob);
	assert_int_equal(count(blob, "\"frames\":[]"), 2000);
	assert_contains(blob, "\"stacks_holding\":2500,");
	/* The first and the 2000th biggest are in, the 2001st is not. */
	assert_contains(blob, "{\"outstanding_bytes\":7500,");
	assert_contains(blob, "{\"outstanding_bytes\":5501,");
	assert_null(strstr(blob, "{\"outstanding_bytes\":5500,"));
	free(blob);
	free(page);
	free(many);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page_carries_the_numbers),
	    cmocka_unit_test(test_names_cannot_break_out),
	    cmocka_unit_test(test_no_report),
	    cmocka_unit_test(test_long_run_is_bounded),
	    cmocka_unit_test(test_stacks_are_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
