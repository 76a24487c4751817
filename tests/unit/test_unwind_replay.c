// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF stack walker (bpf/cfi.bpf.h, bpf/memo.bpf.h, the same source,
 * compiled for user space by unwind_walk.c once per architecture)
 * replayed on stops of real programs recorded in tests/unit/unwind_cases/,
 * x86-64's and arm64's, each by its architecture's walker: each walk must
 * find exactly the frames gdb found there, with the flags and the memo's
 * answer recorded with them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "unwind_case.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* tests/unit/unwind_cases/@name.case, found from build/tests/ where this runs. */
static void load_case(struct unwind_case *c, const char *name)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/../../tests/unit/unwind_cases/%s.case", dirname(self),
		 name);
	assert_int_equal(unwind_case__load(c, path), 0);
}

/* The walk found exactly the case's frames and flags, asking for no tables. */
static void expect_frames(const char *name, const struct unwind_case *c, const struct case_walk *w)
{
	for (__u32 i = 0; i < c->nr_frames && i < w->st.nr; i++)
		if (w->st.ips[i] != c->frames[i])
			fail_msg("%s: frame #%u is %#llx, not %#llx (%s)", name, i,
				 (unsigned long long)w->st.ips[i], (unsigned long long)c->frames[i],
				 c->frame_notes[i]);
	assert_int_equal(w->st.nr, c->nr_frames);
	assert_int_equal(w->st.flags, c->flags);
	assert_int_equal(w->misses, 0);
}

static void replay(void **state)
{
	const char *name = *state;
	struct unwind_case c;
	struct case_walk w;

	load_case(&c, name);
	assert_true(c.nr_frames > 0);
	assert_int_equal(unwind_case__replay(&c, &w), 0);
	assert_true(w.started);
	/* A lookup the case cannot answer would make the walk a guess: re-record it. */
	assert_int_equal(c.absent, 0);
	expect_frames(name, &c, &w);
	assert_int_equal(w.recalled, c.memo_recall);
	assert_false(w.recalled_changed);
	assert_false(w.recalled_stale);
	unwind_case__release(&c);
}

/* The uretprobe trampoline of replay_returns(): an address no case maps. */
#define TRAMPOLINE 0x1000ULL

/* The recorded stack word above @above equal to @ret, or NULL; *@addr its address. */
static __u8 *stored_return(struct unwind_case *c, __u64 above, __u64 ret, __u64 *addr)
{
	for (size_t i = 0; i < c->nr_mem; i++) {
		struct case_memory *m = &c->mem[i];

		for (__u32 off = (8 - m->addr % 8) % 8; off + 8 <= m->len; off += 8) {
			if (m->addr + off <= above || memcmp(m->bytes + off, &ret, 8))
				continue;
			*addr = m->addr + off;
			return m->bytes + off;
		}
	}
	return NULL;
}

/*
 * The same stop beside return probes (ours, or another tool's): the
 * kernel replaced the first two return addresses it could (in x30 or on
 * the stack) by its trampoline and keeps the real ones in the thread's
 * pending instances, after one a longjmp left behind, the first chained
 * to one more. The walk must take both from there, in order, find the same frames, ask for no
 * tables, and not remember a walk the stack's words alone do not determine.
 */
static void replay_returns(void **state)
{
	const char *name = *state;
	struct unwind_case c;
	struct case_pending *p;
	struct case_walk w;
	__u64 above, tramp = TRAMPOLINE;
	__u8 *word;
	bool first;

	load_case(&c, name);
	p = &c.pending;
	p->tramp = TRAMPOLINE;
	p->ret[p->nr++] = (struct case_return){.stack = 16, .orig = 1}; /* below sp: stale */
	above = c.regs.sp - 1;
	for (__u32 k = 1; k < c.nr_frames && p->nr < 4; k++) {
		if (k == 1 && c.regs.lr && c.regs.lr == c.frames[1]) {
			c.regs.lr = TRAMPOLINE;
		} else {
			word = stored_return(&c, above, c.frames[k], &above);
			if (!word)
				continue;
			memcpy(word, &tramp, 8);
		}
		/*
		 * Alive: a frame above the stop's. The first is chained: a probed
		 * function's tail call was probed too, one slot for both.
		 */
		first = p->nr == 1;
		p->ret[p->nr++] = (struct case_return){
		    .stack = c.regs.sp + 4096, .orig = c.frames[k], .chained = first};
		if (first)
			p->ret[p->nr++] =
			    (struct case_return){.stack = c.regs.sp + 4096, .orig = c.frames[k]};
	}
	assert_int_equal(p->nr, 4);
	assert_int_equal(unwind_case__replay(&c, &w), 0);
	/* Each instance read once: the walk met both trampolines. */
	assert_int_equal(p->reads, 4);
	expect_frames(name, &c, &w);
	assert_false(w.recalled);
	unwind_case__release(&c);
}

#define RETURNS(file)                                                                              \
	{                                                                                          \
		.name = (file " beside return probes"), .test_func = replay_returns,               \
		.initial_state = (void *)(file)                                                    \
	}

#define CASE(file)                                                                                 \
	{                                                                                          \
		.name = (file), .test_func = replay, .initial_state = (void *)(file)               \
	}

/* Each named for its file, with what it exercises (record.sh records them). */
int main(void)
{
	const struct CMUnitTest tests[] = {
	    /* Through libc's frames; remembered: the walk read only its first window. */
	    CASE("glibc_qsort"),
	    /* C++'s new through libstdc++'s operator new. */
	    CASE("libstdcxx_new"),
	    /* 38 frames through clang, libclang-cpp and libLLVM: six windows, not remembered. */
	    CASE("clang_llvm"),
	    /* cc -static: .eh_frame without .eh_frame_hdr. */
	    CASE("static_qsort"),
	    /* A handler's allocation: the walk stops, cut, at __restore_rt (issue 23, item 4). */
	    CASE("signal_handler"),
	    /* arm64's, by arm64's walker: x30 at the first frame, frame records {x29, x30} saved.
	     */
	    CASE("glibc_qsort_arm64"),
	    CASE("libstdcxx_new_arm64"),
	    CASE("static_qsort_arm64"),
	    /* Through the vDSO's __kernel_rt_sigreturn, known by its code (no CFI there). */
	    CASE("signal_handler_arm64"),
	    /* -mbranch-protection=pac-ret: two saved return addresses signed, stripped by the walk.
	     */
	    CASE("pacret_qsort_arm64"),
	    RETURNS("glibc_qsort"),
	    RETURNS("clang_llvm"),
	    RETURNS("glibc_qsort_arm64"),
	    RETURNS("libstdcxx_new_arm64"),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
