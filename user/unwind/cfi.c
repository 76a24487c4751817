// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Call frame information to unwind rows. libdw interprets the CFA
 * programs; this file asks it for the rule at each address of each FDE and
 * keeps only what the BPF unwinder can apply: a CFA of the stack or frame
 * pointer plus an offset, the frame pointer saved at a CFA offset or left
 * alone, and the return address at a CFA offset or in the link register
 * (struct unwind_row). Anything else becomes a row without rules, where
 * the BPF side falls back to frame pointers. What differs between
 * architectures is in cfi_<name>.c (unwind/cfi_arch.h).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/cfi.h"
#include "unwind/cfi_arch.h"
#include "arch/machines.h"
#include "lib/util.h"

#define PAGE_SIZE_ (1ULL << UNWIND_PAGE_SHIFT)

struct row_builder {
	struct cfi_table *t;
	const struct cfi_arch *arch;
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

static bool fits_in_eighths(int64_t off, int64_t lo, int64_t hi, int64_t *out)
{
	if (off % 8 || off / 8 < lo || off / 8 > hi)
		return false;
	*out = off / 8;
	return true;
}

static void cfa_rule(const struct cfi_arch *arch, Dwarf_Frame *f, struct unwind_row *row)
{
	Dwarf_Op *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_cfa(f, &ops, &nops) || !nops)
		return;
	if (arch->cfa_expression && arch->cfa_expression(ops, nops, row))
		return;
	if (nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != arch->sp && ops[0].number != arch->fp) ||
	    !fits_in_eighths((int64_t)ops[0].number2, INT16_MIN, INT16_MAX, &off))
		return;
	row->kind = ops[0].number == arch->sp ? UNWIND_CFA_SP : UNWIND_CFA_FP;
	row->cfa_off = (int16_t)off;
}

/*
 * Where the return address is, in words from the CFA (@words, 0: in the
 * link register), and the frame pointer's (@fp, 0: not saved), as
 * unwind_row.ra_off and fp_off say them, after the CFA's rule is in @row;
 * false where they cannot.
 */
static bool ra_place(const struct cfi_arch *arch, int64_t words, int64_t fp, struct unwind_row *row)
{
	int64_t above_sp = words + row->cfa_off;
	bool from_sp = row->kind == UNWIND_CFA_SP && above_sp >= 0 && above_sp <= INT8_MAX;

	if (arch->ra_fixed && words != arch->ra_fixed)
		return false;
	if (fp < INT8_MIN || fp > INT8_MAX) {
		/* A frame record too far below the CFA: from sp, or not at all. */
		if (!from_sp || words != fp + 1)
			return false;
		row->ra_off = UNWIND_RA_SP_RECORD;
		row->fp_off = (int8_t)(above_sp - 1);
		return true;
	}
	row->fp_off = (int8_t)fp;
	if (words >= UNWIND_RA_MIN && words <= UNWIND_RA_MAX) {
		row->ra_off = (int8_t)words;
	} else if (row->fp_off && words == row->fp_off + 1) {
		row->ra_off = UNWIND_RA_RECORD;
	} else if (!row->fp_off && from_sp) {
		row->ra_off = UNWIND_RA_SP;
		row->fp_off = (int8_t)above_sp;
	} else {
		return false;
	}
	return true;
}

/*
 * The return address's rule, in words from the CFA into @words (0: the
 * register keeps it); false for one the walker cannot apply. Undefined is
 * the end of the chain, by the ABI: @end.
 */
static bool ra_rule(const struct cfi_arch *arch, Dwarf_Frame *f, int64_t *words, bool *end)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	*end = false;
	if (dwarf_frame_register(f, arch->ra, mem, &ops, &nops))
		return false;
	if (!nops) {
		*end = ops == mem;
		*words = 0;
		return true;
	}
	return cfa_offset_rule(ops, nops, &off) &&
	       fits_in_eighths(off, INT16_MIN, INT16_MAX, words) && *words;
}

/*
 * The rule at one address, or a row of kind UNWIND_NONE. A signal frame's
 * rules are DWARF expressions over the kernel's frame, whose layout the
 * walker knows (@signal: the CIE's 'S'): one kind says it all.
 */
static struct unwind_row frame_row(const struct cfi_arch *arch, Dwarf_Frame *f, bool signal)
{
	struct unwind_row row = {.kind = UNWIND_NONE}, none = row;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off = 0, ra; /* the frame pointer's place: 0, not saved */
	bool end;

