// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "export/exporters.h"
#include "export/protobuf.h"
#include "fixtures.h"

/* --- the encoder, byte for byte ------------------------------------------ */

static void assert_bytes(const struct pb_buf *b, const uint8_t *expected, size_t len)
{
	assert_int_equal(b->err, 0);
	assert_int_equal(b->len, len);
	assert_memory_equal(b->data, expected, len);
}

#define ASSERT_BYTES(b, ...)                                                                       \
	do {                                                                                       \
		static const uint8_t expected[] = {__VA_ARGS__};                                   \
		assert_bytes(b, expected, sizeof(expected));                                       \
	} while (0)

static void test_varint(void **state UNUSED)
{
	struct pb_buf b = {0};

	pb_buf__varint(&b, 0);
	pb_buf__varint(&b, 1);
	pb_buf__varint(&b, 127);
	pb_buf__varint(&b, 128);
	pb_buf__varint(&b, 300);
	pb_buf__varint(&b, UINT64_MAX);
	ASSERT_BYTES(&b, 0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0x01);
	pb_buf__release(&b);
}

/* The examples of the protobuf encoding guide. */
static void test_fields(void **state UNUSED)
{
	struct pb_buf b = {0};
	size_t mark;

	pb_buf__uint(&b, 1, 150);
	pb_buf__uint(&b, 1, 0);
	pb_buf__string(&b, 2, "testing");
	pb_buf__string(&b, 6, "");
	mark = pb_buf__begin(&b, 3);
	pb_buf__uint(&b, 1, 150);
	pb_buf__end(&b, mark);
	mark = pb_buf__begin(&b, 4);
	pb_buf__varint(&b, 3);
	pb_buf__varint(&b, 270);
	pb_buf__varint(&b, 86942);
	pb_buf__end(&b, mark);
	/* A field number past 15 takes two bytes of tag. */
	pb_buf__uint(&b, 16, 1);
	ASSERT_BYTES(&b, 0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', 0x32,
		     0x00, 0x1a, 0x03, 0x08, 0x96, 0x01, 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7,
		     0x05, 0x80, 0x01, 0x01);
	pb_buf__release(&b);
}

/* A length of two bytes moves the contents; nested messages each get theirs. */
static void test_long_nested(void **state UNUSED)
{
	struct pb_buf b = {0}, other = {0};
	size_t outer, inner, i;

	outer = pb_buf__begin(&b, 1);
	inner = pb_buf__begin(&b, 2);
	for (i = 0; i < 200; i++)
		pb_buf__varint(&b, i & 0x7f);
	pb_buf__end(&b, inner);
	pb_buf__end(&b, outer);
	assert_int_equal(b.len, 1 + 2 + 1 + 2 + 200);
	assert_memory_equal(b.data, ((const uint8_t[]){0x0a, 0xcb, 0x01, 0x12, 0xc8, 0x01}), 6);
	for (i = 0; i < 200; i++)
		assert_int_equal(b.data[6 + i], i & 0x7f);
	pb_buf__uint(&other, 1, 1);
	pb_buf__append(&other, &b);
	assert_int_equal(other.len, 2 + b.len);
	assert_memory_equal(other.data + 2, b.data, b.len);
	pb_buf__release(&b);
	pb_buf__release(&other);
}

/* --- a decoder, just enough for profile.proto ----------------------------- */

struct reader {
	const uint8_t *p, *end;
};

static uint64_t reader__varint(struct reader *r)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 64; shift += 7) {
		assert_true(r->p < r->end);
		v |= (uint64_t)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return v;
	}
	fail_msg("varint too long");
	return 0;
}

/* The next field: a varint in *@v, or the contents in *@sub. */
static bool reader__next(struct reader *r, unsigned int *field, uint64_t *v, struct reader *sub)
{
	uint64_t tag, len;

	if (r->p == r->end)
		return false;
	tag = reader__varint(r);
	*field = (unsigned int)(tag >> 3);
	switch (tag & 7) {
	case 0:
		*v = reader__varint(r);
		break;
	case 2:
		len = reader__varint(r);
		assert_true(len <= (uint64_t)(r->end - r->p));
		*sub = (struct reader){r->p, r->p + len};
		r->p += len;
		break;
	default:
		fail_msg("wire type %u", (unsigned int)(tag & 7));
	}
	return true;
}

