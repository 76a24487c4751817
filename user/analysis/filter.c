// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/filter.h"
#include "proc/procfs.h"

/* Threads seen so far and whether their name matched: names are read once. */
#define NAME_CACHE 1024

struct filter {
	struct block_filter spec;
	regex_t thread_re;
	regex_t module_re;
	bool has_thread_re;
	bool has_module_re;
	struct {
		uint32_t tid;
		bool match;
	} names[NAME_CACHE];
	size_t nr_names;
	char description[512];
};

static void describe(struct filter *f)
{
	const struct block_filter *s = &f->spec;
	char *p = f->description, *end = p + sizeof(f->description);

#define ADD(...) (p += snprintf(p, p < end ? end - p : 0, __VA_ARGS__))
	if (s->min_age)
		ADD("%sblocks at least %g s old", p != f->description ? ", " : "", s->min_age);
	if (s->tid)
		ADD("%sallocated by tid %d", p != f->description ? ", " : "", s->tid);
	if (s->thread_name)
		ADD("%sby threads named /%s/", p != f->description ? ", " : "", s->thread_name);
	if (s->min_size)
		ADD("%sat least %llu bytes", p != f->description ? ", " : "",
		    (unsigned long long)s->min_size);
	if (s->max_size)
		ADD("%sat most %llu bytes", p != f->description ? ", " : "",
		    (unsigned long long)s->max_size);
	if (s->module)
		ADD("%sstacks through /%s/", p != f->description ? ", " : "", s->module);
#undef ADD
}

struct filter *filter__new(const struct block_filter *spec)
{
	struct filter *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->spec = *spec;
	/* options__parse() compiled both once already: they are valid. */
	if (spec->thread_name)
		f->has_thread_re =
		    !regcomp(&f->thread_re, spec->thread_name, REG_EXTENDED | REG_NOSUB);
	if (spec->module)
		f->has_module_re = !regcomp(&f->module_re, spec->module, REG_EXTENDED | REG_NOSUB);
	describe(f);
	return f;
}

void filter__free(struct filter *f)
{
	if (!f)
		return;
	if (f->has_thread_re)
		regfree(&f->thread_re);
	if (f->has_module_re)
		regfree(&f->module_re);
	free(f);
}

bool filter__per_block(const struct filter *f)
{
	const struct block_filter *s = &f->spec;

	return s->min_age || s->tid || s->thread_name || s->min_size || s->max_size;
}

static bool thread_matches(struct filter *f, pid_t pid, uint32_t tid)
{
	char name[32];
	bool match;

	for (size_t i = 0; i < f->nr_names; i++) {
		if (f->names[i].tid == tid)
			return f->names[i].match;
	}
	proc_thread_name(pid, tid, name, sizeof(name));
	match = name[0] && !regexec(&f->thread_re, name, 0, NULL, 0);
	/* A full cache just stops remembering: the answer stays right. */
	if (f->nr_names < NAME_CACHE) {
		f->names[f->nr_names].tid = tid;
		f->names[f->nr_names++].match = match;
	}
	return match;
}

bool filter__block(struct filter *f, pid_t pid, const struct alloc_info *info, uint64_t now_ns)
{
	const struct block_filter *s = &f->spec;

	if (s->min_age && now_ns - info->time_ns < (uint64_t)(s->min_age * 1e9))
		return false;
	if (s->tid && info->tid != (uint32_t)s->tid)
		return false;
	if (info->size < s->min_size || (s->max_size && info->size > s->max_size))
		return false;
	return !f->has_thread_re || thread_matches(f, pid, info->tid);
}

bool filter__has_module(const struct filter *f)
{
	return f->has_module_re;
}

bool filter__module(const struct filter *f, const char *module)
{
	return !f->has_module_re || (module && !regexec(&f->module_re, module, 0, NULL, 0));
}

const char *filter__describe(const struct filter *f)
{
	return f->description[0] ? f->description : NULL;
}
