// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Call frame information to unwind rows. libdw interprets the CFA
 * programs; this file asks it for the rule at each address of each FDE and
 * keeps only what the BPF unwinder can apply: a CFA of rsp or rbp plus an
 * offset, rbp saved at a CFA offset or left alone, and the return address
 * at CFA - 8. Anything else becomes a row without rules, where the BPF
 * side falls back to frame pointers.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/cfi.h"
#include "lib/util.h"

/* x86-64 DWARF register numbers. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

#define PAGE_SIZE_ (1ULL << UNWIND_PAGE_SHIFT)

struct row_builder {
	struct cfi_table *t;
	size_t cap;
};

/* A register saved at CFA + @off: DW_OP_call_frame_cfa [DW_OP_plus_uconst off]. */
static bool cfa_offset_rule(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops != 2 || ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

/*
 * The expression binutils and lld give .plt: rsp + 8, plus 8 once the lazy
 * stub's push has run, that is when (rip & 15) >= the third literal.
 */
static bool plt_expression(const Dwarf_Op *ops, size_t nops, uint8_t *threshold)
{
	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31)
		return false;
	*threshold = ops[4].atom - DW_OP_lit0;
	return true;
}

static bool fits_in_eighths(int64_t off, int64_t lo, int64_t hi, int64_t *out)
{
	if (off % 8 || off / 8 < lo || off / 8 > hi)
		return false;
	*out = off / 8;
	return true;
}

static void cfa_rule(Dwarf_Frame *f, struct unwind_row *row)
{
	Dwarf_Op *ops;
	size_t nops;
	uint8_t threshold;
	int64_t off;

	if (dwarf_frame_cfa(f, &ops, &nops) || !nops)
		return;
	if (plt_expression(ops, nops, &threshold)) {
		row->kind = UNWIND_CFA_PLT;
		row->cfa_off = threshold;
		return;
	}
	if (nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != REG_RSP && ops[0].number != REG_RBP) ||
	    !fits_in_eighths((int64_t)ops[0].number2, INT16_MIN, INT16_MAX, &off))
		return;
	row->kind = ops[0].number == REG_RSP ? UNWIND_CFA_SP : UNWIND_CFA_FP;
	row->cfa_off = (int16_t)off;
}

/* The rule at one address, or a row of kind UNWIND_NONE. */
static struct unwind_row frame_row(Dwarf_Frame *f)
{
	struct unwind_row row = { .kind = UNWIND_NONE };
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(f, REG_RA, mem, &ops, &nops))
		return row;
	/* Undefined return address: the end of the chain, by the ABI. */
	if (!nops && ops == mem) {
		row.kind = UNWIND_END;
		return row;
	}
	if (!cfa_offset_rule(ops, nops, &off) || off != -8)
		return row;
	if (dwarf_frame_register(f, REG_RBP, mem, &ops, &nops))
		return row;
	if (nops && (!cfa_offset_rule(ops, nops, &off) ||
		     !fits_in_eighths(off, INT8_MIN, INT8_MAX, &off) || !off))
		return row;
	row.rbp_off = nops ? (int8_t)off : 0;
	cfa_rule(f, &row);
	if (row.kind == UNWIND_NONE)
		row.rbp_off = 0;
	return row;
}

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->kind == b->kind && a->rbp_off == b->rbp_off && a->cfa_off == b->cfa_off;
}

/* Rows carry absolute ELF addresses in .pc until the table is based. */
static int emit(struct row_builder *b, uint64_t pc, struct unwind_row row)
{
	struct cfi_table *t = b->t;
	struct unwind_row *last = t->nr_rows ? &t->rows[t->nr_rows - 1] : NULL;
	void *grown;

	if (pc > UINT32_MAX)
		return -E2BIG;
	row.pc = (uint32_t)pc;
	if (last && last->pc == row.pc) {
		*last = row;
		return 0;
	}
	if (last && same_rule(last, &row))
		return 0;
	grown = array__grow(t->rows, &b->cap, t->nr_rows, sizeof(*t->rows));
	if (!grown)
		return -ENOMEM;
	t->rows = grown;
	t->rows[t->nr_rows++] = row;
	return 0;
}

/*
 * One FDE's rows, from its first address on, then a ruleless row at its
 * end. libdw goes on into an adjacent FDE: @next, the following FDE's
 * start, is where this one's rows stop.
 */
static int emit_fde(struct row_builder *b, Dwarf_CFI *cfi, uint64_t addr, uint64_t next)
{
	struct unwind_row none = { .kind = UNWIND_NONE };
	Dwarf_Addr start, end;
	Dwarf_Frame *f;
	bool signal;
	int err;

	while (addr < next && !dwarf_cfi_addrframe(cfi, addr, &f)) {
		/* After DW_CFA_restore_state libdw's start can precede @addr. */
		end = 0;
		dwarf_frame_info(f, &start, &end, &signal);
		err = emit(b, addr, frame_row(f));
		free(f);
		if (err)
			return err;
		if (end <= addr)
			break;
		addr = end;
	}
	return addr < next ? emit(b, addr, none) : 0;
}

