/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_X86_INSN_H
#define ALLOCTRACE_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#define X86_REG_BIT(reg) ((uint16_t)(1U << (reg)))

/* Where the System V ABI passes integer arguments. */
#define X86_ARG_REGS                                                                               \
	(X86_REG_BIT(X86_REG_RDI) | X86_REG_BIT(X86_REG_RSI) | X86_REG_BIT(X86_REG_RDX) |          \
	 X86_REG_BIT(X86_REG_RCX) | X86_REG_BIT(X86_REG_R8) | X86_REG_BIT(X86_REG_R9))

/* One x86-64 instruction, as much of it as probe placement needs. */
struct x86_insn {
	const char *name; /* mnemonic for messages, e.g. "je" */
	uint8_t len;	  /* in bytes, prefixes included */
	bool branch;	  /* may continue elsewhere than at the next instruction */
	bool emulated;	  /* a uprobe on it is emulated by the kernel, not single-stepped */
	uint16_t writes;  /* the general registers it may change, X86_REG_BIT()s */
	bool copy;	  /* mov between 64-bit registers: copy_src into the one it writes */
	uint8_t copy_src; /* enum x86_reg */
	int32_t disp;	  /* relative branches: target minus the next instruction */
};

/*
 * Decode the instruction at @code, of which @len bytes may be read. Only
 * what is common at a function's entry is known: the rest is refused,
 * never guessed. 0; -ENODATA when it runs past @len; -EINVAL when unknown.
 */
int x86_insn__decode(struct x86_insn *insn, const uint8_t *code, size_t len);

/* "rdi" for X86_REG_RDI. */
const char *x86_reg_name(enum x86_reg reg);

#endif
