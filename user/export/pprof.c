// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A pprof profile (github.com/google/pprof/proto/profile.proto, gzipped)
 * of the last report: for `go tool pprof`, speedscope, Pyroscope and the
 * like. Its values need no scaling: a sampling session would hand over
 * reports already scaled up, and say its rate in the period.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "export/exporters.h"
#include "export/protobuf.h"
#include "lib/hashmap.h"
#include "lib/util.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_NUM = 3, LABEL_NUM_UNIT = 4 };

enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};

enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

/*
 * The values of each sample, in this order: the first four as Go's heap
 * profiles have them, then --leak-check's classes, valgrind's worst first.
 */
enum sample_value {
	VALUE_ALLOC_OBJECTS,
	VALUE_ALLOC_SPACE,
	VALUE_INUSE_OBJECTS,
	VALUE_INUSE_SPACE,
	VALUE_DEFINITE_OBJECTS,
	VALUE_DEFINITE_SPACE,
	VALUE_INDIRECT_OBJECTS,
	VALUE_INDIRECT_SPACE,
	VALUE_POSSIBLE_OBJECTS,
	VALUE_POSSIBLE_SPACE,
	VALUE_REACHABLE_OBJECTS,
	VALUE_REACHABLE_SPACE,
	NR_VALUES,
};

#define NR_HEAP_VALUES (VALUE_INUSE_SPACE + 1)

/* By class, its first value: objects, then space. */
static const enum sample_value class_values[LEAK_CLASSES] = {
    [LEAK_DEFINITE] = VALUE_DEFINITE_OBJECTS,
    [LEAK_INDIRECT] = VALUE_INDIRECT_OBJECTS,
    [LEAK_POSSIBLE] = VALUE_POSSIBLE_OBJECTS,
    [LEAK_REACHABLE] = VALUE_REACHABLE_OBJECTS,
};

static const char *const sample_types[NR_VALUES][2] = {
    [VALUE_ALLOC_OBJECTS] = {"alloc_objects", "count"},
    [VALUE_ALLOC_SPACE] = {"alloc_space", "bytes"},
    [VALUE_INUSE_OBJECTS] = {"inuse_objects", "count"},
    [VALUE_INUSE_SPACE] = {"inuse_space", "bytes"},
    [VALUE_DEFINITE_OBJECTS] = {"definitely_lost_objects", "count"},
    [VALUE_DEFINITE_SPACE] = {"definitely_lost_space", "bytes"},
    [VALUE_INDIRECT_OBJECTS] = {"indirectly_lost_objects", "count"},
    [VALUE_INDIRECT_SPACE] = {"indirectly_lost_space", "bytes"},
    [VALUE_POSSIBLE_OBJECTS] = {"possibly_lost_objects", "count"},
    [VALUE_POSSIBLE_SPACE] = {"possibly_lost_space", "bytes"},
    [VALUE_REACHABLE_OBJECTS] = {"reachable_objects", "count"},
    [VALUE_REACHABLE_SPACE] = {"reachable_space", "bytes"},
};

/*
 * --growth's numbers are pages by the stack that first touched them, not
 * blocks: named so that no reader takes them for allocations.
 */
static const char *const growth_types[NR_HEAP_VALUES][2] = {
    [VALUE_ALLOC_OBJECTS] = {"touched_pages", "count"},
    [VALUE_ALLOC_SPACE] = {"touched_space", "bytes"},
    [VALUE_INUSE_OBJECTS] = {"resident_pages", "count"},
    [VALUE_INUSE_SPACE] = {"resident_space", "bytes"},
};

#define GROWTH_COMMENT                                                                             \
	"resident growth, not allocations: pages still resident, by the stack that first "         \
	"touched each (page faults)"
/* Past the fault budget (bpf/faults.bpf.h) a recorded page stands for several. */
#define GROWTH_SAMPLED_COMMENT                                                                     \
	GROWTH_COMMENT "; sampled estimates: past the fault budget one fault in P (a power of "    \
		       "two) is recorded, as P pages"

/* The pseudo-function of the allocations whose stack was lost. */
#define UNKNOWN_STACK "[stack unknown]"

struct pprof {
	double start;	       /* unix seconds when the export was set up */
	struct pb_buf profile; /* the last report, encoded, not compressed */
	bool has_profile;
};

/* Strings by their index in the string table, which must start with "". */
struct string_table {
	const char **strs; /* the report's own strings, alive while encoding */
	size_t nr, cap;
	struct hashmap index; /* of struct string_index */
};

struct string_index {
	const char *str;
	size_t index;
};

