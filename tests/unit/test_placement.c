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
#include "arch/arch.h"
#include "probe/x86_insn.h"
#include "placement_fixtures.h"
#include "placement_fixtures_arm64.h"

/* A real function, what it needs, and where its probe must go. */
struct real_func {
	const struct insn_arch *arch;
	const char *name;
	const uint8_t *code;
	size_t size;
	struct placement_need need;
	uint64_t offset;
	size_t needed; /* bytes the choice rests on: through the deciding instruction */
	bool stepped;
	const char *why;
};

/* @args: the function's parameters; @ret: it has a return probe (all but free and munmap). */
#define REAL_ARCH(arch, code, args, ret, offset, needed, stepped, why)                             \
	{                                                                                          \
		arch, #code, code, sizeof(code), {.nr_args = args, .keep_sp = ret}, offset,        \
		    needed, stepped, why                                                           \
	}
#define REAL(...) REAL_ARCH(&insn_x86, __VA_ARGS__)

static const struct real_func real_funcs[] = {
    REAL(glibc_malloc, 1, true, 0, 2, false, "push at +0, emulated; args in rdi"),
    REAL(glibc_free, 1, false, 3, 9, false, "je at +3, emulated; past test; args in rdi"),
    REAL(glibc_calloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(glibc_realloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(glibc_reallocarray, 3, true, 0, 6, true,
	 "single-stepped: mul at +3 overwrites rdx, argument 3's last copy"),
    REAL(glibc_posix_memalign, 3, true, 7, 9, false,
	 "push at +7, emulated; past cmp; args in rdi, rsi, rdx"),
    REAL(glibc_memalign, 2, true, 7, 9, false, "je at +7, emulated; past cmp; args in rdi, rsi"),
    REAL(glibc_valloc, 1, true, 7, 8, false, "push at +7, emulated; past cmp; args in rdi"),
    REAL(glibc_pvalloc, 1, true, 7, 8, false, "push at +7, emulated; past cmp; args in rdi"),
    REAL(glibc_mmap, 6, true, 10, 12, false,
	 "jne at +10, emulated; past mov, test; args in rdi, rsi, rdx, rcx, r8, r9"),
    REAL(glibc_munmap, 2, false, 0, 7, true, "single-stepped: unknown instruction at +5"),
    REAL(glibc_mremap, 5, true, 0, 4, true, "single-stepped: sub at +0 moves the stack pointer"),
    REAL(jemalloc_malloc, 1, true, 7, 13, false, "ja at +7, emulated; past cmp; args in rdi"),
    REAL(jemalloc_free, 1, false, 48, 54, false,
	 "jne at +48, emulated; past mov, mov, mov, shr, and, and, add, add, cmp; args in rdi"),
    REAL(jemalloc_calloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(jemalloc_realloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(jemalloc_posix_memalign, 3, true, 0, 2, false,
	 "push at +0, emulated; args in rdi, rsi, rdx"),
    REAL(jemalloc_memalign, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(jemalloc_aligned_alloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(jemalloc_valloc, 1, true, 0, 2, false, "push at +0, emulated; args in rdi"),
    REAL(jemalloc_mallocx, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(jemalloc_rallocx, 3, true, 2, 7, false,
	 "jmp at +2, emulated; past xor; args in rdi, rsi, rdx"),
    REAL(jemalloc_dallocx, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(jemalloc_sdallocx, 3, true, 10, 12, false,
	 "ja at +10, emulated; past mov, cmp; args in rdi, rsi, rdx"),
    REAL(jemalloc_new, 1, true, 7, 13, false, "ja at +7, emulated; past cmp; args in rdi"),
    REAL(jemalloc_delete, 1, true, 0, 5, false, "jmp at +0, emulated; args in rdi"),
    REAL(jemalloc_delete_sized, 2, true, 3, 5, false,
	 "je at +3, emulated; past test; args in rdi, rsi"),
    REAL(tcmalloc_minimal_malloc, 1, true, 10, 12, false,
	 "jne at +10, emulated; past mov, test; args in rdi"),
    REAL(tcmalloc_minimal_free, 1, false, 10, 16, false,
	 "jne at +10, emulated; past mov, test; args in rdi"),
    REAL(tcmalloc_minimal_calloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(tcmalloc_minimal_realloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(tcmalloc_minimal_posix_memalign, 3, true, 11, 13, false,
	 "jne at +11, emulated; past lea, or, test; args in rdi, rsi, rdx"),
    REAL(tcmalloc_minimal_memalign, 2, true, 10, 16, false,
	 "ja at +10, emulated; past mov, cmp; args in rdi, rsi"),
    REAL(tcmalloc_minimal_valloc, 1, true, 0, 1, false, "push at +0, emulated; args in rdi"),
    REAL(tcmalloc_minimal_pvalloc, 1, true, 0, 1, false, "push at +0, emulated; args in rdi"),
    REAL(tcmalloc_minimal_new, 1, true, 10, 12, false,
	 "jne at +10, emulated; past mov, test; args in rdi"),
    REAL(tcmalloc_minimal_delete_sized, 2, true, 10, 16, false,
	 "jne at +10, emulated; past mov, test; args in rdi, rsi"),
    REAL(tcmalloc_minimal_mmap, 6, true, 0, 2, false,
	 "push at +0, emulated; args in rdi, rsi, rdx, rcx, r8, r9"),
    REAL(tcmalloc_minimal_munmap, 2, false, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(tcmalloc_malloc, 1, true, 13, 19, false,
	 "jne at +13, emulated; past mov, mov, test; args in rdi"),
    REAL(tcmalloc_free, 1, false, 10, 16, false,
	 "jne at +10, emulated; past mov, test; args in rdi"),
    REAL(tcmalloc_calloc, 2, true, 12, 18, false,
	 "jne at +12, emulated; past mov, cmp; args in rdi, rsi"),
    REAL(tcmalloc_realloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(tcmalloc_posix_memalign, 3, true, 11, 13, false,
	 "jne at +11, emulated; past lea, or, test; args in rdi, rsi, rdx"),
    REAL(tcmalloc_memalign, 2, true, 10, 16, false,
	 "ja at +10, emulated; past mov, cmp; args in rdi, rsi"),
    REAL(tcmalloc_new, 1, true, 13, 19, false,
	 "jne at +13, emulated; past mov, mov, test; args in rdi"),
    REAL(mimalloc_malloc, 1, true, 21, 23, false,
	 "ja at +21, emulated; past mov, mov, mov, cmp; args in rsi"),
    REAL(mimalloc_free, 1, false, 6, 8, false, "je at +6, emulated; past mov, test; args in rdi"),
    REAL(mimalloc_calloc, 2, true, 18, 20, false,
	 "je at +18, emulated; past mov, mov, mov, cmp; args in rax, rsi"),
    REAL(mimalloc_realloc, 2, true, 20, 25, false,
	 "jmp at +20, emulated; past mov, mov, mov, mov, mov; args in rsi, rdx"),
    REAL(mimalloc_posix_memalign, 3, true, 0, 5, false,
	 "jmp at +0, emulated; args in rdi, rsi, rdx"),
    REAL(mimalloc_memalign, 2, true, 0, 5, false, "jmp at +0, emulated; args in rdi, rsi"),
    REAL(mimalloc_valloc, 1, true, 0, 5, false, "jmp at +0, emulated; args in rdi"),
    REAL(mimalloc_reallocarray, 3, true, 0, 5, false, "jmp at +0, emulated; args in rdi, rsi, rdx"),
    REAL(mimalloc_new, 1, true, 0, 1, false, "push at +0, emulated; args in rdi"),
    REAL(mimalloc_delete_sized, 2, true, 0, 5, false, "jmp at +0, emulated; args in rdi, rsi"),
    REAL(musl_malloc, 1, true, 0, 5, false, "jmp at +0, emulated; args in rdi"),
    REAL(musl_free, 1, false, 0, 5, false, "jmp at +0, emulated; args in rdi"),
    REAL(musl_calloc, 2, true, 0, 2, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(musl_realloc, 2, true, 0, 5, false, "jmp at +0, emulated; args in rdi, rsi"),
    REAL(musl_posix_memalign, 3, true, 0, 1, false, "push at +0, emulated; args in rdi, rsi, rdx"),
    REAL(musl_memalign, 2, true, 0, 5, false, "jmp at +0, emulated; args in rdi, rsi"),
    REAL(musl_aligned_alloc, 2, true, 0, 1, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(musl_valloc, 1, true, 8, 13, false, "jmp at +8, emulated; past mov, mov; args in rsi"),
    REAL(musl_munmap, 2, false, 0, 1, false, "push at +0, emulated; args in rdi, rsi"),
    REAL(libstdcxx_new, 1, true, 12, 13, false,
	 "push at +12, emulated; past endbr64, test, mov; args in rdi"),
    REAL(libstdcxx_delete, 1, true, 4, 9, false, "jmp at +4, emulated; past endbr64; args in rdi"),
    REAL(libstdcxx_delete_sized, 2, true, 4, 9, false,
	 "jmp at +4, emulated; past endbr64; args in rdi, rsi"),
    /* arm64: a return probe needs sp and x30 as the call left them */
    REAL_ARCH(&insn_arm64, a64_glibc_aligned_alloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_calloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_free, 1, false, 0, 4, false,
	      "cbz at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_glibc_malloc, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_memalign, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_mmap, 6, true, 4, 8, false,
	      "b.ne at +4, simulated; past ands; args in x0, x1, x2, x3, x4, x5"),
    REAL_ARCH(&insn_arm64, a64_glibc_munmap, 2, false, 0, 12, true,
	      "single-stepped: unknown instruction at +8"),
    REAL_ARCH(&insn_arm64, a64_glibc_posix_memalign, 3, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_pvalloc, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_realloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_glibc_valloc, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_aligned_alloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_calloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_delete, 1, true, 0, 4, false,
	      "b at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_delete_sized, 2, true, 0, 4, false,
	      "cbz at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_free, 1, false, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_malloc, 1, true, 4, 8, false,
	      "b.hi at +4, simulated; past subs; args in x0"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_memalign, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_new, 1, true, 4, 8, false,
	      "b.hi at +4, simulated; past subs; args in x0"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_posix_memalign, 3, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_realloc, 2, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_sdallocx, 3, true, 8, 12, false,
	      "b.ne at +8, simulated; past subs, ccmp; args in x0, x1, x2"),
    REAL_ARCH(&insn_arm64, a64_jemalloc_valloc, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_libstdcxx_delete, 1, true, 0, 4, false,
	      "b at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_libstdcxx_delete_sized, 2, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_libstdcxx_new, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_calloc, 2, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_delete_sized, 2, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_free, 1, false, 4, 8, false,
	      "cbz at +4, simulated; past mov; args in x0"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_malloc, 1, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_memalign, 2, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_new, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_posix_memalign, 3, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1, x2"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_realloc, 2, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_reallocarray, 3, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1, x2"),
    REAL_ARCH(&insn_arm64, a64_mimalloc_valloc, 1, true, 0, 4, false,
	      "b at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_musl_aligned_alloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_musl_calloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_musl_free, 1, false, 0, 4, false, "b at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_musl_malloc, 1, true, 0, 4, false, "b at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_musl_memalign, 2, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_musl_munmap, 2, false, 20, 24, false,
	      "bl at +20, simulated; past stp, add, stp, mov, mov; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_musl_posix_memalign, 3, true, 8, 12, false,
	      "b.ls at +8, simulated; past mov, subs; args in x0, x1, x2"),
    REAL_ARCH(&insn_arm64, a64_musl_realloc, 2, true, 0, 4, false,
	      "b at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_musl_valloc, 1, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_calloc, 2, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_free, 1, false, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_malloc, 1, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_memalign, 2, true, 8, 12, false,
	      "b.hi at +8, simulated; past mov, subs; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_calloc, 2, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_delete_sized, 2, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_free, 1, false, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_malloc, 1, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_memalign, 2, true, 8, 12, false,
	      "b.hi at +8, simulated; past mov, subs; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_mmap, 6, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_munmap, 2, false, 4, 8, false,
	      "adrp at +4, simulated; past stp; args in x0, x1"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_new, 1, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_posix_memalign, 3, true, 16, 20, false,
	      "b.ne at +16, simulated; past sub, orr, ands, ccmp; args in x0, x1, x2"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_pvalloc, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_realloc, 2, true, 0, 4, true,
	      "single-stepped: sub at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_minimal_valloc, 1, true, 0, 4, true,
	      "single-stepped: stp at +0 moves the stack pointer"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_new, 1, true, 0, 4, false,
	      "adrp at +0, simulated; args in x0"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_posix_memalign, 3, true, 16, 20, false,
	      "b.ne at +16, simulated; past sub, orr, ands, ccmp; args in x0, x1, x2"),
    REAL_ARCH(&insn_arm64, a64_tcmalloc_realloc, 2, true, 0, 4, true,
	      "single-stepped: sub at +0 moves the stack pointer"),
};

#define NR_REAL (sizeof(real_funcs) / sizeof(real_funcs[0]))

/* placement__walk on the first @n bytes, from a buffer of that size for ASan. */
static void place_arch(const struct insn_arch *arch, const uint8_t *code, size_t n,
		       const struct placement_need *need, struct placement *out)
{
	uint8_t *copy = malloc(n ? n : 1);

	assert_non_null(copy);
	memcpy(copy, code, n);
	placement__walk(arch, copy, n, need, out);
	free(copy);
}

static void place(const uint8_t *code, size_t n, const struct placement_need *need,
		  struct placement *out)
{
	place_arch(&insn_x86, code, n, need, out);
}

/* Everything placement says, as one line: a mismatch names the function and shows both. */
static void describe(char *buf, size_t size, const char *name, uint64_t offset, bool stepped,
		     const char *why)
{
	snprintf(buf, size, "%s +%llu%s (%s)", name, (unsigned long long)offset,
		 stepped ? " stepped" : "", why);
}

static void test_real_functions(void **state)
{
	char got[256], want[256];
	struct placement p;

	for (size_t i = 0; i < NR_REAL; i++) {
		const struct real_func *f = &real_funcs[i];

		place_arch(f->arch, f->code, f->size, &f->need, &p);
		describe(got, sizeof(got), f->name, p.offset, p.stepped, p.why);
		describe(want, sizeof(want), f->name, f->offset, f->stepped, f->why);
		assert_string_equal(got, want);
	}
}

/* The registers placement reports: those its reason names, or the ABI's at the entry. */
static void test_real_registers(void **state)
{
	struct placement p;
	char regs[64], abi[64];

	for (size_t i = 0; i < NR_REAL; i++) {
		const struct real_func *f = &real_funcs[i];
		size_t used = 0, abi_used = 0;

		place_arch(f->arch, f->code, f->size, &f->need, &p);
		for (unsigned int a = 0; a < f->need.nr_args; a++) {
			used += snprintf(regs + used, sizeof(regs) - used, "%s%s", a ? ", " : "",
					 f->arch->reg_name(p.arg_reg[a]));
			abi_used +=
			    snprintf(abi + abi_used, sizeof(abi) - abi_used, "%s%s", a ? ", " : "",
				     f->arch->reg_name(f->arch->arg_regs[a]));
		}
		assert_string_equal(p.stepped ? abi : strstr(p.why, "; args in ") + 10, regs);
	}
}

/* Cut short before the deciding instruction ends, the walk is unsure: the entry. */
static void test_real_functions_truncated(void **state)
{
	struct placement p;

	for (size_t i = 0; i < NR_REAL; i++) {
		const struct real_func *f = &real_funcs[i];

		for (size_t n = 0; n <= f->size; n++) {
			place_arch(f->arch, f->code, n, &f->need, &p);
			assert_int_equal(p.offset, n >= f->needed ? f->offset : 0);
		}
	}
}

/* Where a walk for a function of @args arguments (@ret: with a return probe) ends. */
static void check(const uint8_t *code, size_t size, unsigned int args, bool ret, uint64_t offset,
		  const char *why)
{
	struct placement_need need = {.nr_args = args, .keep_sp = ret};
	struct placement p;

	place(code, size, &need, &p);
	assert_string_equal(p.why, why);
	assert_int_equal(p.offset, offset);
	assert_int_equal(p.stepped, !strncmp(why, "single-stepped", 14));
}

#define CHECK(args, ret, offset, why, ...)                                                         \
	check((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}), args, ret,   \
	      offset, why)

static void test_argument_written_first(void **state)
{
	/* mov %rax,%rdi; push %rbp */
	CHECK(1, true, 0, "single-stepped: mov at +0 overwrites rdi, argument 1's last copy", 0x48,
	      0x89, 0xc7, 0x55);
	/* test %rdi,%rdi; mov %rax,%rsi; je */
	CHECK(2, false, 0, "single-stepped: mov at +3 overwrites rsi, argument 2's last copy", 0x48,
	      0x85, 0xff, 0x48, 0x89, 0xc6, 0x74, 0x07);
	/* xor %r9d,%r9d; push %rbx: r9 is a sixth argument */
	CHECK(6, true, 0, "single-stepped: xor at +0 overwrites r9, argument 6's last copy", 0x45,
	      0x31, 0xc9, 0x53);
	/* mov $0x1,%dh (rdx's second byte); push %rbx */
	CHECK(3, true, 0, "single-stepped: mov at +0 overwrites rdx, argument 3's last copy", 0xb6,
	      0x01, 0x53);
	/* pop %rcx, for a function of one argument: rcx is its own; pop moves rsp */
	CHECK(1, false, 1, "push at +1, emulated; past pop; args in rdi", 0x59, 0x53);
	CHECK(1, true, 0, "single-stepped: pop at +0 moves the stack pointer", 0x59, 0x53);
}

/* Registers the function does not take are its own to use before the probe. */
static void test_other_registers(void **state)
{
	/* mov %rdi,%rax; mov 0x8(%rsp),%rdx; xor %ecx,%ecx; ja: one argument */
	CHECK(1, true, 10, "ja at +10, emulated; past mov, mov, xor; args in rdi", 0x48, 0x89, 0xf8,
	      0x48, 0x8b, 0x54, 0x24, 0x08, 0x31, 0xc9, 0x77, 0x05);
	/* the same with three arguments: rdx was the third */
	CHECK(3, true, 0, "single-stepped: mov at +3 overwrites rdx, argument 3's last copy", 0x48,
	      0x89, 0xf8, 0x48, 0x8b, 0x54, 0x24, 0x08, 0x31, 0xc9, 0x77, 0x05);
}

/* A 64-bit copy keeps an argument readable; a 32-bit one or a copy of a copy too. */
static void test_copies(void **state)
{
	/* mov %rdi,%rax; mov %rax,%r11; xor %edi,%edi; xor %eax,%eax; je */
	CHECK(1, true, 10, "je at +10, emulated; past mov, mov, xor, xor; args in r11", 0x48, 0x89,
	      0xf8, 0x49, 0x89, 0xc3, 0x31, 0xff, 0x31, 0xc0, 0x74, 0x01);
	/* mov %edi,%eax (zero-extends: not the argument); xor %edi,%edi */
	CHECK(1, true, 0, "single-stepped: xor at +2 overwrites rdi, argument 1's last copy", 0x89,
	      0xf8, 0x31, 0xff, 0x74, 0x01);
	/* mov %rsi,%rdi then mov %rdi,%rsi: the arguments swapped through rdi are lost */
	CHECK(2, true, 0, "single-stepped: mov at +0 overwrites rdi, argument 1's last copy", 0x48,
	      0x89, 0xf7, 0x48, 0x89, 0xfe, 0x74, 0x01);
	/* mov %rdi,%rdx (rdx held argument 3); je */
	CHECK(3, true, 0, "single-stepped: mov at +0 overwrites rdx, argument 3's last copy", 0x48,
	      0x89, 0xfa, 0x74, 0x01);
}

/* With a return probe the stack pointer must not move; without one it may. */
static void test_stack_pointer(void **state)
{
	/* mov %rdi,%rax; mov %rdi,0x8(%rsp); sub $0x18,%rsp; push %rbx */
	CHECK(1, false, 12, "push at +12, emulated; past mov, mov, sub; args in rdi", 0x48, 0x89,
	      0xf8, 0x48, 0x89, 0x7c, 0x24, 0x08, 0x48, 0x83, 0xec, 0x18, 0x53);
	CHECK(1, true, 0, "single-stepped: sub at +8 moves the stack pointer", 0x48, 0x89, 0xf8,
	      0x48, 0x89, 0x7c, 0x24, 0x08, 0x48, 0x83, 0xec, 0x18, 0x53);
}

static void test_unknown_instruction(void **state)
{
	/* syscall; push %rbx */
	CHECK(1, true, 0, "single-stepped: unknown instruction at +0", 0x0f, 0x05, 0x53);
	/* test %rdi,%rdi; int3; push %rbx */
	CHECK(1, true, 0, "single-stepped: unknown instruction at +3", 0x48, 0x85, 0xff, 0xcc,
	      0x53);
	/* vzeroupper; push %rbx */
	CHECK(1, true, 0, "single-stepped: unknown instruction at +0", 0xc5, 0xf8, 0x77, 0x53);
	/* test %rdi,%rdi; then the code ends inside a je */
	CHECK(1, true, 0, "single-stepped: code cut short at +3", 0x48, 0x85, 0xff, 0x0f, 0x84);
}

static void test_branch_not_emulated(void **state)
{
	/* test %rdi,%rdi; ret */
	CHECK(1, false, 0, "single-stepped: ret at +3, a branch the kernel single-steps", 0x48,
	      0x85, 0xff, 0xc3);
	/* endbr64; jmp *%rax */
	CHECK(1, false, 0, "single-stepped: jmp at +4, a branch the kernel single-steps", 0xf3,
	      0x0f, 0x1e, 0xfa, 0xff, 0xe0);
}

/* A branch back over the probe would hit it twice in one call. */
static void test_loop_back(void **state)
{
	/* test %rdi,%rdi; jne -5 (to +0) */
	CHECK(1, true, 0, "single-stepped: jne at +3 jumps back before itself", 0x48, 0x85, 0xff,
	      0x75, 0xfb);
	/* nop; jmp . (to itself) */
	CHECK(1, true, 0, "nop at +0, emulated; args in rdi", 0x90, 0xeb, 0xfe);
	/* test %rdi,%rdi; jmp . */
	CHECK(1, true, 0, "single-stepped: jmp at +3 jumps back before itself", 0x48, 0x85, 0xff,
	      0xeb, 0xfe);
	/* test %rdi,%rdi; jne +0 (to the next instruction) */
	CHECK(1, true, 3, "jne at +3, emulated; past test; args in rdi", 0x48, 0x85, 0xff, 0x75,
	      0x00);
}

/* test %rdi,%rdi 22 times then push %rbx at +66: past the span; at +63 it is taken. */
static void test_span(void **state)
{
	struct placement_need need = {.nr_args = 1, .keep_sp = true};
	struct placement p;
	uint8_t code[67];

	for (size_t i = 0; i < 22; i++)
		memcpy(code + 3 * i, (const uint8_t[]){0x48, 0x85, 0xff}, 3);
	code[66] = 0x53;
	place(code, sizeof(code), &need, &p);
	assert_int_equal(p.offset, 0);
	assert_string_equal(p.why, "single-stepped: nothing the kernel emulates in the first 64 "
				   "bytes");
	code[63] = 0x53;
	place(code, 64, &need, &p);
	assert_int_equal(p.offset, 63);
	assert_false(p.stepped);
}

static void test_nops(void **state)
{
	/* nopl 0x0(%rax,%rax,1): the kernel's 5-byte NOP, at the entry */
	CHECK(1, true, 0, "nop at +0, emulated; args in rdi", 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x53);
	/* nopw 0x0(%rax,%rax,1) without cs: not the kernel's 9-byte NOP; push %rbx */
	CHECK(1, true, 9, "push at +9, emulated; past nop; args in rdi", 0x66, 0x0f, 0x1f, 0x84,
	      0x00, 0x00, 0x00, 0x00, 0x00, 0x53);
}

/* arm64 words, little-endian, for the return-address and copy rules. */
#define A64(w) (w) & 0xff, ((w) >> 8) & 0xff, ((w) >> 16) & 0xff, (uint8_t)((w) >> 24)

static void check_arm64(const uint8_t *code, size_t size, unsigned int args, bool ret,
			uint64_t offset, const char *why)
{
	struct placement_need need = {.nr_args = args, .keep_sp = ret};
	struct placement p;

	place_arch(&insn_arm64, code, size, &need, &p);
	assert_string_equal(p.why, why);
	assert_int_equal(p.offset, offset);
}

#define CHECK_A64(args, ret, offset, why, ...)                                                     \
	check_arm64((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}), args,  \
		    ret, offset, why)

static void test_arm64_return_address(void **state)
{
	/* str x30, [sp, #8]; cbz x0: the return would bypass a return probe past the store */
	CHECK_A64(1, true, 0, "single-stepped: str at +0 saves the return address in x30",
		  A64(0xf90007fe), A64(0xb4000040));
	CHECK_A64(1, false, 4, "cbz at +4, simulated; past str; args in x0", A64(0xf90007fe),
		  A64(0xb4000040));
	/* paciasp signs x30, which a return probe then replaces */
	CHECK_A64(1, true, 0, "single-stepped: paciasp at +0 changes the return address in x30",
		  A64(0xd503233f), A64(0xb4000040));
	/* bl at the entry of a function with a return probe: its own x30 */
	CHECK_A64(1, false, 0, "bl at +0, simulated; args in x0", A64(0x94000010));
}

static void test_arm64_copies(void **state)
{
	/* mov x19, x0; mov x0, #0; cbz x19: the argument read from x19 */
	CHECK_A64(1, true, 8, "cbz at +8, simulated; past mov, movz; args in x19", A64(0xaa0003f3),
		  A64(0xd2800000), A64(0xb4000053));
	/* mov w19, w0 zero-extends: not the argument */
	CHECK_A64(1, true, 0, "single-stepped: movz at +4 overwrites x0, argument 1's last copy",
		  A64(0x2a0003f3), A64(0xd2800000), A64(0xb4000053));
	/* ldxr x1, [x0]: exclusive, refused; cbz after it is not reached */
	CHECK_A64(1, true, 0, "single-stepped: unknown instruction at +0", A64(0xc85f7c01),
		  A64(0xb4000040));
	/* cbnz x0, . (to itself) from +4: jumps back */
	CHECK_A64(1, true, 0, "single-stepped: cbnz at +4 jumps back before itself",
		  A64(0xf100001f), A64(0xb5000000));
}

/* What placement__exits() finds for @code with its entry probe at @entry: "ret+16 tail+20", or why
 * not. */
static void exits_of(const struct insn_arch *arch, const uint8_t *code, size_t len, uint64_t entry,
		     char *buf, size_t size)
{
	struct placement p = {.offset = entry};
	size_t used = 0;

	if (placement__exits(arch, code, len, &p, buf, size)) {
		assert_int_equal(p.nr_exits, 0);
		return;
	}
	buf[0] = '\0';
	for (unsigned int i = 0; i < p.nr_exits; i++)
		used += snprintf(buf + used, size - used, "%s%s+%u", i ? " " : "",
				 p.exits[i].tail ? "tail" : "ret", p.exits[i].offset);
}

#define CHECK_EXITS(entry, want, ...)                                                              \
	do {                                                                                       \
		static const uint8_t code[] = {__VA_ARGS__};                                       \
		char exits[128];                                                                   \
		exits_of(&insn_arm64, code, sizeof(code), entry, exits, sizeof(exits));            \
		assert_string_equal(exits, want);                                                  \
	} while (0)

#define A64_STP_FRAME A64(0xa9bf7bfd) /* stp x29, x30, [sp, #-16]! */
#define A64_MOV_FP    A64(0x910003fd) /* mov x29, sp */
#define A64_LDP_FRAME A64(0xa8c17bfd) /* ldp x29, x30, [sp], #16 */
#define A64_BL	      A64(0x94000010)
#define A64_B_OUT     A64(0x14000100) /* b +1024: out of the function */
#define A64_RET	      A64(0xd65f03c0)
#define A64_NOP	      A64(0xd503201f)

/* Whole functions of Debian 12 arm64: the entry past the prologue, return probes on the exits. */
static void test_arm64_exits_real(void **state)
{
	static const struct {
		const char *name;
		const uint8_t *code;
		size_t len;
		unsigned int nr_args;
		uint64_t entry;
		uint16_t sp_adjust;
		const char *exits;
	} real[] = {
	    /* two returns and, after the epilogue, a tail call to memset (perturb bytes) */
	    {"glibc malloc", a64_body_glibc_malloc, sizeof(a64_body_glibc_malloc), 1, 12, 64,
	     "ret+304 ret+360 tail+520"},
	    /* both ways to _mid_memalign are tail calls */
	    {"glibc memalign", a64_body_glibc_memalign, sizeof(a64_body_glibc_memalign), 2, 4, 48,
	     "tail+40 tail+68"},
	    /* a landing pad after the return branches back to the epilogue */
	    {"libstdc++ new(nothrow)", a64_body_libstdcxx_new_nothrow,
	     sizeof(a64_body_libstdcxx_new_nothrow), 1, 8, 16, "ret+16"},
	};
	struct placement_need need = {.track_sp = true};
	struct placement p;
	char got[128];

	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		print_message("%s\n", real[i].name);
		need.nr_args = real[i].nr_args;
		placement__walk(&insn_arm64, real[i].code, real[i].len, &need, &p);
		assert_false(p.stepped);
		assert_int_equal(p.offset, real[i].entry);
		assert_int_equal(p.sp_adjust, real[i].sp_adjust);
		exits_of(&insn_arm64, real[i].code, real[i].len, p.offset, got, sizeof(got));
		assert_string_equal(got, real[i].exits);
	}
	/* x30 never saved before reallocarray's tail call to realloc */
	exits_of(&insn_arm64, a64_body_glibc_reallocarray, sizeof(a64_body_glibc_reallocarray), 0,
		 got, sizeof(got));
	assert_string_equal(got, "tail+12 ret+40");
}

/*
 * What allocator.c does with a function whose return probe keeps its
 * entry single-stepped: glibc's malloc moves, its reason saying where its
 * returns went; calloc stays, its reason saying what else holds it.
 */
static void test_arm64_move_return(void **state)
{
	static const uint8_t x86_sub_ret[] = {0x48, 0x83, 0xec, 0x08, 0xc3}; /* sub $8,%rsp; ret */
	struct placement_need need = {.nr_args = 1, .keep_sp = true};
	struct placement p;

	placement__walk(&insn_arm64, a64_body_glibc_malloc, PLACEMENT_CODE_MAX, &need, &p);
	assert_true(p.stepped);
	placement__move_return(&insn_arm64, a64_body_glibc_malloc, sizeof(a64_body_glibc_malloc),
			       need, &p);
	assert_false(p.stepped);
	assert_int_equal(p.offset, 12);
	assert_int_equal(p.nr_exits, 3);
	assert_string_equal(
	    p.why, "adrp at +12, simulated; past stp, add, stp; args in x0; returns at 3 exits");

	need.nr_args = 2;
	placement__walk(&insn_arm64, a64_body_glibc_calloc, PLACEMENT_CODE_MAX, &need, &p);
	placement__move_return(&insn_arm64, a64_body_glibc_calloc, sizeof(a64_body_glibc_calloc),
			       need, &p);
	assert_true(p.stepped);
	assert_int_equal(p.offset, 0);
	assert_int_equal(p.nr_exits, 0);
	assert_string_equal(p.why, "single-stepped: stp at +0 moves the stack pointer; and after "
				   "it, alu at +24 overwrites x0, argument 1's last copy");

	/* x86-64 keeps its return address on the stack: nothing to move, nothing said */
	placement__walk(&insn_x86, x86_sub_ret, sizeof(x86_sub_ret), &need, &p);
	placement__move_return(&insn_x86, x86_sub_ret, sizeof(x86_sub_ret), need, &p);
	assert_true(p.stepped);
	assert_string_equal(p.why, "single-stepped: sub at +0 moves the stack pointer");
}

static void test_arm64_exits(void **state)
{
	char got[128];

	CHECK_EXITS(0, "ret+16", A64_STP_FRAME, A64_MOV_FP, A64_BL, A64_LDP_FRAME, A64_RET);
	CHECK_EXITS(0, "tail+16", A64_STP_FRAME, A64_MOV_FP, A64_BL, A64_LDP_FRAME, A64_B_OUT);
	/* cbz x0, +8 over a tail call that never touched x30 */
	CHECK_EXITS(0, "tail+4 ret+8", A64(0xb4000040), A64_B_OUT, A64_RET);
	/* out with the frame live, and after a call: x30 is no return address there */
	CHECK_EXITS(0, "b at +8, a tail call with the return address maybe elsewhere",
		    A64_STP_FRAME, A64_MOV_FP, A64_B_OUT, A64_RET);
	CHECK_EXITS(0, "b at +4, a tail call with the return address maybe elsewhere", A64_BL,
		    A64_B_OUT, A64_RET);
	/* cbz x0 to +12, past the epilogue: x30 may not be restored there */
	CHECK_EXITS(0, "b at +12, a tail call with the return address maybe elsewhere",
		    A64(0xb4000060), A64_LDP_FRAME, A64_NOP, A64_B_OUT, A64_RET);
	CHECK_EXITS(0, "an indirect branch at +0", A64(0xd61f0200), A64_RET); /* br x16 */
	CHECK_EXITS(0, "an indirect branch at +4", A64_NOP, A64(0xd65f0bff)); /* retaa */
	/* cbz x0 from +8 back to the entry probe at +4 */
	CHECK_EXITS(4, "cbz at +8 jumps back to the entry probe", A64_NOP, A64_NOP, A64(0xb4ffffe0),
		    A64_RET);
	CHECK_EXITS(0, "no return instruction", A64_NOP);
	CHECK_EXITS(0, "more than 16 exits", A64_RET, A64_RET, A64_RET, A64_RET, A64_RET, A64_RET,
		    A64_RET, A64_RET, A64_RET, A64_RET, A64_RET, A64_RET, A64_RET, A64_RET, A64_RET,
		    A64_RET, A64_RET);
	exits_of(&insn_x86, (const uint8_t[]){0xc3}, 1, 0, got, sizeof(got));
	assert_string_equal(got, "the return address is on the stack");
}

/* The stack pointer moved past the entry: by constants only, summed for the cookie. */
static void test_arm64_track_sp(void **state)
{
	struct placement_need need = {.nr_args = 1, .track_sp = true};
	/* sub sp, sp, #32; stp x29, x30, [sp, #-16]!; cbz x0 */
	static const uint8_t moves[] = {A64(0xd10083ff), A64_STP_FRAME, A64(0xb4000040)};
	/* mov sp, x1: by how much, nobody knows */
	static const uint8_t unknown[] = {A64(0x9100003f), A64(0xb4000040)};
	struct placement p;

	placement__walk(&insn_arm64, moves, sizeof(moves), &need, &p);
	assert_int_equal(p.offset, 8);
	assert_int_equal(p.sp_adjust, 48);
	placement__walk(&insn_arm64, unknown, sizeof(unknown), &need, &p);
	assert_true(p.stepped);
	assert_string_equal(
	    p.why, "single-stepped: add at +0 moves the stack pointer by an unknown amount");
}

/* The entry, with every argument where the ABI passes it. */
static void test_entry(void **state)
{
	static const uint8_t abi[PLACEMENT_ARGS] = {X86_REG_RDI, X86_REG_RSI, X86_REG_RDX,
						    X86_REG_RCX, X86_REG_R8,  X86_REG_R9};
	struct placement p;

	placement__entry(&insn_x86, &p);
	assert_int_equal(p.offset, 0);
	assert_true(p.stepped);
	assert_memory_equal(p.arg_reg, abi, sizeof(abi));
}

/*
 * placement__stepped_due(): a stepped function is due once its calls reach
 * PLACEMENT_STEP_WARN_CALLS, never twice, and a function not stepped never.
 */
static void test_stepped_due(void **state __attribute__((unused)))
{
	static const struct {
		uint64_t calls[3], stepped, said, due;
	} cases[] = {
	    {{0, 0, 0}, 0x7, 0, 0},
	    {{PLACEMENT_STEP_WARN_CALLS - 1, 0, 0}, 0x1, 0, 0},
	    {{PLACEMENT_STEP_WARN_CALLS, 0, 0}, 0x1, 0, 0x1},
	    {{PLACEMENT_STEP_WARN_CALLS, 0, 0}, 0x1, 0x1, 0},
	    {{PLACEMENT_STEP_WARN_CALLS * 9, 5, PLACEMENT_STEP_WARN_CALLS}, 0x6, 0, 0x4},
	    {{PLACEMENT_STEP_WARN_CALLS, 0, PLACEMENT_STEP_WARN_CALLS}, 0x5, 0x4, 0x1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(
		    placement__stepped_due(cases[i].calls, 3, cases[i].stepped, cases[i].said),
		    cases[i].due);
}

/*
 * The registry (arch/machines.h): each machine's decoder by its ELF
 * machine, none for one it lacks, and the loader's own the one it probes.
 */
static void test_machines(void **state __attribute__((unused)))
{
	assert_ptr_equal(insn_arch_of(EM_X86_64), &insn_x86);
	assert_ptr_equal(insn_arch_of(EM_AARCH64), &insn_arm64);
	assert_null(insn_arch_of(EM_RISCV));
	assert_ptr_equal(placement__native(), insn_arch_of(arch_elf_machine));
	assert_non_null(placement__native());
	assert_string_equal(placement__step_cost(), placement__native()->step_cost);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_functions),
	    cmocka_unit_test(test_real_registers),
	    cmocka_unit_test(test_real_functions_truncated),
	    cmocka_unit_test(test_argument_written_first),
	    cmocka_unit_test(test_other_registers),
	    cmocka_unit_test(test_copies),
	    cmocka_unit_test(test_stack_pointer),
	    cmocka_unit_test(test_unknown_instruction),
	    cmocka_unit_test(test_branch_not_emulated),
	    cmocka_unit_test(test_loop_back),
	    cmocka_unit_test(test_span),
	    cmocka_unit_test(test_nops),
	    cmocka_unit_test(test_entry),
	    cmocka_unit_test(test_arm64_return_address),
	    cmocka_unit_test(test_arm64_copies),
	    cmocka_unit_test(test_arm64_exits_real),
	    cmocka_unit_test(test_arm64_move_return),
	    cmocka_unit_test(test_arm64_exits),
	    cmocka_unit_test(test_arm64_track_sp),
	    cmocka_unit_test(test_stepped_due),
	    cmocka_unit_test(test_machines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