	if (signal) {
		row.kind = UNWIND_SIGFRAME;
		return row;
	}
	if (!ra_rule(arch, f, &ra, &end))
		return none;
	if (end) {
		row.kind = UNWIND_END;
		return row;
	}
	if (dwarf_frame_register(f, arch->fp, mem, &ops, &nops))
		return none;
	if (nops && (!cfa_offset_rule(ops, nops, &off) ||
		     !fits_in_eighths(off, INT16_MIN, INT16_MAX, &off) || !off))
		return none;
	/* The CFA first: a return address far below it is placed from sp. */
	cfa_rule(arch, f, &row);
	if (row.kind == UNWIND_NONE || !ra_place(arch, ra, off, &row))
		return none;
	return row;
}

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->kind == b->kind && a->fp_off == b->fp_off && a->ra_off == b->ra_off &&
	       a->cfa_off == b->cfa_off;
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
	struct unwind_row none = {.kind = UNWIND_NONE};
	Dwarf_Addr start, end;
	Dwarf_Frame *f;
	bool signal;
	int err;

	while (addr < next && !dwarf_cfi_addrframe(cfi, addr, &f)) {
		/* After DW_CFA_restore_state libdw's start can precede @addr. */
		end = 0;
		dwarf_frame_info(f, &start, &end, &signal);
		err = emit(b, addr, frame_row(b->arch, f, signal));
		free(f);
		if (err)
			return err;
		if (end <= addr)
			break;
		addr = end;
	}
	return addr < next ? emit(b, addr, none) : 0;
}

/* The FDEs of one object, from .eh_frame (src 0) or .debug_frame (src 1). */
struct fde_span {
	uint64_t start;
	uint64_t end;
	int src;
};

struct fde_list {
	struct fde_span *v;
	size_t nr, cap;
	int src;
};

static int add_span(const struct cfi_fde *fde, void *arg)
{
	struct fde_list *l = arg;
	struct fde_span *grown = array__grow(l->v, &l->cap, l->nr, sizeof(*l->v));

	if (!grown)
		return -ENOMEM;
	l->v = grown;
	l->v[l->nr++] = (struct fde_span){.start = fde->start, .end = fde->end, .src = l->src};
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct fde_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->src - y->src;
}

/* qsort() must not be given the NULL of a list never grown. */
static void sort_spans(struct fde_list *l)
{
	if (l->nr > 1)
		qsort(l->v, l->nr, sizeof(*l->v), span_cmp);
}