/* Ids by a pair of numbers, counting from 1 in the order met. */
struct pair_id {
	uint64_t a, b;
	uint64_t id;
};

#define PAIR_IDS HASHMAP_INIT(2 * sizeof(uint64_t), sizeof(struct pair_id), NULL, NULL)

struct pprof_mapping {
	uint64_t start, limit;
	uint64_t filename, build_id; /* string indexes */
	bool has_functions, has_filenames, has_line_numbers;
};

/* One report being turned into a profile. */
struct builder {
	struct string_table strings;
	struct hashmap mapping_ids;	/* (filename, load bias) */
	struct hashmap location_ids;	/* (address, 0), or (0, 1) for the lost stack */
	struct hashmap function_ids;	/* (name, filename) */
	struct pprof_mapping *mappings; /* by id - 1 */
	size_t nr_mappings, cap_mappings;
	/* Messages are encoded as they are met, each kind apart. */
	struct pb_buf samples, locations, functions;
	/* Indexes of the strings every profile has. */
	uint64_t types[NR_VALUES][2];
	size_t nr_values; /* the class values only with a leak check's verdicts */
	bool growth;	  /* no block size label: a page is a page */
	uint64_t space, bytes, pid;
	/* Whether the numbers, and the stacks, are complete; what --growth counts. */
	uint64_t comments[4];
	int err;
};

void *pprof_new(void)
{
	struct pprof *p = calloc(1, sizeof(*p));
	struct timespec now;

	if (!p)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &now);
	p->start = now.tv_sec + now.tv_nsec / 1e9;
	return p;
}

static void pprof_free(void *state)
{
	struct pprof *p = state;

	if (!p)
		return;
	pb_buf__release(&p->profile);
	free(p);
}

/* The index of @str, added if new; NULL is "". 0 on failure, with @err set. */
static uint64_t builder__string(struct builder *b, const char *str)
{
	struct string_table *t = &b->strings;
	struct string_index *e;
	const char **grown;
	bool added;

	if (!str)
		str = "";
	if (b->err)
		return 0;
	grown = array__grow(t->strs, &t->cap, t->nr, sizeof(*grown));
	e = grown ? hashmap__insert(&t->index, &str, &added) : NULL;
	if (!e) {
		b->err = -ENOMEM;
		return 0;
	}
	t->strs = grown;
	if (added) {
		e->index = t->nr;
		t->strs[t->nr++] = str;
	}
	return e->index;
}

/*
 * The id of (@a, @b), made the next one if new: *@added then tells the
 * caller to write what it names. 0 on failure, with @err set.
 */
static uint64_t builder__id(struct builder *b, struct hashmap *ids, uint64_t a, uint64_t key_b,
			    bool *added)
{
	struct pair_id *e;

	*added = false;
	if (b->err)
		return 0;
	e = hashmap__insert(ids, &(uint64_t[2]){a, key_b}, added);
	if (!e) {
		b->err = -ENOMEM;
		return 0;
	}
	if (*added)
		e->id = ids->nr;
	return e->id;
}

static void builder__release(struct builder *b)
{
	free(b->strings.strs);
	hashmap__release(&b->strings.index);
	hashmap__release(&b->mapping_ids);
	hashmap__release(&b->location_ids);
	hashmap__release(&b->function_ids);
	free(b->mappings);
	pb_buf__release(&b->samples);
	pb_buf__release(&b->locations);
	pb_buf__release(&b->functions);
}

static uint64_t builder__function(struct builder *b, const char *name, const char *file)
{
	uint64_t name_idx = builder__string(b, name), file_idx = builder__string(b, file);
	uint64_t id;
	size_t mark;
	bool added;

	id = builder__id(b, &b->function_ids, name_idx, file_idx, &added);
	if (!added)
		return id;
	mark = pb_buf__begin(&b->functions, PROFILE_FUNCTION);
	pb_buf__uint(&b->functions, FUNCTION_ID, id);
	pb_buf__uint(&b->functions, FUNCTION_NAME, name_idx);
	/* Names come demangled; the mangled one is not kept. */
	pb_buf__uint(&b->functions, FUNCTION_SYSTEM_NAME, name_idx);
	pb_buf__uint(&b->functions, FUNCTION_FILENAME, file_idx);
	pb_buf__end(&b->functions, mark);
	return id;
}

/*
 * One mapping per object and load address. Frames carry only the offset
 * in their object, so the mapping starts where the object's offset 0
 * would be and reaches past the highest address seen, which makes
 * address - memory_start + file_offset the offset, as pprof computes it.
 * The has_* flags say whether any of its frames knew that much, as pprof
 * sets them when it symbolizes; pprof symbolizes again only a mapping
 * without any.
 */
