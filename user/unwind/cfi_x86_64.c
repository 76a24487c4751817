// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* x86-64's unwind rows (unwind/cfi_arch.h): its registers, its PLT. */
#include <dwarf.h>
#include <elf.h>
#include "unwind/cfi_arch.h"

/*
 * The expression binutils and lld give .plt: rsp + 8, plus 8 once the lazy
 * stub's push has run, that is when (rip & 15) >= the third literal.
 */
static bool plt_expression(const Dwarf_Op *ops, size_t nops, struct unwind_row *row)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31)
		return false;
	row->kind = UNWIND_CFA_PLT;
	row->cfa_off = ops[4].atom - DW_OP_lit0;
	return true;
}

const struct cfi_arch cfi_x86_64 = {
    .sp = 7,  /* rsp */
    .fp = 6,  /* rbp */
    .ra = 16, /* the return address column */
    .ra_fixed = -1,
    /* rbx, rbp, r12-r15 */
    .callee_saved = 1 << 3 | 1 << 6 | 0xf << 12,
    .cfa_expression = plt_expression,
};
