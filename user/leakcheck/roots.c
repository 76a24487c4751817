// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "leakcheck/roots.h"
#include "lib/util.h"

int range_set__add(struct range_set *s, uint64_t start, uint64_t end)
{
	struct range *r;

	if (start >= end)
		return 0;
	r = array__grow(s->r, &s->cap, s->n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	s->r = r;
	s->r[s->n++] = (struct range){start, end};
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void range_set__normalize(struct range_set *s)
{
	size_t i, out = 0;

	if (!s->n)
		return;
	qsort(s->r, s->n, sizeof(*s->r), cmp_range);
	for (i = 1; i < s->n; i++) {
		if (s->r[i].start <= s->r[out].end) {
			if (s->r[i].end > s->r[out].end)
				s->r[out].end = s->r[i].end;
		} else {
			s->r[++out] = s->r[i];
		}
	}
	s->n = out + 1;
}

void range_set__release(struct range_set *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

uint64_t range_set__bytes(const struct range_set *s)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += s->r[i].end - s->r[i].start;
	return sum;
}

/* @s less @minus, both normalized, into @out. */
static int subtract(const struct range_set *s, const struct range_set *minus, struct range_set *out)
{
	size_t i, j = 0;
	uint64_t at;
	int err = 0;

	for (i = 0; i < s->n && !err; i++) {
		at = s->r[i].start;
		while (j < minus->n && minus->r[j].end <= at)
			j++;
		for (size_t k = j; k < minus->n && minus->r[k].start < s->r[i].end && !err; k++) {
			err = range_set__add(out, at, minus->r[k].start);
			if (minus->r[k].end > at)
				at = minus->r[k].end;
		}
		if (!err && at < s->r[i].end)
			err = range_set__add(out, at, s->r[i].end);
	}
	return err;
}

static bool is_root_mapping(const struct mapping *m)
{
	return m->read && m->write &&
	       !(m->path && (!strcmp(m->path, "[vvar]") || !strcmp(m->path, "[vsyscall]")));
}

static int exclusions(const struct root_sources *src, struct range_set *ex)
{
	const struct mapping *m;
	size_t i;
	int err = 0;

	for (i = 0; i < src->nr_blocks && !err; i++)
		err = range_set__add(ex, src->blocks[i].addr,
				     src->blocks[i].addr + src->blocks[i].size);
	for (i = 0; i < src->nr_sps && !err; i++) {
		m = proc_maps__find(src->maps, src->sps[i]);
		if (m && src->live[i] > m->start)
			err = range_set__add(ex, m->start,
					     src->live[i] < m->end ? src->live[i] : m->end);
	}
	for (i = 0; src->heap && i < src->heap->n && !err; i++)
		err = range_set__add(ex, src->heap->r[i].start, src->heap->r[i].end);
	range_set__normalize(ex);
	return err;
}

int roots__build(const struct root_sources *src, struct range_set *out)
{
	struct range_set all = {}, ex = {};
	size_t i;
	int err = 0;

	for (i = 0; i < src->maps->nr && !err; i++)
		if (is_root_mapping(&src->maps->maps[i]))
			err =
			    range_set__add(&all, src->maps->maps[i].start, src->maps->maps[i].end);
	range_set__normalize(&all);
	err = err ?: exclusions(src, &ex);
	err = err ?: subtract(&all, &ex, out);
	for (i = 0; src->inuse && i < src->inuse->n && !err; i++)
		err = range_set__add(out, src->inuse->r[i].start, src->inuse->r[i].end);
	range_set__normalize(out);
	range_set__release(&all);
	range_set__release(&ex);
	return err;
}
