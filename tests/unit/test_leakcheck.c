// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Leak classes on synthetic address spaces: one buffer standing for
 * [BASE, BASE + SPACE), blocks of 64 bytes from HEAP, root mappings
 * below it. Expected classes are valgrind memcheck's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "leakcheck/classify.h"
#include "leakcheck/roots.h"

#define BASE   0x100000ULL
#define SPACE  0x40000ULL
#define BSS    BASE	       /* a file's rw mapping */
#define TLS    (BASE + 0x1000) /* an anonymous mapping */
#define STACK  (BASE + 0x2000) /* [stack], 0x2000 bytes */
#define SP     (STACK + 0x1000)
#define HEAP   (BASE + 0x10000) /* [heap] to BASE + SPACE */
#define BLK(i) (HEAP + 0x100 + 0x80 * (i))
#define REG    1 /* a "where" meaning a register */

static uint8_t space[SPACE];

static int read_space(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (addr < BASE || addr + len > BASE + SPACE)
		return -EFAULT;
	memcpy(buf, space + (addr - BASE), len);
	return 0;
}

static void poke(uint64_t at, uint64_t val)
{
	memcpy(space + (at - BASE), &val, 8);
}

/* A pointer @to stored @at (an address, or REG for a register). */
struct ptr {
	uint64_t at;
	uint64_t to;
};

struct heap_case {
	const char *name;
	size_t nr_blocks;
	const char *want; /* one letter a block: R, P, I, D */
	uint64_t inuse;	  /* an untracked in-use chunk's data, or 0 */
	struct ptr ptrs[6];
	bool in_syscall; /* the thread: no red zone is live */
};

static const struct heap_case cases[] = {
    {"overwritten pointer", 1, "D", 0, {{BSS, 0}}, false},
    {"leaked list", 3, "DII", 0, {{BLK(0), BLK(1)}, {BLK(1) + 8, BLK(2)}}, false},
    {"leaked cycle", 3, "DII", 0, {{BLK(0), BLK(1)}, {BLK(1), BLK(2)}, {BLK(2), BLK(0)}}, false},
    {"lost block pointed at from a later one", 2, "ID", 0, {{BLK(1), BLK(0)}}, false},
    {"interior pointer only", 2, "PP", 0, {{BSS + 8, BLK(0) + 16}, {BLK(0), BLK(1)}}, false},
    {"interior and start pointer", 1, "R", 0, {{BSS, BLK(0) + 16}, {BSS + 8, BLK(0)}}, false},
    {"pointer one past the end", 1, "D", 0, {{BSS, BLK(0) + 64}}, false},
    {"unaligned pointer", 1, "D", 0, {{BSS + 4, BLK(0)}}, false},
    {"pointer only in a register", 2, "RR", 0, {{REG, BLK(0)}, {BLK(0) + 56, BLK(1)}}, false},
    {"pointer on another thread's stack", 1, "R", 0, {{SP + 8, BLK(0)}}, false},
    {"pointer in the red zone", 1, "R", 0, {{SP - 64, BLK(0)}}, false},
    {"pointer in a dead stack frame", 1, "D", 0, {{SP - 512, BLK(0)}}, false},
    {"stale red zone of a thread in a syscall", 1, "D", 0, {{SP - 64, BLK(0)}}, true},
    {"pointer in TLS", 1, "R", 0, {{TLS + 0x40, BLK(0)}}, false},
    {"pointer in .bss", 1, "R", 0, {{BSS + 0x800, BLK(0)}}, false},
    {"pointer in an untracked in-use chunk", 1, "R", HEAP + 0x10, {{HEAP + 0x20, BLK(0)}}, false},
    {"pointer in a free chunk", 1, "D", 0, {{HEAP + 0x20, BLK(0)}}, false},
    {"reachable block keeps its list",
     3,
     "RRR",
     0,
     {{BSS, BLK(2)}, {BLK(2), BLK(0)}, {BLK(0), BLK(1)}},
     false},
    {"list behind an interior pointer",
     3,
     "PPP",
     0,
     {{BSS, BLK(2) + 8}, {BLK(2), BLK(0)}, {BLK(0), BLK(1)}},
     false},
};

