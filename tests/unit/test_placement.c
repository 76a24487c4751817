// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe/placement.h"

/*
 * The first instructions of real allocator functions, as objdump -d shows
 * them in Debian 12: libc6 2.36-9+deb12u14, libjemalloc2 5.3.0-1,
 * libtcmalloc-minimal4 2.10-1, libmimalloc2.0 2.0.9+ds-2, libstdc++6
 * 12.2.0-14 and musl 1.2.3-1. Each stops one instruction past where the
 * walk decides.
 */

/* free in libc.so.6 */
static const uint8_t glibc_free[] = {
	0x48, 0x85, 0xff, /* +0: test %rdi,%rdi */
	0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00, /* +3: je free+0xc8 */
	0x55, /* +9: push %rbp */
};

/* malloc in libc.so.6 */
static const uint8_t glibc_malloc[] = {
	0x41, 0x54, /* +0: push %r12 */
	0x55, /* +2: push %rbp */
};

/* calloc in libc.so.6 */
static const uint8_t glibc_calloc[] = {
	0x41, 0x55, /* +0: push %r13 */
	0x48, 0x89, 0xf8, /* +2: mov %rdi,%rax */
};

/* realloc in libc.so.6 */
static const uint8_t glibc_realloc[] = {
	0x41, 0x57, /* +0: push %r15 */
	0x41, 0x56, /* +2: push %r14 */
};

/* memalign in libc.so.6 */
static const uint8_t glibc_memalign[] = {
	0x80, 0x3d, 0x71, 0x0e, 0x14, 0x00, 0x00, /* +0: cmpb $0x0,0x140e71(%rip) */
	0x74, 0x07, /* +7: je memalign+0x10 */
	0xe9, 0x32, 0xf6, 0xff, 0xff, /* +9: jmp memalign-0x9c0 */
};

/* posix_memalign in libc.so.6 */
static const uint8_t glibc_posix_memalign[] = {
	0x80, 0x3d, 0x01, 0x02, 0x14, 0x00, 0x00, /* +0: cmpb $0x0,0x140201(%rip) */
	0x41, 0x54, /* +7: push %r12 */
	0x49, 0x89, 0xd4, /* +9: mov %rdx,%r12 */
};

/* valloc in libc.so.6 */
static const uint8_t glibc_valloc[] = {
	0x80, 0x3d, 0x31, 0x0e, 0x14, 0x00, 0x00, /* +0: cmpb $0x0,0x140e31(%rip) */
	0x53, /* +7: push %rbx */
	0x48, 0x89, 0xfb, /* +8: mov %rdi,%rbx */
};

/* pvalloc in libc.so.6 */
static const uint8_t glibc_pvalloc[] = {
	0x80, 0x3d, 0x01, 0x0e, 0x14, 0x00, 0x00, /* +0: cmpb $0x0,0x140e01(%rip) */
	0x53, /* +7: push %rbx */
	0x48, 0x89, 0xfb, /* +8: mov %rdi,%rbx */
};

/* munmap in libc.so.6 */
static const uint8_t glibc_munmap[] = {
	0xb8, 0x0b, 0x00, 0x00, 0x00, /* +0: mov $0xb,%eax */
	0x0f, 0x05, /* +5: syscall */
	0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff, /* +7: cmp $0xfffffffffffff001,%rax */
};

/* reallocarray in libc.so.6 */
static const uint8_t glibc_reallocarray[] = {
	0x48, 0x89, 0xf0, /* +0: mov %rsi,%rax */
	0x48, 0xf7, 0xe2, /* +3: mul %rdx */
	0x48, 0x89, 0xc6, /* +6: mov %rax,%rsi */
};

/* free in libjemalloc.so.2 */
static const uint8_t jemalloc_free[] = {
	0x48, 0x89, 0xf8, /* +0: mov %rdi,%rax */
	0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00, /* +3: mov 0xa530e(%rip),%rdx */
	0x48, 0x89, 0xf9, /* +10: mov %rdi,%rcx */
};

