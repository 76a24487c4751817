// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rules for allocator calls in flight (bpf/inflight.bpf.h), through the
 * functions the BPF programs call: one row per situation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include "inflight_rules.h"

/* The open call's stack pointer at entry, as a glibc thread's might be. */
#define SP 0x7ffc12345000ULL
/* The thread's record: closed, or opened under that epoch. */
#define CLOSED (-1)
#define OPEN   0

enum event { AT_ENTRY, AT_RETURN };

struct call_case {
	const char *situation;
	enum event event;
	__s64 opened; /* the epoch the thread's record was opened in, or CLOSED */
	__u32 open_func;
	__u64 open_sp;
	__u32 epoch; /* probe_epoch now */
	__u32 func;  /* the call entering or returning */
	__u64 sp;    /* its stack pointer there */
	enum call_verdict verdict;
};

static const struct call_case call_cases[] = {
    {"first call of a thread: no record", AT_ENTRY, CLOSED, 0, 0, 0, FUNC_MALLOC, SP, CALL_OPENS},
    {"recycled tid: the dead thread's record went with it", AT_ENTRY, CLOSED, 0, 0, 0, FUNC_MALLOC,
     SP - 4096, CALL_OPENS},
    {"a call after the last one returned", AT_ENTRY, CLOSED, FUNC_MALLOC, SP, 0, FUNC_MALLOC, SP,
     CALL_OPENS},
    {"realloc(NULL, n) tail-calls malloc: same sp", AT_ENTRY, OPEN, FUNC_REALLOC, SP, 0,
     FUNC_MALLOC, SP, CALL_INNER},
    {"operator new calls malloc, a frame below", AT_ENTRY, OPEN, FUNC_NEW, SP, 0, FUNC_MALLOC,
     SP - 40, CALL_INNER},
    {"operator delete calls free", AT_ENTRY, OPEN, FUNC_DELETE, SP, 0, FUNC_FREE, SP - 24,
     CALL_INNER},
    {"realloc(p, 0) calls free", AT_ENTRY, OPEN, FUNC_REALLOC, SP, 0, FUNC_FREE, SP - 8,
     CALL_INNER},
    {"above a call that never returned (exception out of new)", AT_ENTRY, OPEN, FUNC_NEW, SP, 0,
     FUNC_MALLOC, SP + 256, CALL_OPENS},
    {"just inside NEST_WINDOW below a call that never returned", AT_ENTRY, OPEN, FUNC_NEW, SP, 0,
     FUNC_MALLOC, SP - NEST_WINDOW + 8, CALL_INNER},
    {"NEST_WINDOW below a call that never returned", AT_ENTRY, OPEN, FUNC_NEW, SP, 0, FUNC_MALLOC,
     SP - NEST_WINDOW, CALL_OPENS},
    {"record from before the probes were detached", AT_ENTRY, 6, FUNC_MALLOC, SP, 7, FUNC_MALLOC,
     SP, CALL_OPENS},
    {"record opened after the epoch bump", AT_ENTRY, 7, FUNC_REALLOC, SP, 7, FUNC_MALLOC, SP,
     CALL_INNER},
    {"a mark that wrapped to CALL_CLOSED is never open", AT_ENTRY, UINT32_MAX, FUNC_REALLOC, SP,
     UINT32_MAX, FUNC_MALLOC, SP, CALL_OPENS},

    {"malloc returns", AT_RETURN, OPEN, FUNC_MALLOC, SP, 0, FUNC_MALLOC, SP + RET_SP_DELTA,
     CALL_RECORD},
    {"operator new returns, after the malloc inside it", AT_RETURN, OPEN, FUNC_NEW, SP, 0, FUNC_NEW,
     SP + RET_SP_DELTA, CALL_RECORD},
    {"tail-called malloc returns first, inside realloc", AT_RETURN, OPEN, FUNC_REALLOC, SP, 0,
     FUNC_MALLOC, SP + RET_SP_DELTA, CALL_FOREIGN},
    {"then realloc returns", AT_RETURN, OPEN, FUNC_REALLOC, SP, 0, FUNC_REALLOC, SP + RET_SP_DELTA,
     CALL_RECORD},
    {"recursive malloc (from a hook) returns below the open one", AT_RETURN, OPEN, FUNC_MALLOC, SP,
     0, FUNC_MALLOC, SP - 64 + RET_SP_DELTA, CALL_FOREIGN},
    {"operator delete returns: it held the record", AT_RETURN, OPEN, FUNC_DELETE, SP, 0,
     FUNC_DELETE, SP + RET_SP_DELTA, CALL_CLOSES},
    {"sdallocx returns", AT_RETURN, OPEN, FUNC_SDALLOCX, SP, 0, FUNC_SDALLOCX, SP + RET_SP_DELTA,
     CALL_CLOSES},
    {"a return after the record closed", AT_RETURN, CLOSED, FUNC_MALLOC, SP, 0, FUNC_MALLOC,
     SP + RET_SP_DELTA, CALL_FOREIGN},
    {"a return of a call from before the probes were detached", AT_RETURN, 0, FUNC_MALLOC, SP, 1,
     FUNC_MALLOC, SP + RET_SP_DELTA, CALL_FOREIGN},
};

