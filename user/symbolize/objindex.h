/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OBJINDEX_H
#define ALLOCTRACE_OBJINDEX_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The head of the elements of arrays sorted by start. @reach is the
 * highest end of this range and all earlier ones, which bounds the
 * backward search for a range that holds an address when ranges nest or
 * overlap.
 */
struct addr_range {
	uint64_t start, end, reach;
};

struct symbol {
	struct addr_range range; /* the module's addresses: the file's own */
	const char *name;	 /* in the ELF file, alive with the Dwfl */
	unsigned int rank;	 /* which of several aliases to prefer */
	unsigned int index;	 /* in the symbol table: of equal ranks, the later */
};

struct func_range {
	struct addr_range range; /* DWARF addresses */
	Dwarf_Die die;		 /* the DW_TAG_subprogram */
};

struct cu_range {
	struct addr_range range; /* DWARF addresses */
	Dwarf_Die die;		 /* the compilation unit */
};

/* The functions of one compilation unit. */
struct cu_funcs {
	Dwarf_Off offset;
	struct func_range *funcs;
	size_t nr;
};

/*
 * One ELF object reported to libdwfl. dwfl_module_addrinfo() and
 * dwarf_getscopes() scan a whole symbol table or compilation unit per
 * call, and dwfl_module_addrdie() relies on .debug_aranges, which clang
 * does not emit; these indexes, built on first use, make lookups
 * logarithmic.
 */
struct object {
	Dwfl_Module *mod;
	struct symbol *syms;
	size_t nr_syms;
	bool syms_loaded;
	struct cu_range *cu_ranges;
	size_t nr_cu_ranges;
	bool cu_ranges_loaded;
	Dwarf_Addr dwarf_bias; /* module address minus DWARF address */
	struct cu_funcs *cus;  /* sorted by offset */
	size_t nr_cus, cap_cus;
};

/* What is known about the object behind one mapping. */

/*
 * The innermost sized symbol holding @addr; else, as assembly often has
 * no sizes, a sizeless symbol right below it.
 */
const struct symbol *object__find_symbol(struct object *obj, GElf_Addr addr);

/* The compilation unit holding module address @pc, and @pc in its terms. */
Dwarf_Die *object__cu_at(struct object *obj, Dwarf_Addr pc, Dwarf_Addr *dwarf_pc);

/* The functions of the compilation unit @cudie, indexed on first use. */
const struct cu_funcs *object__cu_funcs(struct object *obj, Dwarf_Die *cudie);

/* The innermost function holding @pc: a nested one if there is one. */
Dwarf_Die *cu_funcs__find(const struct cu_funcs *cu, Dwarf_Addr pc);

void object__release(struct object *obj);

#endif