/* sdallocx in libjemalloc.so.2 */
static const uint8_t jemalloc_sdallocx[] = {
	0x49, 0x89, 0xf8, /* +0: mov %rdi,%r8 */
	0x48, 0x81, 0xfe, 0x00, 0x10, 0x00, 0x00, /* +3: cmp $0x1000,%rsi */
};

/* dallocx in libjemalloc.so.2 */
static const uint8_t jemalloc_dallocx[] = {
	0x41, 0x57, /* +0: push %r15 */
	0x41, 0x56, /* +2: push %r14 */
};

/* free in libtcmalloc_minimal.so.4 */
static const uint8_t tcmalloc_free[] = {
	0x48, 0x8b, 0x05, 0x59, 0xb1, 0x1b, 0x00, /* +0: mov 0x1bb159(%rip),%rax */
	0x48, 0x85, 0xc0, /* +7: test %rax,%rax */
	0x0f, 0x85, 0x90, 0x00, 0x00, 0x00, /* +10: jne free+0xa0 */
	0x48, 0x89, 0xfa, /* +16: mov %rdi,%rdx */
};

/* operator delete(void *, size_t) (_ZdlPvm) in libtcmalloc_minimal.so.4 */
static const uint8_t tcmalloc_delete_sized[] = {
	0x48, 0x8b, 0x05, 0xd9, 0xaf, 0x1b, 0x00, /* +0: mov 0x1bafd9(%rip),%rax */
	0x48, 0x85, 0xc0, /* +7: test %rax,%rax */
	0x0f, 0x85, 0x80, 0x00, 0x00, 0x00, /* +10: jne _ZdlPvm+0x90 */
	0x48, 0x85, 0xff, /* +16: test %rdi,%rdi */
};

/* munmap in libtcmalloc_minimal.so.4 */
static const uint8_t tcmalloc_munmap[] = {
	0x41, 0x54, /* +0: push %r12 */
	0x49, 0x89, 0xf4, /* +2: mov %rsi,%r12 */
};

/* free (mi_free) in libmimalloc.so.2 */
static const uint8_t mimalloc_free[] = {
	0x48, 0x89, 0xf9, /* +0: mov %rdi,%rcx */
	0x48, 0x85, 0xff, /* +3: test %rdi,%rdi */
};

/* operator delete(void *) (_ZdlPv) in libstdc++.so.6 */
static const uint8_t libstdcxx_delete[] = {
	0xf3, 0x0f, 0x1e, 0xfa, /* +0: endbr64 */
	0xe9, 0x87, 0x2f, 0xff, 0xff, /* +4: jmp _ZdlPv-0xd070 */
	0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00, /* +9: nopl 0x0(%rax) */
};

/* operator delete(void *, size_t) (_ZdlPvm) in libstdc++.so.6 */
static const uint8_t libstdcxx_delete_sized[] = {
	0xf3, 0x0f, 0x1e, 0xfa, /* +0: endbr64 */
	0xe9, 0x17, 0x27, 0xff, 0xff, /* +4: jmp _ZdlPvm-0xd8e0 */
	0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00, /* +9: nopl 0x0(%rax) */
};

/* operator new(size_t) (_Znwm) in libstdc++.so.6 */
static const uint8_t libstdcxx_new[] = {
	0xf3, 0x0f, 0x1e, 0xfa, /* +0: endbr64 */
	0x48, 0x85, 0xff, /* +4: test %rdi,%rdi */
	0xb8, 0x01, 0x00, 0x00, 0x00, /* +7: mov $0x1,%eax */
	0x53, /* +12: push %rbx */
	0x48, 0x0f, 0x45, 0xc7, /* +13: cmovne %rdi,%rax */
};

/* free in musl's libc.so */
static const uint8_t musl_free[] = {
	0xe9, 0xbb, 0x0a, 0x00, 0x00, /* +0: jmp free+0xac0 */
	0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, /* +5: cs nopw 0x0(%rax,%rax,1) */
};

/* munmap in musl's libc.so */
static const uint8_t musl_munmap[] = {
	0x55, /* +0: push %rbp */
	0x48, 0x89, 0xf5, /* +1: mov %rsi,%rbp */
};

