// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocator discovery (probe/alloc_choice.c) without a process: the link
 * maps and ELF symbols of real programs, recorded in
 * tests/unit/fixtures/alloc_objects.h by scripts/record_alloc_fixtures.sh
 * (glibc, a C++ program on glibc, jemalloc linked and by LD_PRELOAD,
 * tcmalloc, mimalloc, musl, static glibc and musl, a stripped static
 * program, --allocator's prefix), visited in lookup order as
 * probe/allocator.c visits them. Each row: a recorded case with the
 * options, the entries chosen and the verdict.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "probe/alloc_choice.h"
#include "probe/allocator.h"

struct fx_object {
	const char *name;
	const char *const *defines; /* NULL-terminated */
};

struct fx_case {
	const char *name;
	const struct fx_object *objs; /* in link-map order, ended by a NULL name */
	bool final;		      /* a static executable */
};

#include "fixtures/alloc_objects.h"

/*
 * .entries: each entry chosen, "NAME SETS" ("*" before the allocator's
 * NAME; SETS the site sets joined by "+", "-" for none, "!" after them
 * when --big-only finds its mmap unusable), separated by "; ".
 * .upto: only the first objects of the link map (0: all), as early in a
 * launch.
 */
struct row {
	const char *fixture;
	struct allocator_opts opts;
	const char *entries;
	int verdict;
	size_t upto;
};

static const struct fx_case *fixture(const char *name)
{
	for (size_t i = 0; i < sizeof(fx_cases) / sizeof(fx_cases[0]); i++) {
		if (!strcmp(fx_cases[i].name, name))
			return &fx_cases[i];
	}
	fail_msg("no fixture %s", name);
	return NULL;
}

static bool has(const char *const *defines, const char *name)
{
	for (; *defines; defines++) {
		if (!strcmp(*defines, name))
			return true;
	}
	return false;
}

/* What @o defines, named as allocator.c names what it looks for. */
static struct alloc_candidate candidate(const struct fx_object *o, const struct symbol_names *sn)
{
	struct alloc_candidate c = {.glibc = has(o->defines, "gnu_get_libc_version")};

	for (int f = 0; f < FUNC_MAX; f++)
		c.defines[f] = has(o->defines, sn->names[f]);
	return c;
}

static void describe(char *buf, size_t size, const struct alloc_choice *c, const char *name,
		     const struct alloc_take *take)
{
	static const char *const set_names[] = {
	    [SITES_ALLOCATOR] = "allocator",
	    [SITES_NEW] = "new",
	    [SITES_MMAP] = "mmap",
	    [SITES_BIG] = "big",
	};
	size_t len = strlen(buf);
	const char *sep = "";

	len += snprintf(buf + len, size - len, "%s%s%s ", len ? "; " : "",
			c->allocator == (long)c->nr_entries - 1 ? "*" : "", name);
	for (int set = 0; set < SITES_MAX; set++) {
		if (take->sets & 1u << set) {
			len += snprintf(buf + len, size - len, "%s%s", sep, set_names[set]);
			sep = "+";
		}
	}
	snprintf(buf + len, size - len, "%s%s", take->sets ? "" : "-",
		 take->why_not_big ? "!" : "");
}

static void run_row(const struct row *r)
{
	const struct fx_case *fx = fixture(r->fixture);
	struct alloc_candidate cand;
	struct alloc_choice c;
	struct symbol_names sn;
	struct alloc_take take;
	char got[1024] = "";
	size_t nr = 0;

	symbol_names__init(&sn, r->opts.prefix);
	alloc_choice__init(&c, &r->opts);
	/* --allocator's object is looked at first, then the link map from its start. */
	if (r->opts.path) {
		cand = candidate(&fx->objs[0], &sn);
		take = alloc_choice__object(&c, &cand);
		if (take.entry)
			describe(got, sizeof(got), &c, fx->objs[0].name, &take);
	}
	for (size_t i = 0;
	     fx->objs[i].name && (!r->upto || i < r->upto) && !alloc_choice__finished(&c);
	     i++, nr++) {
		cand = candidate(&fx->objs[i], &sn);
		take = alloc_choice__object(&c, &cand);
		if (take.entry)
			describe(got, sizeof(got), &c, fx->objs[i].name, &take);
	}
	if (strcmp(got, r->entries) || alloc_choice__verdict(&c, fx->final) != r->verdict)
		fail_msg("%s: got \"%s\" (%d) after %zu objects, want \"%s\" (%d)", r->fixture, got,
			 alloc_choice__verdict(&c, fx->final), nr, r->entries, r->verdict);
}

#define RUN(...)                                                                                   \
	do {                                                                                       \
		const struct row rows[] = {__VA_ARGS__};                                           \
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)                        \
			run_row(&rows[i]);                                                         \
	} while (0)