static uint64_t builder__mapping(struct builder *b, const struct frame_info *fr)
{
	uint64_t bias = fr->addr - fr->offset, id;
	struct pprof_mapping *m, *grown;
	bool added;

	id = builder__id(b, &b->mapping_ids, builder__string(b, fr->module), bias, &added);
	if (!id)
		return 0;
	if (added) {
		grown = array__grow(b->mappings, &b->cap_mappings, b->nr_mappings, sizeof(*grown));
		if (!grown) {
			b->err = -ENOMEM;
			return 0;
		}
		b->mappings = grown;
		b->mappings[b->nr_mappings++] = (struct pprof_mapping){
		    .start = bias,
		    .filename = builder__string(b, fr->module),
		    .build_id = builder__string(b, fr->build_id),
		};
	}
	m = &b->mappings[id - 1];
	if (fr->addr >= m->limit)
		m->limit = fr->addr + 1;
	m->has_functions |= fr->function != NULL;
	m->has_filenames |= fr->file != NULL;
	m->has_line_numbers |= fr->line != 0;
	return id;
}

/*
 * The frames of one return address: its inlined calls, innermost first,
 * then the function holding them. Returns how many there are.
 */
static size_t frames__at_addr(const struct frame_info *frames, size_t nr)
{
	size_t n = 1;

	while (n < nr && frames[n - 1].inlined && frames[n].addr == frames[0].addr)
		n++;
	return n;
}

static void builder__line(struct builder *b, const char *function, const char *file,
			  unsigned int line)
{
	size_t mark = pb_buf__begin(&b->locations, LOCATION_LINE);

	pb_buf__uint(&b->locations, LINE_FUNCTION_ID, builder__function(b, function, file));
	pb_buf__uint(&b->locations, LINE_LINE, line);
	pb_buf__end(&b->locations, mark);
}

/*
 * A location per address, its lines innermost first, as pprof has inlined
 * calls. @nr 0 is the pseudo-location of the allocations whose stack was
 * lost, which has a name so that their memory shows.
 */
static uint64_t builder__location(struct builder *b, const struct frame_info *frames, size_t nr)
{
	uint64_t id, key, mapping_id = 0;
	size_t mark, i;
	bool added;

	/* Frames alloctrace makes up (a process in a report on several) have no address. */
	if (!nr)
		key = 1;
	else if (!frames[0].addr && frames[0].function)
		key = 2 + builder__string(b, frames[0].function);
	else
		key = 0;
	id = builder__id(b, &b->location_ids, nr ? frames[0].addr : 0, key, &added);
	if (!added)
		return id;
	/* Each frame adds what it knows to the mapping's has_* flags. */
	for (i = 0; i < nr && frames[0].module; i++)
		mapping_id = builder__mapping(b, &frames[i]);
	mark = pb_buf__begin(&b->locations, PROFILE_LOCATION);
	pb_buf__uint(&b->locations, LOCATION_ID, id);
	pb_buf__uint(&b->locations, LOCATION_MAPPING_ID, mapping_id);
	if (!nr)
		builder__line(b, UNKNOWN_STACK, NULL, 0);
	else
		pb_buf__uint(&b->locations, LOCATION_ADDRESS, frames[0].addr);
	/* A frame without a name has no line: the address says it all. */
	for (i = 0; i < nr; i++)
		if (frames[i].function)
			builder__line(b, frames[i].function, frames[i].file, frames[i].line);
	pb_buf__end(&b->locations, mark);
	return id;
}

/* Go's heap profiles label each sample with its block size: the average here. */
static uint64_t stack_block_size(const struct report_stack *s)
{
	if (s->outstanding_allocs)
		return s->outstanding_bytes / s->outstanding_allocs;
	return s->allocs ? s->alloc_bytes / s->allocs : 0;
}

static void builder__label(struct builder *b, uint64_t key, uint64_t num, uint64_t unit)
{
	size_t mark = pb_buf__begin(&b->samples, SAMPLE_LABEL);

	pb_buf__uint(&b->samples, LABEL_KEY, key);
	pb_buf__uint(&b->samples, LABEL_NUM, num);
	pb_buf__uint(&b->samples, LABEL_NUM_UNIT, unit);
	pb_buf__end(&b->samples, mark);
}

