/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CFI_ARCH_H
#define ALLOCTRACE_CFI_ARCH_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloctrace.h"
#include "arch/machines.h"

/*
 * What turning call frame information into unwind rows must know of an
 * architecture: one cfi_<name>.c each, its row of arch/machines.h
 * naming it, chosen by the object's ELF machine (so a table is built for
 * the traced program's architecture, whatever the loader's). Its BPF half
 * is bpf/arch_<name>.bpf.h.
 */
struct cfi_arch {
	/* DWARF register numbers: stack and frame pointer, return address column. */
	unsigned int sp;
	unsigned int fp;
	unsigned int ra;
	/*
	 * Where its calls leave the return address, in words from the CFA,
	 * when always there (x86-64's call pushes it: -1); 0 when the rules
	 * say, and a return address they leave alone is still in the link
	 * register (arm64's x30: UNWIND_RA_LR).
	 */
	int ra_fixed;
	/*
	 * The registers a call preserves by the psABI, a bit each DWARF
	 * number, the stack pointer apart: where a frame's rules say nothing
	 * of one, its caller's is the frame's (the unwinder of libdwfl 0.188
	 * has x86-64's rbx as 0, rax, and so loses it at such a frame).
	 */
	uint64_t callee_saved;
	/*
	 * A CFA rule given as an expression that the walker knows by a kind
	 * of its own (x86-64's PLT stubs), into @row; false for any other.
	 * NULL: none.
	 */
	bool (*cfa_expression)(const Dwarf_Op *ops, size_t nops, struct unwind_row *row);
};

/*
 * A function's stack pointer at its first instruction, from its frame's
 * CFA (the caller's stack pointer): below that, a call left the return
 * address (ra_fixed words), or nothing.
 */
static inline uint64_t cfi_arch_entry_sp(const struct cfi_arch *arch, uint64_t cfa)
{
	return cfa + (int64_t)arch->ra_fixed * 8;
}

#define CFI_ARCH_DECLARE(e_machine, cfi, insn) extern const struct cfi_arch cfi;
ARCH_MACHINES(CFI_ARCH_DECLARE)
#undef CFI_ARCH_DECLARE

/* The architecture of ELF machine @machine, or NULL when the walker has none. */
const struct cfi_arch *cfi_arch_of(unsigned int machine);

#endif