#define MAX 32

struct dec_line {
	uint64_t function_id, line;
};

struct dec_location {
	uint64_t id, mapping_id, address;
	struct dec_line lines[MAX];
	size_t nr_lines;
};

struct dec_mapping {
	uint64_t id, start, limit, offset, filename, build_id;
	uint64_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct dec_function {
	uint64_t id, name, system_name, filename;
};

struct dec_sample {
	uint64_t locations[MAX], values[MAX];
	size_t nr_locations, nr_values, nr_labels;
	uint64_t labels[MAX][3]; /* key, num, unit */
};

struct dec_profile {
	uint64_t sample_types[MAX][2];
	size_t nr_sample_types;
	struct dec_sample samples[MAX];
	size_t nr_samples;
	struct dec_mapping mappings[MAX];
	size_t nr_mappings;
	struct dec_location locations[MAX];
	size_t nr_locations;
	struct dec_function functions[MAX];
	size_t nr_functions;
	char *strings[4 * MAX];
	size_t nr_strings;
	uint64_t time_nanos, duration_nanos, period_type[2], period, default_sample_type;
	uint64_t comments[MAX];
	size_t nr_comments;
};

/* Packed, as the encoder writes them. */
static size_t decode_packed(struct reader r, uint64_t *out)
{
	size_t n = 0;

	while (r.p < r.end) {
		assert_true(n < MAX);
		out[n++] = reader__varint(&r);
	}
	return n;
}

static void decode_pair(struct reader r, uint64_t *pair)
{
	struct reader sub;
	unsigned int field;
	uint64_t v;

	while (reader__next(&r, &field, &v, &sub))
		if (field == 1 || field == 2)
			pair[field - 1] = v;
}

static void decode_sample(struct reader r, struct dec_sample *s)
{
	struct reader sub, label;
	unsigned int field, lfield;
	uint64_t v, lv;

	while (reader__next(&r, &field, &v, &sub)) {
		if (field == 1) {
			s->nr_locations = decode_packed(sub, s->locations);
		} else if (field == 2) {
			s->nr_values = decode_packed(sub, s->values);
		} else if (field == 3) {
			assert_true(s->nr_labels < MAX);
			while (reader__next(&sub, &lfield, &lv, &label)) {
				if (lfield == 1)
					s->labels[s->nr_labels][0] = lv;
				else if (lfield == 3)
					s->labels[s->nr_labels][1] = lv;
				else if (lfield == 4)
					s->labels[s->nr_labels][2] = lv;
			}
			s->nr_labels++;
		}
	}
}

static void decode_mapping(struct reader r, struct dec_mapping *m)
{
	uint64_t *fields[] = {NULL,
			      &m->id,
			      &m->start,
			      &m->limit,
			      &m->offset,
			      &m->filename,
			      &m->build_id,
			      &m->has_functions,
			      &m->has_filenames,
			      &m->has_line_numbers,
			      &m->has_inline_frames};
	struct reader sub;
	unsigned int field;
	uint64_t v;

	while (reader__next(&r, &field, &v, &sub)) {
		assert_true(field >= 1 && field < ARRAY_SIZE(fields));
		*fields[field] = v;
	}
}

static void decode_location(struct reader r, struct dec_location *l)
{
	struct reader sub;
	unsigned int field;
	uint64_t v, pair[2];

	while (reader__next(&r, &field, &v, &sub)) {
		if (field == 1) {
			l->id = v;
		} else if (field == 2) {
			l->mapping_id = v;
		} else if (field == 3) {
			l->address = v;
		} else if (field == 4) {
			pair[0] = pair[1] = 0;
			decode_pair(sub, pair);
			assert_true(l->nr_lines < MAX);
			l->lines[l->nr_lines++] = (struct dec_line){pair[0], pair[1]};
		}
	}
}

static void decode_function(struct reader r, struct dec_function *f)
{
	uint64_t *fields[] = {NULL, &f->id, &f->name, &f->system_name, &f->filename};
	struct reader sub;
	unsigned int field;
	uint64_t v;

	while (reader__next(&r, &field, &v, &sub)) {
		assert_true(field >= 1 && field < ARRAY_SIZE(fields));
		*fields[field] = v;
	}
}

static void decode_profile(struct reader r, struct dec_profile *p)
{
	struct reader sub;
	unsigned int field;
	uint64_t v;

	while (reader__next(&r, &field, &v, &sub)) {
		switch (field) {
		case 1:
			assert_true(p->nr_sample_types < MAX);
			decode_pair(sub, p->sample_types[p->nr_sample_types++]);
			break;
		case 2:
			assert_true(p->nr_samples < MAX);
			decode_sample(sub, &p->samples[p->nr_samples++]);
			break;
		case 3:
			assert_true(p->nr_mappings < MAX);
			decode_mapping(sub, &p->mappings[p->nr_mappings++]);
			break;
		case 4:
			assert_true(p->nr_locations < MAX);
			decode_location(sub, &p->locations[p->nr_locations++]);
			break;
		case 5:
			assert_true(p->nr_functions < MAX);
			decode_function(sub, &p->functions[p->nr_functions++]);
			break;
		case 6:
			assert_true(p->nr_strings < ARRAY_SIZE(p->strings));
			p->strings[p->nr_strings] = strndup((const char *)sub.p, sub.end - sub.p);
			assert_non_null(p->strings[p->nr_strings++]);
			break;
		case 9:
			p->time_nanos = v;
			break;
		case 10:
			p->duration_nanos = v;
			break;
		case 11:
			decode_pair(sub, p->period_type);
			break;
		case 12:
			p->period = v;
			break;
		case 13:
			assert_true(p->nr_comments < MAX);
			p->comments[p->nr_comments++] = v;
			break;
		case 14:
			p->default_sample_type = v;
			break;
		default:
			fail_msg("unexpected field %u", field);
		}
	}
}

static void dec_profile__free(struct dec_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_strings; i++)
		free(p->strings[i]);
	free(p);
}

