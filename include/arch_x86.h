/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* x86-64's part of what the BPF side and the loader share (include/arch.h). */
#ifndef ALLOCTRACE_ARCH_X86_H
#define ALLOCTRACE_ARCH_X86_H

/* rdi, rsi, rdx, rcx, r8, r9 by their encoding (rax 0, rcx 1, ... r15 15). */
#define ABI_ARG_REG(i)                                                                             \
	((i) == 0 ? 7 : (i) == 1 ? 6 : (i) == 2 ? 2 : (i) == 3 ? 1 : (i) == 4 ? 8 : 9)

/* ret pops the return address the call pushed. */
#define RET_SP_DELTA 8

#endif