/* The first object in lookup order with malloc and free; operator new where calls reach it. */
static void test_allocators(void **state)
{
	RUN({"glibc", {0}, "*libc.so.6 allocator", 0, 0},
	    /* libstdc++'s operator new calls malloc, but its caller's frame is lost there. */
	    {"glibc_cxx", {0}, "libstdc++.so.6 new; *libc.so.6 allocator", 0, 0},
	    {"jemalloc", {0}, "*libjemalloc.so.2 allocator", 0, 0},
	    {"jemalloc_preload", {0}, "*libjemalloc.so.2 allocator", 0, 0},
	    /* tcmalloc defines operator new itself: libstdc++'s is not reached. */
	    {"tcmalloc", {0}, "*libtcmalloc_minimal.so.4 allocator", 0, 0},
	    {"mimalloc", {0}, "*libmimalloc.so.2 allocator", 0, 0},
	    {"musl", {0}, "*ld-musl-x86_64.so.1 allocator", 0, 0});
}

/* A static executable is its own allocator, and maps nothing more; stripped, it has none. */
static void test_static(void **state)
{
	RUN({"glibc_static", {0}, "*leaks_static allocator", 0, 0},
	    {"musl_static", {0}, "*alloc_musl_static allocator", 0, 0},
	    {"static_stripped", {0}, "", -ENOENT, 0},
	    {"static_stripped", {.mmap = true}, "", -ENOENT, 0},
	    {"glibc_static", {.mmap = true}, "*leaks_static allocator+mmap", 0, 0});
}

/* Too early in a launch: what the loader has not mapped yet is no allocator. */
static void test_partial_link_map(void **state)
{
	RUN({"glibc_cxx", {0}, "", -ENOENT, 1},
	    {"glibc_cxx", {0}, "libstdc++.so.6 new", -ENOENT, 2},
	    {"tcmalloc", {0}, "", -ENOENT, 1});
}

/* --mmap: the first mmap in lookup order, in the allocator's entry or one of its own. */
static void test_mmap(void **state)
{
	RUN({"glibc", {.mmap = true}, "*libc.so.6 allocator+mmap", 0, 0},
	    {"jemalloc", {.mmap = true}, "*libjemalloc.so.2 allocator; libc.so.6 mmap", 0, 0},
	    {"glibc_cxx", {.mmap = true}, "libstdc++.so.6 new; *libc.so.6 allocator+mmap", 0, 0},
	    {"musl", {.mmap = true}, "*ld-musl-x86_64.so.1 allocator+mmap", 0, 0});
}

/* --big-only: the allocator named, not probed; glibc's mmap, munmap, mremap and brk only. */
static void test_big_only(void **state)
{
	RUN({"glibc", {.big_only = true}, "*libc.so.6 big", 0, 0},
	    {"jemalloc", {.big_only = true}, "*libjemalloc.so.2 -; libc.so.6 big", 0, 0},
	    {"glibc_cxx", {.big_only = true}, "*libc.so.6 big", 0, 0},
	    /* musl's malloc calls brk inline; static glibc has no gnu_get_libc_version. */
	    {"musl", {.big_only = true}, "*ld-musl-x86_64.so.1 -!", 0, 0},
	    {"glibc_static", {.big_only = true}, "*leaks_static -!", 0, 0});
}

/* --allocator EXE:pfx_: the object given, its prefixed C functions; glibc's are not. */
static void test_forced_prefix(void **state)
{
	RUN({"prefixed",
	     {.path = "alloc_prefixed", .prefix = "pfx_"},
	     "*alloc_prefixed allocator",
	     0,
	     0},
	    /* Without the prefix the same program's allocator is glibc's. */
	    {"prefixed", {0}, "*libc.so.6 allocator", 0, 0},
	    {"glibc", {.path = "libc.so.6", .prefix = "pfx_"}, "", -ENOENT, 0});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allocators),	     cmocka_unit_test(test_static),
	    cmocka_unit_test(test_partial_link_map), cmocka_unit_test(test_mmap),
	    cmocka_unit_test(test_big_only),	     cmocka_unit_test(test_forced_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