/* A function and where its entry probe must go. */
struct real_func {
	const char *name;
	const uint8_t *code;
	size_t size;
	uint64_t offset;
	size_t needed;		/* bytes the choice rests on: through the chosen instruction */
	const char *why;
};

#define REAL(code, offset, needed, why) { #code, code, sizeof(code), offset, needed, why }

static const struct real_func real_funcs[] = {
	REAL(glibc_free, 3, 9, "je: emulated; skipped test"),
	REAL(glibc_malloc, 0, 2, "push: emulated"),
	REAL(glibc_calloc, 0, 2, "push: emulated"),
	REAL(glibc_realloc, 0, 2, "push: emulated"),
	/* aligned_alloc is the same function */
	REAL(glibc_memalign, 7, 9, "je: emulated; skipped cmp"),
	REAL(glibc_posix_memalign, 7, 9, "push: emulated; skipped cmp"),
	REAL(glibc_valloc, 7, 8, "push: emulated; skipped cmp"),
	REAL(glibc_pvalloc, 7, 8, "push: emulated; skipped cmp"),
	REAL(glibc_munmap, 0, 7, "unknown instruction at +5"),
	REAL(glibc_reallocarray, 0, 6, "mul at +3 writes rdx"),
	REAL(jemalloc_free, 0, 10, "mov at +3 writes rdx"),
	REAL(jemalloc_sdallocx, 0, 3, "mov at +0 writes r8"),
	REAL(jemalloc_dallocx, 0, 2, "push: emulated"),
	REAL(tcmalloc_free, 10, 16, "jne: emulated; skipped mov, test"),
	REAL(tcmalloc_delete_sized, 10, 16, "jne: emulated; skipped mov, test"),
	REAL(tcmalloc_munmap, 0, 2, "push: emulated"),
	REAL(mimalloc_free, 0, 3, "mov at +0 writes rcx"),
	REAL(libstdcxx_delete, 4, 9, "jmp: emulated; skipped endbr64"),
	REAL(libstdcxx_delete_sized, 4, 9, "jmp: emulated; skipped endbr64"),
	REAL(libstdcxx_new, 12, 13, "push: emulated; skipped endbr64, test, mov"),
	REAL(musl_free, 0, 5, "jmp: emulated"),
	REAL(musl_munmap, 0, 1, "push: emulated"),
};

#define NR_REAL (sizeof(real_funcs) / sizeof(real_funcs[0]))

/* placement__x86 on the first @n bytes, from a buffer of that size for ASan. */
static uint64_t place(const uint8_t *code, size_t n, char *why, size_t size)
{
	uint8_t *copy = malloc(n ? n : 1);
	uint64_t offset;

	assert_non_null(copy);
	memcpy(copy, code, n);
	offset = placement__x86(copy, n, why, size);
	free(copy);
	return offset;
}

/* Offset and reason as one line, so that a mismatch names the function. */
static void test_real_functions(void **state)
{
	char why[96], got[160], want[160];
	uint64_t offset;

	for (size_t i = 0; i < NR_REAL; i++) {
		const struct real_func *f = &real_funcs[i];

		offset = place(f->code, f->size, why, sizeof(why));
		snprintf(got, sizeof(got), "%s +%llu (%s)", f->name, (unsigned long long)offset, why);
		snprintf(want, sizeof(want), "%s +%llu (%s)", f->name, (unsigned long long)f->offset,
			 f->why);
		assert_string_equal(got, want);
	}
}

/* Cut short before the chosen instruction ends, the walk is unsure: entry. */
static void test_real_functions_truncated(void **state)
{
	char why[96];

	for (size_t i = 0; i < NR_REAL; i++) {
		const struct real_func *f = &real_funcs[i];

		for (size_t n = 0; n <= f->size; n++)
			assert_int_equal(place(f->code, n, why, sizeof(why)),
					 n >= f->needed ? f->offset : 0);
	}
}

/* Where a walk gives up, and what it says. */
static void check(const uint8_t *code, size_t size, uint64_t offset, const char *why)
{
	char got[96];

	assert_int_equal(place(code, size, got, sizeof(got)), offset);
	assert_string_equal(got, why);
}

