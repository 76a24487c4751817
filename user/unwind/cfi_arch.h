/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CFI_ARCH_H
#define ALLOCTRACE_CFI_ARCH_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloctrace.h"

/*
 * What turning call frame information into unwind rows must know of an
 * architecture: one cfi_<name>.c each, chosen by the object's ELF machine
 * (so a table is built for the traced program's architecture, whatever the
 * loader's). Its BPF half is bpf/arch_<name>.bpf.h.
 */
struct cfi_arch {
	unsigned int machine; /* e_machine */
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
	 * A CFA rule given as an expression that the walker knows by a kind
	 * of its own (x86-64's PLT stubs), into @row; false for any other.
	 * NULL: none.
	 */
	bool (*cfa_expression)(const Dwarf_Op *ops, size_t nops, struct unwind_row *row);
};

extern const struct cfi_arch cfi_x86_64;
extern const struct cfi_arch cfi_arm64;

/* The architecture of ELF machine @machine, or NULL when the walker has none. */
const struct cfi_arch *cfi_arch_of(unsigned int machine);

#endif