static const char letter[] = {
    [LEAK_REACHABLE] = 'R', [LEAK_POSSIBLE] = 'P', [LEAK_INDIRECT] = 'I', [LEAK_DEFINITE] = 'D'};

static struct mapping maps[] = {
    {.start = BSS, .end = BSS + 0x1000, .read = true, .write = true, .path = "/bin/prog"},
    {.start = TLS, .end = TLS + 0x1000, .read = true, .write = true},
    {.start = STACK, .end = STACK + 0x2000, .read = true, .write = true, .path = "[stack]"},
    {.start = HEAP, .end = BASE + SPACE, .read = true, .write = true, .path = "[heap]"},
};

/* @live: where the thread's live stack starts (its stack pointer, less its red zone, or not). */
static void run_case(const struct heap_case *hc, uint64_t live)
{
	struct leak_memory mem = {read_space, NULL};
	struct proc_maps pm = {maps, 4};
	struct range_set heap = {}, inuse = {}, roots = {};
	struct leak_block blocks[8];
	uint64_t regs[4] = {}, sp = SP;
	struct classifier *c;
	size_t i, nr_regs = 0;

	memset(space, 0, sizeof(space));
	for (i = 0; i < hc->nr_blocks; i++)
		blocks[i] = (struct leak_block){.addr = BLK(i), .size = 64, .id = i};
	for (i = 0; i < 6 && hc->ptrs[i].at; i++) {
		if (hc->ptrs[i].at == REG)
			regs[nr_regs++] = hc->ptrs[i].to;
		else
			poke(hc->ptrs[i].at, hc->ptrs[i].to);
	}
	assert_int_equal(range_set__add(&heap, HEAP, BASE + SPACE), 0);
	if (hc->inuse)
		assert_int_equal(range_set__add(&inuse, hc->inuse, hc->inuse + 0x40), 0);
	struct root_sources src = {&pm, &sp, &live, 1, &heap, &inuse, blocks, hc->nr_blocks};
	assert_int_equal(roots__build(&src, &roots), 0);
	c = classifier__new(blocks, hc->nr_blocks, &mem, NULL, NULL);
	assert_non_null(c);
	assert_int_equal(classifier__scan_words(c, regs, nr_regs), 0);
	for (i = 0; i < roots.n; i++)
		assert_int_equal(classifier__scan_range(c, roots.r[i].start, roots.r[i].end), 0);
	assert_int_equal(classifier__finish(c), 0);
	for (i = 0; i < hc->nr_blocks; i++) {
		if (letter[classifier__class(c, i)] != hc->want[i])
			fail_msg("%s: block %zu is %c, want %c", hc->name, i,
				 letter[classifier__class(c, i)], hc->want[i]);
	}
	classifier__free(c);
	range_set__release(&heap);
	range_set__release(&inuse);
	range_set__release(&roots);
}

static void test_heap_cases(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i], cases[i].in_syscall ? SP : SP - 128);
}

/*
 * A thread in its exit stop that entered exit() at EXIT_SP, 0x78 bytes
 * above its stack pointer: exit()'s frames between are dead.
 */
#define EXIT_SP (SP + 0x78)

static const struct heap_case exit_cases[] = {
    {"pointer in exit()'s frames, above the stack pointer", 1, "D", 0, {{SP + 0x40, BLK(0)}}, true},
    {"pointer just below where exit() was entered", 1, "D", 0, {{EXIT_SP - 8, BLK(0)}}, true},
    {"pointers where exit() was entered and above",
     2,
     "RR",
     0,
     {{EXIT_SP, BLK(0)}, {EXIT_SP + 8, BLK(1)}},
     true},
};

static void test_exit_entry_cases(void **state)
{
	for (size_t i = 0; i < sizeof(exit_cases) / sizeof(exit_cases[0]); i++)
		run_case(&exit_cases[i], EXIT_SP);
}

