/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_X86_INSN_H
#define ALLOCTRACE_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "probe/insn.h"

/* General registers by encoding: bit X86_REG_RDI of a mask is rdi. */
enum x86_reg {
	X86_REG_RAX,
	X86_REG_RCX,
	X86_REG_RDX,
	X86_REG_RBX,
	X86_REG_RSP,
	X86_REG_RBP,
	X86_REG_RSI,
	X86_REG_RDI,
	X86_REG_R8,
	X86_REG_R9,
	X86_REG_MAX = 16,
};

#define X86_REG_BIT(reg) INSN_REG_BIT(reg)

/* Where the System V ABI passes integer arguments. */
#define X86_ARG_REGS                                                                               \
	(X86_REG_BIT(X86_REG_RDI) | X86_REG_BIT(X86_REG_RSI) | X86_REG_BIT(X86_REG_RDX) |          \
	 X86_REG_BIT(X86_REG_RCX) | X86_REG_BIT(X86_REG_R8) | X86_REG_BIT(X86_REG_R9))

/*
 * Decode the instruction at @code, of which @len bytes may be read. Only
 * what is common at a function's entry is known: the rest is refused,
 * never guessed. 0; -ENODATA when it runs past @len; -EINVAL when unknown.
 */
int x86_insn__decode(struct insn *insn, const uint8_t *code, size_t len);

/* "rdi" for X86_REG_RDI. */
const char *x86_reg_name(unsigned int reg);

#endif