/* @pid: the process of the report, for a stack that does not name its own. */
static void builder__sample(struct builder *b, const struct report_stack *s, int pid)
{
	uint64_t values[NR_VALUES] = {
	    [VALUE_ALLOC_OBJECTS] = s->allocs,
	    [VALUE_ALLOC_SPACE] = s->alloc_bytes,
	    [VALUE_INUSE_OBJECTS] = s->outstanding_allocs,
	    [VALUE_INUSE_SPACE] = s->outstanding_bytes,
	};
	struct pb_buf *buf = &b->samples;
	size_t mark, field, i, n;

	for (int c = 0; c < LEAK_CLASSES; c++) {
		values[class_values[c]] = s->class_allocs[c];
		values[class_values[c] + 1] = s->class_bytes[c];
	}
	mark = pb_buf__begin(buf, PROFILE_SAMPLE);
	field = pb_buf__begin(buf, SAMPLE_LOCATION_ID);
	if (!s->nr_frames)
		pb_buf__varint(buf, builder__location(b, NULL, 0));
	for (i = 0; i < s->nr_frames; i += n) {
		n = frames__at_addr(s->frames + i, s->nr_frames - i);
		pb_buf__varint(buf, builder__location(b, s->frames + i, n));
	}
	pb_buf__end(buf, field);
	field = pb_buf__begin(buf, SAMPLE_VALUE);
	for (i = 0; i < b->nr_values; i++)
		pb_buf__varint(buf, values[i]);
	pb_buf__end(buf, field);
	if (!b->growth)
		builder__label(b, b->bytes, stack_block_size(s), b->bytes);
	/* A store such as Pyroscope keeps a series per label: one per process. */
	if (s->pid || pid)
		builder__label(b, b->pid, s->pid ? s->pid : pid, 0);
	pb_buf__end(buf, mark);
}

static void value_type__encode(struct pb_buf *out, unsigned int field, uint64_t type, uint64_t unit)
{
	size_t mark = pb_buf__begin(out, field);

	pb_buf__uint(out, VALUE_TYPE_TYPE, type);
	pb_buf__uint(out, VALUE_TYPE_UNIT, unit);
	pb_buf__end(out, mark);
}

static void mapping__encode(const struct pprof_mapping *m, uint64_t id, struct pb_buf *out)
{
	size_t mark = pb_buf__begin(out, PROFILE_MAPPING);

	pb_buf__uint(out, MAPPING_ID, id);
	pb_buf__uint(out, MAPPING_MEMORY_START, m->start);
	pb_buf__uint(out, MAPPING_MEMORY_LIMIT, m->limit);
	pb_buf__uint(out, MAPPING_FILE_OFFSET, 0);
	pb_buf__uint(out, MAPPING_FILENAME, m->filename);
	pb_buf__uint(out, MAPPING_BUILD_ID, m->build_id);
	pb_buf__uint(out, MAPPING_HAS_FUNCTIONS, m->has_functions);
	pb_buf__uint(out, MAPPING_HAS_FILENAMES, m->has_filenames);
	pb_buf__uint(out, MAPPING_HAS_LINE_NUMBERS, m->has_line_numbers);
	/* The symbolizer expands inlined calls wherever there is debug info. */
	pb_buf__uint(out, MAPPING_HAS_INLINE_FRAMES, m->has_filenames);
	pb_buf__end(out, mark);
}

/* Whole seconds apart: secs * 1e9 would round today's times to 256 ns. */
static uint64_t seconds_to_nanos(double secs)
{
	uint64_t whole;

	if (secs <= 0)
		return 0;
	whole = (uint64_t)secs;
	return whole * 1000000000 + (uint64_t)((secs - (double)whole) * 1e9 + 0.5);
}

/* First in the string table, whose first string must be "". */
static void builder__init(struct builder *b)
{
	size_t i;

	builder__string(b, "");
	for (i = 0; i < b->nr_values; i++) {
		const char *const *type =
		    b->growth && i < NR_HEAP_VALUES ? growth_types[i] : sample_types[i];

		b->types[i][0] = builder__string(b, type[0]);
		b->types[i][1] = builder__string(b, type[1]);
	}
	b->space = builder__string(b, "space");
	b->bytes = builder__string(b, "bytes");
	b->pid = builder__string(b, "pid");
}

/* The messages, in the order of their field numbers. */
static void builder__encode(struct builder *b, const struct report *r, double start,
			    struct pb_buf *out)
{
	size_t i;