static const char *verdict_name(enum call_verdict v)
{
	static const char *const names[] = {
	    [CALL_OPENS] = "opens",   [CALL_INNER] = "inner",	  [CALL_RECORD] = "record",
	    [CALL_CLOSES] = "closes", [CALL_FOREIGN] = "foreign",
	};

	return v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

static void test_call_rules(void **state)
{
	int bad = 0;

	for (size_t i = 0; i < sizeof(call_cases) / sizeof(call_cases[0]); i++) {
		const struct call_case *c = &call_cases[i];
		__u32 mark = c->opened == CLOSED ? CALL_CLOSED : call_mark(c->opened);
		enum call_verdict got;

		if (c->event == AT_ENTRY)
			got = call_at_entry(mark, c->open_sp, c->epoch, c->sp);
		else
			got = call_at_return(mark, c->open_func, c->open_sp, c->epoch, c->func,
					     c->sp);
		if (got == c->verdict)
			continue;
		print_error("%s: %s, want %s\n", c->situation, verdict_name(got),
			    verdict_name(c->verdict));
		bad++;
	}
	assert_int_equal(bad, 0);
}

struct sample_case {
	const char *situation;
	__u64 rate;
	__s64 left; /* the thread's countdown before the allocation */
	__u64 size;
	bool sampled;
	__s64 left_after;
	/* decided at the entry instead (sample_passes), as a session does */
	bool passes;
	__s64 left_after_entry;
};

static const struct sample_case sample_cases[] = {
    {"no --sample: every allocation", 0, 0, 100, true, 0, false, 0},
    {"bytes left after this one", 4096, 4096, 100, false, 3996, true, 3996},
    {"this one ends the gap exactly", 4096, 100, 100, true, 0, false, 100},
    {"this one crosses the gap", 4096, 100, 4096, true, -3996, false, 100},
    {"malloc(0) counts nothing down", 4096, 1, 0, false, 1, true, 1},
    {"a countdown at zero takes the next one", 4096, 0, 0, true, 0, false, 0},
    {"a size far past the gap", 4096, 4096, 1ULL << 40, true, 4096 - (1LL << 40), false, 4096},
};

static void test_sample_rules(void **state)
{
	for (size_t i = 0; i < sizeof(sample_cases) / sizeof(sample_cases[0]); i++) {
		const struct sample_case *c = &sample_cases[i];
		__s64 left = c->left;
		bool got = sample_due(c->rate, &left, c->size);

		if (got != c->sampled || left != c->left_after)
			fail_msg("%s: sampled %d, %lld left; want %d, %lld", c->situation, got,
				 (long long)left, c->sampled, (long long)c->left_after);
		/* An entry that passes an allocation by does what the return would have. */
		left = c->left;
		got = sample_passes(c->rate, &left, c->size);
		if (got != c->passes || left != c->left_after_entry || (got && c->sampled))
			fail_msg("%s at entry: passes %d, %lld left; want %d, %lld", c->situation,
				 got, (long long)left, c->passes, (long long)c->left_after_entry);
	}
}

struct func_case {
	__u32 func;
	bool reallocs;	    /* takes a block and may hand back another */
	bool maps;	    /* fails with MAP_FAILED */
	bool holds_release; /* holds the record while it may call free */
	bool nests;	    /* may call other probed allocator functions */
};

/* Every function, each once: one added to alloc_funcs.def needs its row here. */
static const struct func_case func_cases[] = {
    {FUNC_MALLOC, false, false, false, false},
    {FUNC_CALLOC, false, false, false, true},
    {FUNC_REALLOC, true, false, false, true},
    {FUNC_REALLOCARRAY, true, false, false, true},
    {FUNC_POSIX_MEMALIGN, false, false, false, true},
    {FUNC_MEMALIGN, false, false, false, true},
    {FUNC_ALIGNED_ALLOC, false, false, false, true},
    {FUNC_VALLOC, false, false, false, true},
    {FUNC_PVALLOC, false, false, false, true},
    {FUNC_FREE, false, false, false, false},
    {FUNC_MALLOCX, false, false, false, false},
    {FUNC_RALLOCX, true, false, false, true},
    {FUNC_DALLOCX, false, false, true, false},
    {FUNC_SDALLOCX, false, false, true, false},
    {FUNC_FREE_SIZED, false, false, true, false},
    {FUNC_FREE_ALIGNED_SIZED, false, false, true, false},
    {FUNC_NEW, false, false, false, true},
    {FUNC_NEW_NOTHROW, false, false, false, true},
    {FUNC_NEW_ALIGNED, false, false, false, true},
    {FUNC_NEW_ALIGNED_NOTHROW, false, false, false, true},
    {FUNC_NEW_ARRAY, false, false, false, true},
    {FUNC_NEW_ARRAY_NOTHROW, false, false, false, true},
    {FUNC_NEW_ARRAY_ALIGNED, false, false, false, true},
    {FUNC_NEW_ARRAY_ALIGNED_NOTHROW, false, false, false, true},
    {FUNC_DELETE, false, false, true, true},
    {FUNC_DELETE_SIZED, false, false, true, true},
    {FUNC_DELETE_ALIGNED, false, false, true, true},
    {FUNC_DELETE_SIZED_ALIGNED, false, false, true, true},
    {FUNC_DELETE_NOTHROW, false, false, true, true},
    {FUNC_DELETE_ALIGNED_NOTHROW, false, false, true, true},
    {FUNC_DELETE_ARRAY, false, false, true, true},
    {FUNC_DELETE_ARRAY_SIZED, false, false, true, true},
    {FUNC_DELETE_ARRAY_ALIGNED, false, false, true, true},
    {FUNC_DELETE_ARRAY_SIZED_ALIGNED, false, false, true, true},
    {FUNC_DELETE_ARRAY_NOTHROW, false, false, true, true},
    {FUNC_DELETE_ARRAY_ALIGNED_NOTHROW, false, false, true, true},
    {FUNC_MMAP, false, true, false, false},
    {FUNC_MUNMAP, false, false, false, false},
    {FUNC_MREMAP, true, true, false, true},
    {FUNC_BRK, false, false, false, false},
};

static void test_func_kinds(void **state)
{
	bool seen[FUNC_MAX] = {0};

	assert_int_equal(sizeof(func_cases) / sizeof(func_cases[0]), FUNC_MAX);
	for (size_t i = 0; i < sizeof(func_cases) / sizeof(func_cases[0]); i++) {
		const struct func_case *c = &func_cases[i];

		if (c->func >= FUNC_MAX || seen[c->func]) {
			fail_msg("function %u: not one of enum alloc_func, or twice", c->func);
			continue;
		}
		seen[c->func] = true;

		if (func_reallocs(c->func) != c->reallocs || func_maps(c->func) != c->maps ||
		    func_holds_release(c->func) != c->holds_release ||
		    func_may_nest(c->func) != c->nests)
			fail_msg("function %u: reallocs %d maps %d holds %d nests %d", c->func,
				 func_reallocs(c->func), func_maps(c->func),
				 func_holds_release(c->func), func_may_nest(c->func));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_call_rules),
	    cmocka_unit_test(test_sample_rules),
	    cmocka_unit_test(test_func_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
