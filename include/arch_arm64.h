/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* arm64's part of what the BPF side and the loader share (include/arch.h). */
#ifndef ALLOCTRACE_ARCH_ARM64_H
#define ALLOCTRACE_ARCH_ARM64_H

/* x0-x5. */
#define ABI_ARG_REG(i) (i)

/* ret returns through the link register: the stack pointer is where it was. */
#define RET_SP_DELTA 0

#endif