/* Does [@s->start, @s->end) meet one of the @n sorted spans at @v? */
static bool overlaps(const struct fde_span *v, size_t n, const struct fde_span *s)
{
	size_t lo = 0, hi = n;

	/* The first span that ends past @s's start. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end <= s->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].start < s->end;
}

/*
 * Every FDE of .eh_frame, then those of .debug_frame for code .eh_frame
 * does not cover, sorted by address. @nr_eh: how many came from .eh_frame.
 */
static int collect_spans(Elf *elf, struct fde_list *l, size_t *nr_eh)
{
	size_t i, kept;
	int err, debug;

	err = cfi_for_each_fde(elf, ".eh_frame", add_span, l);
	if (err && err != -ENOENT)
		return err;
	sort_spans(l);
	*nr_eh = kept = l->nr;
	l->src = 1;
	debug = cfi_for_each_fde(elf, ".debug_frame", add_span, l);
	if (debug && debug != -ENOENT)
		return debug;
	if (err && debug)
		return -ENOENT;
	for (i = *nr_eh; i < l->nr; i++)
		if (!overlaps(l->v, *nr_eh, &l->v[i]))
			l->v[kept++] = l->v[i];
	l->nr = kept;
	sort_spans(l);
	return 0;
}

/* Each span's rows in address order, from the CFI it came from. */
static int emit_spans(struct row_builder *b, const struct fde_list *l, Dwarf_CFI *cfi[2])
{
	uint64_t next;
	int err = 0;

	for (size_t i = 0; i < l->nr && !err; i++) {
		next = i + 1 < l->nr ? l->v[i + 1].start : UINT64_MAX;
		err = emit_fde(b, cfi[l->v[i].src], l->v[i].start, next);
	}
	return err;
}

/* The end of the loadable segment that holds @addr, or 0. */
static uint64_t segment_end(Elf *elf, uint64_t addr)
{
	GElf_Phdr ph;
	size_t i, nr;

	if (elf_getphdrnum(elf, &nr))
		return 0;
	for (i = 0; i < nr; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr < ph.p_vaddr + ph.p_memsz)
			return ph.p_vaddr + ph.p_memsz;
	return 0;
}

/* Put @row at its place among the sorted rows, before the first one past it. */
static int insert_row(struct row_builder *b, struct unwind_row row)
{
	struct cfi_table *t = b->t;
	size_t i = t->nr_rows;
	void *grown = array__grow(t->rows, &b->cap, t->nr_rows, sizeof(*t->rows));

	if (!grown)
		return -ENOMEM;
	t->rows = grown;
	while (i && t->rows[i - 1].pc > row.pc)
		i--;
	memmove(&t->rows[i + 1], &t->rows[i], (t->nr_rows - i) * sizeof(*t->rows));
	t->rows[i] = row;
	t->nr_rows++;
	return 0;
}

/*
 * The kernel, or the dynamic loader, jumps to the entry point with no
 * return address: where no FDE covers it (ld.so's _start, which runs on
 * into _dl_start_user after _dl_start returns), its code is the outermost
 * frame, until the next row or the end of its segment.
 */
static int mark_entry(struct row_builder *b, Elf *elf, const GElf_Ehdr *eh)
{
	struct cfi_table *t = b->t;
	struct unwind_row end = {.kind = UNWIND_END, .pc = (uint32_t)eh->e_entry};
	uint64_t seg = segment_end(elf, eh->e_entry);
	size_t i = t->nr_rows;
	int err;

	if (!eh->e_entry || !seg || seg > UINT32_MAX)
		return 0;
	while (i && t->rows[i - 1].pc > eh->e_entry)
		i--;
	if (i && t->rows[i - 1].kind != UNWIND_NONE)
		return 0;
	if (i && t->rows[i - 1].pc == eh->e_entry) {
		t->rows[i - 1].kind = UNWIND_END;
		return 0;
	}
	err = insert_row(b, end);
	if (!err && i == t->nr_rows - 1)
		err = insert_row(b, (struct unwind_row){.kind = UNWIND_NONE, .pc = (uint32_t)seg});
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

/* .debug_frame's CFI, when some span needs it: libdw reads it only through a Dwarf. */
static Dwarf *debug_cfi(Elf *elf, const struct fde_list *l, size_t nr_eh, Dwarf_CFI **cfi)
{
	Dwarf *dw;

	*cfi = NULL;
	if (l->nr == nr_eh)
		return NULL;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw)
		*cfi = dwarf_getcfi(dw);
	return dw;
}

static int build_rows(struct row_builder *b, Elf *elf, const GElf_Ehdr *eh)
{
	struct fde_list l = {0};
	Dwarf_CFI *cfi[2] = {NULL, NULL};
	Dwarf *dw = NULL;
	size_t nr_eh = 0;
	int err;

	err = collect_spans(elf, &l, &nr_eh);
	if (!err && nr_eh)
		cfi[0] = dwarf_getcfi_elf(elf);
	if (!err)
		dw = debug_cfi(elf, &l, nr_eh, &cfi[1]);
	if (!err && ((nr_eh && !cfi[0]) || (l.nr > nr_eh && !cfi[1])))
		err = -ENOENT;
	if (!err)
		err = emit_spans(b, &l, cfi);
	if (!err && b->t->nr_rows)
		err = mark_entry(b, elf, eh);
	if (cfi[0])
		dwarf_cfi_end(cfi[0]);
	if (dw)
		dwarf_end(dw);
	free(l.v);
	return err;
}

int cfi_table__build(Elf *elf, struct cfi_table *t)
{
	struct row_builder b = {.t = t};
	GElf_Ehdr eh;
	int err;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	b.arch = cfi_arch_of(eh.e_machine);
	if (!b.arch)
		return -ENOTSUP;
	err = build_rows(&b, elf, &eh);
	/* Overlapping FDEs give rows out of order: not a table to binary-search. */
	if (!err && (!t->nr_rows || !rows_sorted(t)))
		err = -ENOENT;
	if (!err)
		err = index_pages(t);
	if (err)
		cfi_table__release(t);
	return err;
}

int cfi_table__build_for(Elf *elf, unsigned int machine, struct cfi_table *t)
{
	GElf_Ehdr eh;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	return eh.e_machine == machine ? cfi_table__build(elf, t) : -ENOTSUP;
}

void cfi_table__release(struct cfi_table *t)
{
	free(t->rows);
	free(t->pages);
	memset(t, 0, sizeof(*t));
}

#define CFI_CELL(e_machine, cfi, insn) &cfi,
ARCH_MACHINE_COLUMN(struct cfi_arch, cfi_arch_of, CFI_CELL)
