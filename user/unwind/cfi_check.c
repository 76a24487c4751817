// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Vet an object's .eh_frame or .debug_frame before libdw runs its CFA
 * programs, and list the address range of each of its FDEs. libdw
 * sizes a frame's register array by the highest register number a
 * program names, up to 2 GiB, and clears it: one crafted instruction in a
 * mapped object would make the loader allocate and touch that much. x86-64
 * has 17 DWARF registers in the CFI that compilers emit (and a few dozen
 * more for vector and control registers), arm64 34 (x0-x30, sp, pc,
 * ELR_mode, RA_SIGN_STATE; v0-v31 at 64-95); a number past MAX_REG is no
 * code's. DW_CFA_GNU_window_save is also arm64's
 * DW_CFA_AARCH64_negate_ra_state (pointer authentication). Anything this walk does not understand
 * fails it too: the object then gets no rows, and its frames are walked by frame pointers.
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
		uleb(c); /* an sleb skips the same way */
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
	struct cursor c = {.p = p, .end = end};

	while (c.p < c.end && !c.bad) {
		uint8_t op = *c.p++;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore: /* the register is in the low 6 bits */
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

/* Bytes of a DW_EH_PE value format, or 0 for those it does not take (uleb, omit). */
static size_t cfi_encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	}
	return 0;
}

/* A DW_EH_PE-encoded address at @c, pc-relative to @addr, the field's own address. */
static uint64_t encoded(struct cursor *c, uint8_t enc, uint64_t addr)
{
	size_t i, len = cfi_encoded_size(enc);
	uint64_t v = 0;

	if (!len || (enc & 0x70 && (enc & 0x70) != DW_EH_PE_pcrel) ||
	    (size_t)(c->end - c->p) < len) {
		c->bad = true;
		return 0;
	}
	for (i = 0; i < len; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += len;
	/* Sign-extend the signed formats (bit 3 of the format). */
	if ((enc & 0x08) && len < 8 && (v >> (8 * len - 1)))
		v |= ~0ULL << (8 * len);
	return (enc & 0x70) == DW_EH_PE_pcrel ? addr + v : v;
}

/*
 * How a CIE's FDEs encode their addresses: 'R' in a 'z' augmentation,
 * else (.debug_frame, augmentation "") absolute 8-byte addresses.
 */
static bool fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const char *aug = cie->augmentation;
	struct cursor a = {.p = cie->augmentation_data,
			   .end = cie->augmentation_data + cie->augmentation_data_size};

	*enc = DW_EH_PE_absptr;
	if (!aug[0])
		return true;
	if (aug[0] != 'z')
		return false;
	for (const char *ch = aug + 1; *ch && !a.bad; ch++) {
		if (*ch == 'R' && a.p < a.end)
			*enc = *a.p++;
		else if (*ch == 'L')
			skip(&a, 1);
		else if (*ch == 'P' && a.p < a.end)
			skip(&a, cfi_encoded_size(*a.p++));
		else if (*ch != 'S')
			return false;
	}
	return !a.bad;
}

/*
 * An FDE's range, and where its instructions start: past its initial
 * location and range and its augmentation data ('z'). @addr is the ELF
 * address of the FDE's first field.
 */
static const uint8_t *fde_program(const Dwarf_CIE *cie, const Dwarf_FDE *fde, uint64_t addr,
				  struct cfi_fde *out)
{
	struct cursor f = {.p = fde->start, .end = fde->end};
	uint8_t enc;

	if (!fde_encoding(cie, &enc))
		return NULL;
	out->start = encoded(&f, enc, addr);
	/* The range is a length: its format, never pc-relative. */
	out->end = out->start + encoded(&f, enc & 0x0f, 0);
	if (cie->augmentation[0] == 'z')
		skip(&f, uleb(&f));
	return f.bad ? NULL : f.p;
}

/*
 * The section @name's bytes and ELF address. .eh_frame is SHT_PROGBITS
 * from GNU ld and SHT_X86_64_UNWIND from LLVM's tools; only a section
 * without contents (a separate debug file's) is none.
 */
static Elf_Data *cfi_section(Elf *elf, const char *name, uint64_t *addr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t strndx;
	const char *sname;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		sname = gelf_getshdr(scn, &sh) ? elf_strptr(elf, strndx, sh.sh_name) : NULL;
		if (!sname || strcmp(sname, name))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return NULL;
		*addr = sh.sh_addr;
		return elf_rawdata(scn, NULL);
	}
	return NULL;
}

/* The CIE at @off, parsed again for each of its FDEs: they are few per object. */
static bool cie_at(const unsigned char *ident, Elf_Data *data, bool eh, Dwarf_Off off,
		   Dwarf_CIE *out)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	if (dwarf_next_cfi(ident, data, eh, off, &next, &e) || e.CIE_id != DW_CIE_ID_64)
		return false;
	*out = e.cie;
	return true;
}

/* Vet one CIE or FDE; an FDE's range goes to @fn. */
static int check_entry(const unsigned char *ident, Elf_Data *data, uint64_t addr, bool eh,
		       const Dwarf_CFI_Entry *e, cfi_fde_fn fn, void *arg)
{
	const uint8_t *prog;
	struct cfi_fde fde;
	Dwarf_CIE cie;

	if (e->CIE_id == DW_CIE_ID_64)
		return e->cie.return_address_register > MAX_REG ||
			       !program_ok(e->cie.initial_instructions,
					   e->cie.initial_instructions_end)
			   ? -EINVAL
			   : 0;
	if (!cie_at(ident, data, eh, e->fde.CIE_pointer, &cie))
		return -EINVAL;
	prog = fde_program(&cie, &e->fde,
			   addr + (uint64_t)(e->fde.start - (const uint8_t *)data->d_buf), &fde);
	if (!prog || !program_ok(prog, e->fde.end))
		return -EINVAL;
	/* An FDE of code the linker dropped covers nothing. */
	return fn && fde.end > fde.start ? fn(&fde, arg) : 0;
}

int cfi_for_each_fde(Elf *elf, const char *section, cfi_fde_fn fn, void *arg)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	bool eh = !strcmp(section, ".eh_frame");
	uint64_t addr = 0;
	Elf_Data *data = cfi_section(elf, section, &addr);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret;

	/* Without its section header it cannot be vetted: libdw is not given it. */
	if (!ident || !data)
		return -ENOENT;
	while ((ret = dwarf_next_cfi(ident, data, eh, off, &next, &e)) == 0) {
		ret = check_entry(ident, data, addr, eh, &e, fn, arg);
		if (ret)
			return ret;
		off = next;
	}
	return ret == 1 ? 0 : -EINVAL;
}