#define CHECK(offset, why, ...)                                                         \
	check((const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }), \
	      offset, why)

static void test_argument_written_first(void **state)
{
	/* mov %rax,%rdi; push %rbp */
	CHECK(0, "mov at +0 writes rdi", 0x48, 0x89, 0xc7, 0x55);
	/* test %rdi,%rdi; mov %rax,%rsi; je */
	CHECK(0, "mov at +3 writes rsi", 0x48, 0x85, 0xff, 0x48, 0x89, 0xc6, 0x74, 0x07);
	/* xor %r9d,%r9d; push %rbx */
	CHECK(0, "xor at +0 writes r9", 0x45, 0x31, 0xc9, 0x53);
	/* mov $0x1,%dh (rdx's second byte); push %rbx */
	CHECK(0, "mov at +0 writes rdx", 0xb6, 0x01, 0x53);
	/* pop %rcx */
	CHECK(0, "pop at +0 writes rcx", 0x59);
	/* mov %rdi,%rax; mov %rdi,0x8(%rsp); sub $0x18,%rsp; push %rbx: none writes one */
	CHECK(12, "push: emulated; skipped mov, mov, sub", 0x48, 0x89, 0xf8, 0x48, 0x89, 0x7c,
	      0x24, 0x08, 0x48, 0x83, 0xec, 0x18, 0x53);
}

static void test_unknown_instruction(void **state)
{
	/* syscall; push %rbx */
	CHECK(0, "unknown instruction at +0", 0x0f, 0x05, 0x53);
	/* test %rdi,%rdi; int3; push %rbx */
	CHECK(0, "unknown instruction at +3", 0x48, 0x85, 0xff, 0xcc, 0x53);
	/* vzeroupper; push %rbx */
	CHECK(0, "unknown instruction at +0", 0xc5, 0xf8, 0x77, 0x53);
	/* test %rdi,%rdi; then the code ends inside a je */
	CHECK(0, "code cut short at +3", 0x48, 0x85, 0xff, 0x0f, 0x84);
}

static void test_branch_not_emulated(void **state)
{
	/* test %rdi,%rdi; ret */
	CHECK(0, "ret at +3: a branch the kernel single-steps", 0x48, 0x85, 0xff, 0xc3);
	/* endbr64; jmp *%rax */
	CHECK(0, "jmp at +4: a branch the kernel single-steps", 0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0xe0);
}

/* test %rdi,%rdi 11 times then push %rbx at +33: past the span; at +30 it is taken. */
static void test_span(void **state)
{
	uint8_t code[34];
	char why[96];

	for (size_t i = 0; i < 11; i++)
		memcpy(code + 3 * i, (const uint8_t[]){ 0x48, 0x85, 0xff }, 3);
	code[33] = 0x53;
	assert_int_equal(place(code, sizeof(code), why, sizeof(why)), 0);
	assert_string_equal(why, "nothing the kernel emulates in the first 32 bytes");
	code[30] = 0x53;
	assert_int_equal(place(code, 31, why, sizeof(why)), 30);
	assert_string_equal(why, "push: emulated; skipped test, test, test, test, test, test, "
				 "test, test, test, test");
}

static void test_nops(void **state)
{
	/* nopl 0x0(%rax,%rax,1): the kernel's 5-byte NOP, at the entry */
	CHECK(0, "nop: emulated", 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x53);
	/* nopw 0x0(%rax,%rax,1) without cs: not the kernel's 9-byte NOP; push %rbx */
	CHECK(9, "push: emulated; skipped nop", 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00,
	      0x00, 0x53);
}

/* A message that does not fit is cut, still terminated. */
static void test_short_why(void **state)
{
	char why[8];

	assert_int_equal(place(real_funcs[0].code, real_funcs[0].size, why, sizeof(why)), 3);
	assert_string_equal(why, "je: emu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_functions),
		cmocka_unit_test(test_real_functions_truncated),
		cmocka_unit_test(test_argument_written_first),
		cmocka_unit_test(test_unknown_instruction),
		cmocka_unit_test(test_branch_not_emulated),
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_nops),
		cmocka_unit_test(test_short_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