static void test_overlapping_blocks(void **state)
{
	struct leak_memory mem = {read_space, NULL};
	struct leak_block b[2] = {{.addr = BLK(0), .size = 64},
				  {.addr = BLK(0) + 32, .size = 64, .id = 1}};

	assert_null(classifier__new(b, 2, &mem, NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

static void test_stop_flag(void **state)
{
	struct leak_memory mem = {read_space, NULL};
	struct leak_block b = {.addr = BLK(0), .size = 64};
	volatile sig_atomic_t stop = 1;
	struct classifier *c = classifier__new(&b, 1, &mem, NULL, &stop);

	assert_non_null(c);
	assert_int_equal(classifier__scan_range(c, BSS, BSS + 0x1000), -EINTR);
	classifier__free(c);
}

static void test_unreadable_roots(void **state)
{
	struct leak_memory mem = {read_space, NULL};
	struct leak_block b = {.addr = BLK(0), .size = 64};
	struct classifier *c = classifier__new(&b, 1, &mem, NULL, NULL);

	assert_non_null(c);
	assert_int_equal(classifier__scan_range(c, 0x1000, 0x3000), 0);
	assert_int_equal(classifier__unreadable(c), 0x2000);
	classifier__free(c);
}

/* Blocks 0 and 1 of a wrapper with a 16-byte header (@offset) and pointers in .bss or blocks. */
struct wrapper_case {
	const char *name;
	uint32_t offset;
	struct ptr ptrs[3];
	const char *want;
	enum leak_heuristic heur; /* block 0's */
};

static const struct wrapper_case wrapper_cases[] = {
    {"the pointer the wrapper returned", 16, {{BSS, BLK(0) + 16}}, "RD", LEAK_HEUR_WRAPPER},
    {"no wrapper declared: interior", 0, {{BSS, BLK(0) + 16}}, "PD", LEAK_HEUR_NONE},
    {"another offset: interior", 16, {{BSS, BLK(0) + 24}}, "PD", LEAK_HEUR_NONE},
    {"the block's start too: no wrapper needed",
     16,
     {{BSS, BLK(0) + 16}, {BSS + 8, BLK(0)}},
     "RD",
     LEAK_HEUR_NONE},
    {"a chain of wrapped blocks",
     16,
     {{BSS, BLK(0) + 16}, {BLK(0) + 16, BLK(1) + 16}},
     "RR",
     LEAK_HEUR_WRAPPER},
    {"a lost wrapped block holds another", 16, {{BLK(0) + 16, BLK(1) + 16}}, "DI", LEAK_HEUR_NONE},
    {"held from a possibly lost block",
     16,
     {{BSS, BLK(0) + 8}, {BLK(0) + 16, BLK(1) + 16}},
     "PP",
     LEAK_HEUR_NONE},
};

static void run_wrapper_case(const struct wrapper_case *wc)
{
	struct leak_memory mem = {read_space, NULL};
	struct leak_block b[2];
	struct classifier *c;

	memset(space, 0, sizeof(space));
	for (size_t i = 0; i < 2; i++)
		b[i] =
		    (struct leak_block){.addr = BLK(i), .size = 64, .id = i, .offset = wc->offset};
	for (size_t i = 0; i < 3 && wc->ptrs[i].at; i++)
		poke(wc->ptrs[i].at, wc->ptrs[i].to);
	c = classifier__new(b, 2, &mem, NULL, NULL);
	assert_non_null(c);
	assert_int_equal(classifier__scan_range(c, BSS, BSS + 0x1000), 0);
	assert_int_equal(classifier__finish(c), 0);
	for (size_t i = 0; i < 2; i++)
		if (letter[classifier__class(c, i)] != wc->want[i])
			fail_msg("%s: block %zu is %c, want %c", wc->name, i,
				 letter[classifier__class(c, i)], wc->want[i]);
	if (classifier__heuristic(c, 0) != wc->heur)
		fail_msg("%s: block 0 reached via %s", wc->name,
			 leak_heuristic__name(classifier__heuristic(c, 0)));
	classifier__free(c);
}

static void test_wrapper_offsets(void **state)
{
	for (size_t i = 0; i < sizeof(wrapper_cases) / sizeof(wrapper_cases[0]); i++)
		run_wrapper_case(&wrapper_cases[i]);
}

static void test_wrapper_specs(void **state)
{
	struct leak_wrapper w[2];

	assert_int_equal(leak_wrapper__parse("my_malloc:24", &w[0]), 0);
	assert_int_equal(w[0].len, strlen("my_malloc"));
	assert_int_equal(w[0].offset, 24);
	assert_int_equal(leak_wrapper__parse("ns::alloc:16", &w[1]), 0);
	assert_int_equal(w[1].len, strlen("ns::alloc"));
	assert_int_equal(w[1].offset, 16);
	assert_int_equal(leak_wrapper__offset(w, 2, "my_malloc"), 24);
	assert_int_equal(leak_wrapper__offset(w, 2, "ns::alloc(unsigned long)"), 16);
	assert_int_equal(leak_wrapper__offset(w, 2, "my_malloc_other"), 0);
	assert_int_equal(leak_wrapper__offset(w, 2, "my_mallo"), 0);
	assert_int_equal(leak_wrapper__offset(w, 2, NULL), 0);
	assert_int_equal(leak_wrapper__parse("f:0", &w[0]), -EINVAL);
	assert_int_equal(leak_wrapper__parse("f:4097", &w[0]), -EINVAL);
	assert_int_equal(leak_wrapper__parse(":8", &w[0]), -EINVAL);
	assert_int_equal(leak_wrapper__parse("f:8x", &w[0]), -EINVAL);
	assert_int_equal(leak_wrapper__parse("f:-8", &w[0]), -EINVAL);
	assert_int_equal(leak_wrapper__parse("f", &w[0]), -EINVAL);
}

/* Where a possibly lost block is held: the lowest interior offset from outside the lost blocks. */
static void test_held_at(void **state)
{
	struct leak_memory mem = {read_space, NULL};
	struct leak_block b[2] = {{.addr = BLK(0), .size = 64},
				  {.addr = BLK(1), .size = 64, .id = 1}};
	struct classifier *c;

	memset(space, 0, sizeof(space));
	poke(BSS, BLK(0) + 24);
	poke(BSS + 8, BLK(0) + 16);
	/* block 1 is lost: its pointer into block 0 is not where block 0 is held */
	poke(BLK(1), BLK(0) + 8);
	c = classifier__new(b, 2, &mem, NULL, NULL);
	assert_non_null(c);
	assert_int_equal(classifier__scan_range(c, BSS, BSS + 0x1000), 0);
	assert_int_equal(classifier__finish(c), 0);
	assert_int_equal(classifier__class(c, 0), LEAK_POSSIBLE);
	assert_int_equal(classifier__held_at(c, 0), 16);
	assert_int_equal(classifier__class(c, 1), LEAK_DEFINITE);
	assert_int_equal(classifier__held_at(c, 1), 0);
	classifier__free(c);
}

/* A function's possibly lost blocks held at @n offsets: the header learned, and its evidence. */
static void expect_learned(const uint32_t *held, size_t n, uint32_t want, size_t evidence)
{
	uint32_t copy[8];
	size_t got_evidence;

	memcpy(copy, held, n * sizeof(*held));
	assert_int_equal(leak_wrapper__learn(copy, n, &got_evidence), want);
	assert_int_equal(got_evidence, evidence);
}

static void test_wrapper_learning(void **state)
{
	/* leakwrap's wrap16_malloc: 3 held at 16, inside() at 24 */
	expect_learned((uint32_t[]){24, 16, 16, 16}, 4, 16, 3);
	/* one block is no evidence */
	expect_learned((uint32_t[]){24}, 1, 0, 1);
	/* not more than half */
	expect_learned((uint32_t[]){16, 16, 24, 24}, 4, 0, 2);
	/* not a header: unaligned, or past LEAK_LEARN_MAX_HEADER */
	expect_learned((uint32_t[]){12, 12}, 2, 0, 2);
	expect_learned((uint32_t[]){72, 72, 72}, 3, 0, 3);
	expect_learned((uint32_t[]){64, 64}, 2, 64, 2);
	/* 8: valgrind's length64 */
	expect_learned((uint32_t[]){8, 8}, 2, 0, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heap_cases),	       cmocka_unit_test(test_exit_entry_cases),
	    cmocka_unit_test(test_overlapping_blocks), cmocka_unit_test(test_stop_flag),
	    cmocka_unit_test(test_unreadable_roots),   cmocka_unit_test(test_wrapper_offsets),
	    cmocka_unit_test(test_wrapper_specs),      cmocka_unit_test(test_held_at),
	    cmocka_unit_test(test_wrapper_learning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