size_t cfi_encoded_size(uint8_t enc)
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

/* A DW_EH_PE-encoded value at *@p, relative to @field (pcrel) or @hdr (datarel). */
static int read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t field,
			uint64_t hdr, uint64_t *val)
{
	size_t i, len = cfi_encoded_size(enc);
	uint64_t v = 0;

	if (!len)
		return -ENOTSUP;
	if (end - *p < (ptrdiff_t)len)
		return -EINVAL;
	for (i = 0; i < len; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += len;
	/* Sign-extend the signed formats (bit 3 of the format). */
	if ((enc & 0x08) && len < 8 && (v >> (8 * len - 1)))
		v |= ~0ULL << (8 * len);
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		*val = v;
		return 0;
	case DW_EH_PE_pcrel:
		*val = field + v;
		return 0;
	case DW_EH_PE_datarel:
		*val = hdr + v;
		return 0;
	}
	return -ENOTSUP;
}

/* The .eh_frame_hdr segment: its bytes and its ELF address. */
static const uint8_t *eh_frame_hdr(Elf *elf, size_t *len, uint64_t *vaddr)
{
	Elf_Data *data;
	GElf_Phdr ph;
	size_t i, nr;

	if (elf_getphdrnum(elf, &nr))
		return NULL;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!data || !data->d_buf)
			return NULL;
		*len = data->d_size;
		*vaddr = ph.p_vaddr;
		return data->d_buf;
	}
	return NULL;
}

struct hdr_cursor {
	const uint8_t *hdr, *p, *end;
	uint64_t vaddr;
};

static int hdr_read(struct hdr_cursor *c, uint8_t enc, uint64_t *val)
{
	return read_encoded(enc, &c->p, c->end, c->vaddr + (uint64_t)(c->p - c->hdr), c->vaddr,
			    val);
}

/* The next FDE's start in the search table (the FDE's own address is not needed). */
static int hdr_next_fde(struct hdr_cursor *c, uint64_t *loc)
{
	uint64_t fde;
	int err = hdr_read(c, c->hdr[3], loc);

	return err ? err : hdr_read(c, c->hdr[3], &fde);
}

/*
 * Walk the FDEs in the order of .eh_frame_hdr's search table, which the
 * linker sorted by address: the rows come out sorted too.
 */
static int emit_all(struct row_builder *b, Elf *elf, Dwarf_CFI *cfi)
{
	struct hdr_cursor c;
	uint64_t skip, count, loc, next;
	size_t len;
	int err;

	c.hdr = eh_frame_hdr(elf, &len, &c.vaddr);
	if (!c.hdr || len < 4 || c.hdr[0] != 1 || c.hdr[3] == DW_EH_PE_omit)
		return -ENOENT;
	c.p = c.hdr + 4;
	c.end = c.hdr + len;
	err = hdr_read(&c, c.hdr[1], &skip);
	if (!err)
		err = hdr_read(&c, c.hdr[2], &count);
	if (!err && count)
		err = hdr_next_fde(&c, &loc);
	while (!err && count--) {
		next = UINT64_MAX;
		if (count)
			err = hdr_next_fde(&c, &next);
		if (!err)
			err = emit_fde(b, cfi, loc, next);
		loc = next;
	}
	return err;
}

static int index_pages(struct cfi_table *t)
{
	uint64_t last;
	size_t i, row = 0;

	t->base = t->rows[0].pc & ~(PAGE_SIZE_ - 1);
	last = t->rows[t->nr_rows - 1].pc;
	t->nr_pages = ((last - t->base) >> UNWIND_PAGE_SHIFT) + 1;
	t->pages = calloc(t->nr_pages + 1, sizeof(*t->pages));
	if (!t->pages)
		return -ENOMEM;
	for (i = 0; i < t->nr_rows; i++)
		t->rows[i].pc -= (uint32_t)t->base;
	for (i = 0; i <= t->nr_pages; i++) {
		while (row + 1 < t->nr_rows && t->rows[row + 1].pc <= i * PAGE_SIZE_)
			row++;
		t->pages[i] = (uint32_t)row;
	}
	return 0;
}

static bool rows_sorted(const struct cfi_table *t)
{
	for (size_t i = 1; i < t->nr_rows; i++)
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			return false;
	return true;
}

int cfi_table__build(Elf *elf, struct cfi_table *t)
{
	struct row_builder b = { .t = t };
	GElf_Ehdr eh;
	Dwarf_CFI *cfi;
	int err;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	err = cfi_check(elf);
	if (err)
		return err;
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return -ENOENT;
	err = emit_all(&b, elf, cfi);
	dwarf_cfi_end(cfi);
	/* A table the linker did not sort is not one to binary-search. */
	if (!err && (!t->nr_rows || !rows_sorted(t)))
		err = -ENOENT;
	if (!err)
		err = index_pages(t);
	if (err)
		cfi_table__release(t);
	return err;
}

void cfi_table__release(struct cfi_table *t)
{
	free(t->rows);
	free(t->pages);
	memset(t, 0, sizeof(*t));
}