	for (i = 0; i < b->nr_values; i++)
		value_type__encode(out, PROFILE_SAMPLE_TYPE, b->types[i][0], b->types[i][1]);
	pb_buf__append(out, &b->samples);
	for (i = 0; i < b->nr_mappings; i++)
		mapping__encode(&b->mappings[i], i + 1, out);
	pb_buf__append(out, &b->locations);
	pb_buf__append(out, &b->functions);
	for (i = 0; i < b->strings.nr; i++)
		pb_buf__string(out, PROFILE_STRING_TABLE, b->strings.strs[i]);
	pb_buf__uint(out, PROFILE_TIME_NANOS, seconds_to_nanos(r->time));
	pb_buf__uint(out, PROFILE_DURATION_NANOS, seconds_to_nanos(r->time - start));
	value_type__encode(out, PROFILE_PERIOD_TYPE, b->space, b->bytes);
	/* Every allocation is counted, none sampled. */
	pb_buf__uint(out, PROFILE_PERIOD, 1);
	for (i = 0; i < sizeof(b->comments) / sizeof(*b->comments); i++)
		if (b->comments[i])
			pb_buf__uint(out, PROFILE_COMMENT, b->comments[i]);
	/* What pprof shows first: the memory still held. */
	pb_buf__uint(out, PROFILE_DEFAULT_SAMPLE_TYPE, b->types[VALUE_INUSE_SPACE][0]);
}

/* The profile of @r into @out, which is empty. 0 or -errno. */
static int pprof__encode(const struct pprof *p, const struct report *r, struct pb_buf *out)
{
	struct builder b = {
	    .strings.index = HASHMAP_INIT(sizeof(const char *), sizeof(struct string_index),
					  hashmap_str_hash, hashmap_str_equal),
	    .mapping_ids = PAIR_IDS,
	    .location_ids = PAIR_IDS,
	    .function_ids = PAIR_IDS,
	};
	char sampled[80];
	size_t i;
	int err;

	b.nr_values = r->leak_check && !r->leak_check->error ? NR_VALUES : NR_HEAP_VALUES;
	b.growth = r->growth;
	builder__init(&b);
	for (i = 0; i < r->nr_stacks; i++)
		builder__sample(&b, &r->stacks[i], r->pid);
	/* As the JSON report's "complete" and "stacks_complete" say them; none without a report. */
	if (r->totals) {
		b.comments[0] =
		    builder__string(&b, r->totals->lost ? "complete: false" : "complete: true");
		b.comments[1] =
		    builder__string(&b, r->totals->stacks_incomplete ? "stacks_complete: false"
								     : "stacks_complete: true");
	}
	if (r->growth)
		b.comments[2] = builder__string(&b, report__sampled(r) ? GROWTH_SAMPLED_COMMENT
								       : GROWTH_COMMENT);
	/* As the JSON report's mark: the values are estimates, with their standard error. */
	if (report__sampled(r)) {
		snprintf(sampled, sizeof(sampled), "sampled: true; resident_bytes_stderr: %" PRIu64,
			 report__stderr_bytes(r));
		b.comments[3] = builder__string(&b, sampled);
	}
	builder__encode(&b, r, p->start, out);
	/* The buffers gathered apart passed their failures on to @out. */
	err = b.err ? b.err : out->err;
	builder__release(&b);
	return err;
}

static int pprof_report(void *state, const struct report *r)
{
	struct pprof *p = state;
	struct pb_buf profile = {0};
	int err;

	err = pprof__encode(p, r, &profile);
	if (err) {
		pb_buf__release(&profile);
		return err;
	}
	pb_buf__release(&p->profile);
	p->profile = profile;
	p->has_profile = true;
	return 0;
}

/* The gzip stream of @len bytes at @data to @f; stream errors are the caller's. */
static int gzip_write(FILE *f, const uint8_t *data, size_t len)
{
	uint8_t out[16384];
	z_stream z = {0};
	int ret;

	/* 16 + the largest window: a gzip header, as pprof requires. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	do {
		/* avail_in is 32 bits wide: feed larger buffers in pieces. */
		if (!z.avail_in && len) {
			z.avail_in = len < UINT_MAX ? (uInt)len : UINT_MAX;
			len -= z.avail_in;
		}
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
		fwrite(out, 1, sizeof(out) - z.avail_out, f);
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

static int pprof_finish(void *state, FILE *f)
{
	struct pprof *p = state;
	struct report none = {.time = p->start};
	int err;

	/* Without any report, still a valid profile, with no samples. */
	if (!p->has_profile) {
		err = pprof_report(p, &none);
		if (err)
			return err;
	}
	return gzip_write(f, p->profile.data, p->profile.len);
}

const struct export_ops pprof_ops = {
    .by_process = true,
    .report = pprof_report,
    .finish = pprof_finish,
    .free = pprof_free,
};