static uint8_t *gunzip(const uint8_t *data, size_t len, size_t *out_len)
{
	size_t cap = 1 << 16;
	uint8_t *out = malloc(cap);
	z_stream z = {0};
	int ret;

	assert_non_null(out);
	/* A gzip header, not zlib's. */
	assert_true(len > 2 && data[0] == 0x1f && data[1] == 0x8b);
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	ret = inflate(&z, Z_FINISH);
	assert_int_equal(ret, Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

/* The profile @state writes after @reports, decoded. */
static struct dec_profile *render(void *state, const struct report *reports, size_t nr)
{
	struct dec_profile *p = calloc(1, sizeof(*p));
	uint8_t *data = NULL, *raw;
	size_t size = 0, raw_len, i;
	FILE *f = open_memstream((char **)&data, &size);

	assert_non_null(state);
	assert_non_null(p);
	assert_non_null(f);
	for (i = 0; i < nr; i++)
		assert_int_equal(pprof_ops.report(state, &reports[i]), 0);
	assert_int_equal(pprof_ops.finish(state, f), 0);
	pprof_ops.free(state);
	assert_int_equal(fclose(f), 0);
	raw = gunzip(data, size, &raw_len);
	decode_profile((struct reader){raw, raw + raw_len}, p);
	free(raw);
	free(data);
	return p;
}

static const char *str(const struct dec_profile *p, uint64_t idx)
{
	assert_true(idx < p->nr_strings);
	return p->strings[idx];
}

/* --- profiles --------------------------------------------------------------- */

static const struct report_stack stacks[] = {
    LEAKY_STACKS,
    {.stack_id = 5,
     .outstanding_bytes = 0,
     .outstanding_allocs = 0,
     .allocs = 4,
     .alloc_bytes = 64,
     .nr_frames = 1,
     .frames = frames_b},
};

static const struct profile_totals totals = {.outstanding_bytes = 1054308,
					     .stacks_incomplete = true};

static const struct report final_report = FINAL_REPORT(stacks, &totals);

static void assert_header(const struct dec_profile *p)
{
	static const char *const types[][2] = {
	    {"alloc_objects", "count"},
	    {"alloc_space", "bytes"},
	    {"inuse_objects", "count"},
	    {"inuse_space", "bytes"},
	};
	size_t i;

	assert_true(p->nr_strings > 0);
	assert_string_equal(p->strings[0], "");
	assert_int_equal(p->nr_sample_types, ARRAY_SIZE(types));
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		assert_string_equal(str(p, p->sample_types[i][0]), types[i][0]);
		assert_string_equal(str(p, p->sample_types[i][1]), types[i][1]);
	}
	assert_string_equal(str(p, p->period_type[0]), "space");
	assert_string_equal(str(p, p->period_type[1]), "bytes");
	assert_int_equal(p->period, 1);
	assert_string_equal(str(p, p->default_sample_type), "inuse_space");
	/* Every string once. */
	for (i = 1; i < p->nr_strings; i++)
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(p->strings[i], p->strings[j]);
}

/* Label @i of @s: the report's process, a number without a unit. */
static void assert_pid_label(const struct dec_profile *p, const struct dec_sample *s, size_t i)
{
	assert_string_equal(str(p, s->labels[i][0]), "pid");
	assert_int_equal(s->labels[i][1], 1234);
	assert_string_equal(str(p, s->labels[i][2]), "");
}

static void assert_sample(const struct dec_profile *p, size_t i, const uint64_t *locations,
			  size_t nr_locations, const uint64_t values[4], uint64_t block)
{
	const struct dec_sample *s = &p->samples[i];

	assert_int_equal(s->nr_locations, nr_locations);
	assert_memory_equal(s->locations, locations, nr_locations * sizeof(*locations));
	assert_int_equal(s->nr_values, 4);
	assert_memory_equal(s->values, values, 4 * sizeof(*values));
	assert_int_equal(s->nr_labels, 2);
	assert_string_equal(str(p, s->labels[0][0]), "bytes");
	assert_int_equal(s->labels[0][1], block);
	assert_string_equal(str(p, s->labels[0][2]), "bytes");
	assert_pid_label(p, s, 1);
}

static void assert_function(const struct dec_profile *p, uint64_t id, const char *name,
			    const char *file)
{
	const struct dec_function *f;

	assert_true(id >= 1 && id <= p->nr_functions);
	f = &p->functions[id - 1];
	assert_int_equal(f->id, id);
	assert_string_equal(str(p, f->name), name);
	assert_string_equal(str(p, f->system_name), name);
	assert_string_equal(str(p, f->filename), file);
}

/* @lines: function name, file, line; as many as the location has. */
static void assert_location(const struct dec_profile *p, uint64_t id, uint64_t mapping_id,
			    uint64_t address, size_t nr_lines, const char *const (*lines)[3])
{
	const struct dec_location *l;
	size_t i;

	assert_true(id >= 1 && id <= p->nr_locations);
	l = &p->locations[id - 1];
	assert_int_equal(l->id, id);
	assert_int_equal(l->mapping_id, mapping_id);
	assert_int_equal(l->address, address);
	assert_int_equal(l->nr_lines, nr_lines);
	for (i = 0; i < nr_lines; i++) {
		assert_function(p, l->lines[i].function_id, lines[i][0], lines[i][1]);
		assert_int_equal(l->lines[i].line, strtoull(lines[i][2], NULL, 10));
	}
}

static void assert_mapping(const struct dec_profile *p, uint64_t id, uint64_t start, uint64_t limit,
			   const char *file, const char *build_id, bool symbols, bool lines)
{
	const struct dec_mapping *m;

	assert_true(id >= 1 && id <= p->nr_mappings);
	m = &p->mappings[id - 1];
	assert_int_equal(m->id, id);
	assert_int_equal(m->start, start);
	assert_int_equal(m->limit, limit);
	assert_int_equal(m->offset, 0);
	assert_string_equal(str(p, m->filename), file);
	assert_string_equal(str(p, m->build_id), build_id);
	assert_int_equal(m->has_functions, symbols);
	assert_int_equal(m->has_filenames, lines);
	assert_int_equal(m->has_line_numbers, lines);
	assert_int_equal(m->has_inline_frames, lines);
}

static void test_profile(void **state UNUSED)
{
	static const char *const leak_a_42[][3] = {{"leak_a", "leak.c", "42"}};
	static const char *const leak_a_44[][3] = {{"leak_a", "leak.c", "44"}};
	static const char *const main_80[][3] = {
	    {"helper", "leak.h", "10"},
	    {"main", "leak.c", "80"},
	};
	static const char *const unknown[][3] = {{"[stack unknown]", "", "0"}};
	struct dec_profile *p = render(pprof_new(), &final_report, 1);

	assert_header(p);
	assert_int_equal(p->time_nanos, 1700000000250000000ull);
	assert_int_equal(p->nr_comments, 2);
	assert_string_equal(str(p, p->comments[0]), "complete: true");
	assert_string_equal(str(p, p->comments[1]), "stacks_complete: false");
	/* A report older than the export: no duration rather than a negative one. */
	assert_int_equal(p->duration_nanos, 0);

	/* One sample per stack, innermost location first; values as the sample types. */
	assert_int_equal(p->nr_samples, 5);
	assert_sample(p, 0, (const uint64_t[]){1, 2}, 2,
		      (const uint64_t[]){10, 2097152, 10, 1048576}, 104857);
	assert_sample(p, 1, (const uint64_t[]){3, 2}, 2, (const uint64_t[]){5, 10240, 2, 4096},
		      2048);
	assert_sample(p, 2, (const uint64_t[]){4, 5}, 2, (const uint64_t[]){3, 4608, 1, 1536},
		      1536);
	assert_sample(p, 3, (const uint64_t[]){6}, 1, (const uint64_t[]){1, 100, 1, 100}, 100);
	/* Nothing outstanding: the block size of what was allocated. */
	assert_sample(p, 4, (const uint64_t[]){4}, 1, (const uint64_t[]){4, 64, 0, 0}, 16);

	/* One location per address; an inlined call comes before its caller. */
	assert_int_equal(p->nr_locations, 6);
	assert_location(p, 1, 1, 0x555555555189, 1, leak_a_42);
	assert_location(p, 2, 1, 0x5555555551a0, 2, main_80);
	assert_location(p, 3, 1, 0x5555555551f0, 1, leak_a_44);
	assert_location(p, 4, 2, 0x7f0012345678, 0, NULL);
	assert_location(p, 5, 0, 0x7f00deadbeef, 0, NULL);
	assert_location(p, 6, 0, 0, 1, unknown);
	/* One function per name and file. */
	assert_int_equal(p->nr_functions, 4);

	/* address - memory_start is the offset in the file. */
	assert_int_equal(p->nr_mappings, 2);
	assert_mapping(p, 1, 0x555555554000, 0x5555555551f1, "/usr/bin/leaky", LEAKY_ID, true,
		       true);
	assert_mapping(p, 2, 0x7f001231e000, 0x7f0012345679, "/lib/x86_64-linux-gnu/libc.so.6", "",
		       false, false);
	dec_profile__free(p);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Only the last report counts; the duration runs from the export's start. */
static void test_last_report(void **state UNUSED)
{
	struct report reports[2] = {final_report, final_report};
	double before = now(), after;
	void *pprof = pprof_new();
	struct dec_profile *p;

	after = now();
	reports[0].final = false;
	reports[1].nr_stacks = 1;
	reports[1].time = after + 60;
	p = render(pprof, reports, 2);
	assert_header(p);
	assert_int_equal(p->nr_samples, 1);
	assert_int_equal(p->nr_locations, 2);
	assert_int_equal(p->nr_mappings, 1);
	assert_true(p->duration_nanos >= 59.999e9 &&
		    p->duration_nanos <= (after + 60 - before) * 1e9 + 1e6);
	dec_profile__free(p);
}

/* Without any report, still a profile pprof opens, with no samples. */
static void test_no_report(void **state UNUSED)
{
	struct dec_profile *p = render(pprof_new(), NULL, 0);

	assert_header(p);
	assert_int_equal(p->nr_samples, 0);
	assert_int_equal(p->nr_locations, 0);
	assert_int_equal(p->nr_comments, 0);
	assert_true(p->time_nanos > 1700000000000000000ull);
	dec_profile__free(p);
}

/* The names of @p's sample types, in order, "type/unit" each, space-separated. */
static char *sample_type_names(const struct dec_profile *p)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	for (size_t i = 0; i < p->nr_sample_types; i++)
		fprintf(f, "%s%s/%s", i ? " " : "", str(p, p->sample_types[i][0]),
			str(p, p->sample_types[i][1]));
	assert_int_equal(fclose(f), 0);
	return text;
}

/* --growth: resident pages, named so that none is taken for an allocation. */
static void test_growth(void **state UNUSED)
{
	struct report r = final_report;
	struct dec_profile *p;
	char *names;

	r.growth = true;
	p = render(pprof_new(), &r, 1);
	names = sample_type_names(p);
	assert_string_equal(names, "touched_pages/count touched_space/bytes resident_pages/count "
				   "resident_space/bytes");
	free(names);
	assert_string_equal(str(p, p->default_sample_type), "resident_space");
	assert_int_equal(p->nr_comments, 3);
	assert_string_equal(str(p, p->comments[2]),
			    "resident growth, not allocations: pages still resident, by the stack "
			    "that first touched each (page faults)");
	/* The same numbers, without a block size: a page is a page. */
	assert_int_equal(p->nr_samples, 5);
	assert_int_equal(p->samples[0].nr_values, 4);
	assert_int_equal(p->samples[0].values[3], 1048576);
	for (size_t i = 0; i < p->nr_samples; i++) {
		assert_int_equal(p->samples[i].nr_labels, 1);
		assert_pid_label(p, &p->samples[i], 0);
	}
	dec_profile__free(p);
}

/* --leak-check: a pair of values per class, valgrind's worst first; none without verdicts. */
static void test_leak_classes(void **state UNUSED)
{
	struct report_stack classified[ARRAY_SIZE(stacks)];
	struct report_leak_check lc = {.pause_ms = 1};
	struct report r = final_report;
	struct dec_profile *p;
	char *names;

	memcpy(classified, stacks, sizeof(stacks));
	classified[0].classified = true;
	classified[0].class_allocs[LEAK_DEFINITE] = 4;
	classified[0].class_bytes[LEAK_DEFINITE] = 400;
	classified[0].class_allocs[LEAK_INDIRECT] = 3;
	classified[0].class_bytes[LEAK_INDIRECT] = 300;
	classified[0].class_allocs[LEAK_POSSIBLE] = 2;
	classified[0].class_bytes[LEAK_POSSIBLE] = 200;
	classified[0].class_allocs[LEAK_REACHABLE] = 1;
	classified[0].class_bytes[LEAK_REACHABLE] = 100;
	r.stacks = classified;
	r.leak_check = &lc;
	p = render(pprof_new(), &r, 1);
	names = sample_type_names(p);
	assert_string_equal(
	    names, "alloc_objects/count alloc_space/bytes inuse_objects/count "
		   "inuse_space/bytes definitely_lost_objects/count definitely_lost_space/bytes "
		   "indirectly_lost_objects/count indirectly_lost_space/bytes "
		   "possibly_lost_objects/count possibly_lost_space/bytes "
		   "reachable_objects/count reachable_space/bytes");
	free(names);
	assert_int_equal(p->samples[0].nr_values, 12);
	assert_memory_equal(&p->samples[0].values[4],
			    ((const uint64_t[]){4, 400, 3, 300, 2, 200, 1, 100}),
			    8 * sizeof(uint64_t));
	assert_int_equal(p->samples[1].values[11], 0);
	dec_profile__free(p);

	lc.error = "the process is traced by another program (a debugger)";
	p = render(pprof_new(), &r, 1);
	assert_int_equal(p->nr_sample_types, 4);
	assert_int_equal(p->samples[0].nr_values, 4);
	dec_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_varint),	cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_long_nested), cmocka_unit_test(test_profile),
	    cmocka_unit_test(test_last_report), cmocka_unit_test(test_no_report),
	    cmocka_unit_test(test_growth),	cmocka_unit_test(test_leak_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
