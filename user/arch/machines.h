/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_MACHINES_H
#define ALLOCTRACE_MACHINES_H

#include <elf.h>
#include <stddef.h>

/*
 * The machines the loader knows, the traced objects' as well as its own
 * (arch_elf_machine), one row each: ROW(e_machine, its unwind rows'
 * struct cfi_arch (unwind/cfi_<name>.c: DWARF register numbering, where
 * calls leave the return address), its probe placement's struct
 * insn_arch (probe/<name>_insn.c: the decoder, register names and
 * numbers, the ABI's argument registers)). Only a header: each room
 * makes its own column (ARCH_MACHINE_COLUMN) without linking another
 * room's tables.
 */
#define ARCH_MACHINES(ROW)                                                                         \
	ROW(EM_X86_64, cfi_x86_64, insn_x86)                                                       \
	ROW(EM_AARCH64, cfi_arm64, insn_arm64)

/* The row of ELF machine @machine, from 0; -1 for a machine not there. */
static inline int arch_machine_row(unsigned int machine)
{
#define ARCH_MACHINE_ID(e_machine, cfi, insn) e_machine,
	static const unsigned int rows[] = {ARCH_MACHINES(ARCH_MACHINE_ID)};
#undef ARCH_MACHINE_ID

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i] == machine)
			return (int)i;
	return -1;
}

/*
 * const @type *@name(unsigned int machine): the @type of @machine's row,
 * NULL for a machine not there; @cell(e_machine, cfi, insn) gives a row's
 * address followed by a comma.
 */
#define ARCH_MACHINE_COLUMN(type, name, cell)                                                      \
	const type *name(unsigned int machine)                                                     \
	{                                                                                          \
		static const type *const column[] = {ARCH_MACHINES(cell)};                         \
		int row = arch_machine_row(machine);                                               \
                                                                                                   \
		return row < 0 ? NULL : column[row];                                               \
	}

#endif
