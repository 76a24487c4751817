/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_INSN_H
#define ALLOCTRACE_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/machines.h"

/* Probe placement's own limit: an argument per register, 32 registers at most. */
#define INSN_ARGS	  6
#define INSN_REG_BIT(reg) ((uint32_t)1 << (reg))

/* One instruction, whatever the architecture, as much of it as probe placement needs. */
struct insn {
	const char *name; /* mnemonic for messages, e.g. "je" */
	uint8_t len;	  /* in bytes, prefixes included */
	bool branch;	  /* may continue elsewhere than at the next instruction */
	bool emulated;	  /* a uprobe on it is emulated by the kernel, not single-stepped */
	bool saves_ra;	  /* stores the return-address register (arm64's x30) to memory */
	bool restores_ra; /* loads the return-address register from the stack */
	bool ret;	  /* returns to the address in the return-address register */
	bool indirect;	  /* branches to a register's target */
	bool sp_known;	  /* writes the stack pointer by sp_delta, a constant */
	int32_t sp_delta;
	uint32_t writes;  /* the general registers it may change, INSN_REG_BIT()s */
	bool copy;	  /* a whole 64-bit register copy: copy_src into the one it writes */
	uint8_t copy_src; /* the register number */
	int32_t disp;	  /* relative branches: target minus the next instruction */
};

/*
 * What probe placement (placement.c) knows of an architecture: each
 * decoder (x86_insn.c, arm64_insn.c) defines one, its row of
 * arch/machines.h naming it.
 */
struct insn_arch {
	const char *name;
	/*
	 * The instruction at @code, @len bytes readable: 0, -ENODATA when cut
	 * short, -EPERM for a branch it does not know, -EINVAL for any other.
	 */
	int (*decode)(struct insn *insn, const uint8_t *code, size_t len);
	const char *(*reg_name)(unsigned int reg);
	unsigned int nr_regs;	     /* numbered 0 to nr_regs - 1, at most 32 */
	unsigned int insn_len;	     /* every instruction's length, 0 where they vary */
	unsigned int sp;	     /* the stack pointer's number */
	int ra;			     /* the return-address register, -1 for none (on the stack) */
	uint8_t arg_regs[INSN_ARGS]; /* where the C ABI passes integer arguments */
	const char *no_step;	     /* what the kernel does instead: "emulate", "simulate" */
	const char *step_cost;	     /* what a single-stepped probe costs, for the warning */
};

#define INSN_ARCH_DECLARE(e_machine, cfi, insn) extern const struct insn_arch insn;
ARCH_MACHINES(INSN_ARCH_DECLARE)
#undef INSN_ARCH_DECLARE

/* The decoder of ELF machine @machine (arch/machines.h), or NULL. */
const struct insn_arch *insn_arch_of(unsigned int machine);

#endif
