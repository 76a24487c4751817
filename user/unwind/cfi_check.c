// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Vet an object's .eh_frame before libdw runs its CFA programs. libdw
 * sizes a frame's register array by the highest register number a
 * program names, up to 2 GiB, and clears it: one crafted instruction in a
 * mapped object would make the loader allocate and touch that much. x86-64
 * has 17 DWARF registers in the CFI that compilers emit (and a few dozen
 * more for vector and control registers); a number past MAX_REG is no
 * code's. Anything this walk does not understand fails it too: the object
 * then gets no rows, and its frames are walked by frame pointers.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include "unwind/cfi.h"

#define MAX_REG 127

struct cursor {
	const uint8_t *p;
	const uint8_t *end;
	bool bad;
};

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static void skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return;
	}
	c->p += n;
}

static void reg(struct cursor *c)
{
	if (uleb(c) > MAX_REG)
		c->bad = true;
}

/* One instruction's operands; false for one this walk does not know. */
static bool operands(struct cursor *c, uint8_t op)
{
	switch (op) {
	case DW_CFA_nop:
	case DW_CFA_remember_state:
	case DW_CFA_restore_state:
	case DW_CFA_GNU_window_save:
		return true;
	case DW_CFA_advance_loc1:
		skip(c, 1);
		return true;
	case DW_CFA_advance_loc2:
		skip(c, 2);
		return true;
	case DW_CFA_advance_loc4:
		skip(c, 4);
		return true;
	case DW_CFA_MIPS_advance_loc8:
		skip(c, 8);
		return true;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
	case DW_CFA_GNU_args_size:
		uleb(c);	/* an sleb skips the same way */
		return true;
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_def_cfa_register:
		reg(c);
		return true;
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_GNU_negative_offset_extended:
		reg(c);
		uleb(c);
		return true;
	case DW_CFA_register:
		reg(c);
		reg(c);
		return true;
	case DW_CFA_def_cfa_expression:
		skip(c, uleb(c));
		return true;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		reg(c);
		skip(c, uleb(c));
		return true;
	}
	/* DW_CFA_set_loc among them: its operand's size is the FDE's encoding. */
	return false;
}

static bool program_ok(const uint8_t *p, const uint8_t *end)
{
	struct cursor c = { .p = p, .end = end };

	while (c.p < c.end && !c.bad) {
		uint8_t op = *c.p++;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore:	/* the register is in the low 6 bits */
			break;
		case DW_CFA_offset:
			uleb(&c);
			break;
		default:
			if (!operands(&c, op))
				return false;
		}
	}
	return !c.bad;
}

/*
 * Where an FDE's instructions start: past its initial location and range,
 * in the CIE's pointer encoding ('R'), and its augmentation data ('z').
 */
static const uint8_t *fde_program(const Dwarf_CIE *cie, const Dwarf_FDE *fde)
{
	const char *aug = cie->augmentation;
	struct cursor a = { .p = cie->augmentation_data,
			    .end = cie->augmentation_data + cie->augmentation_data_size };
	struct cursor f = { .p = fde->start, .end = fde->end };
	uint8_t enc = DW_EH_PE_absptr;
	size_t size;

	if (aug[0] != 'z')
		return NULL;
	for (const char *ch = aug + 1; *ch && !a.bad; ch++) {
		if (*ch == 'R' && a.p < a.end)
			enc = *a.p++;
		else if (*ch == 'L')
			skip(&a, 1);
		else if (*ch == 'P' && a.p < a.end)
			skip(&a, cfi_encoded_size(*a.p++));
		else if (*ch != 'S')
			return NULL;
	}
	size = cfi_encoded_size(enc);
	if (a.bad || !size)
		return NULL;
	skip(&f, 2 * size);
	skip(&f, uleb(&f));
	return f.bad ? NULL : f.p;
}

static Elf_Data *eh_frame_data(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t strndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, strndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, ".eh_frame") && sh.sh_type == SHT_PROGBITS)
			return elf_rawdata(scn, NULL);
	}
	return NULL;
}

/* The CIE at @off, parsed again for each of its FDEs: they are few per object. */
static bool cie_at(const unsigned char *ident, Elf_Data *data, Dwarf_Off off, Dwarf_CIE *out)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	if (dwarf_next_cfi(ident, data, true, off, &next, &e) || e.CIE_id != DW_CIE_ID_64)
		return false;
	*out = e.cie;
	return true;
}

int cfi_check(Elf *elf)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Elf_Data *data = eh_frame_data(elf);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	Dwarf_CIE cie;
	const uint8_t *prog;
	int ret;

	/* Without its section header it cannot be vetted: libdw is not given it. */
	if (!ident || !data)
		return -ENOENT;
	while ((ret = dwarf_next_cfi(ident, data, true, off, &next, &e)) == 0) {
		if (e.CIE_id == DW_CIE_ID_64) {
			if (e.cie.return_address_register > MAX_REG ||
			    !program_ok(e.cie.initial_instructions, e.cie.initial_instructions_end))
				return -EINVAL;
		} else {
			if (!cie_at(ident, data, e.fde.CIE_pointer, &cie))
				return -EINVAL;
			prog = fde_program(&cie, &e.fde);
			if (!prog || !program_ok(prog, e.fde.end))
				return -EINVAL;
		}
		off = next;
	}
	return ret == 1 ? 0 : -EINVAL;
}
