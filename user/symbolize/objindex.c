// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An object's symbols, compilation units and functions by address.
 * dwfl_module_addrinfo() and dwarf_getscopes() scan a whole symbol table
 * or compilation unit per call, and dwfl_module_addrdie() relies on
 * .debug_aranges, which clang does not emit; these indexes, built on
 * first use, make lookups logarithmic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/util.h"
#include "symbolize/objindex.h"

static struct addr_range *range_at(void *arr, size_t size, size_t i)
{
	return (struct addr_range *)((char *)arr + i * size);
}

/* For arrays whose elements begin with a range. */
static int range_cmp(const void *a, const void *b)
{
	const struct addr_range *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* @cmp orders by start first. */
static void ranges__sort(void *arr, size_t nr, size_t size, int (*cmp)(const void *, const void *))
{
	struct addr_range *r, *prev = NULL;
	size_t i;

	/* An empty array may be NULL, which qsort() must not be given. */
	if (nr > 1)
		qsort(arr, nr, size, cmp);
	for (i = 0; i < nr; i++, prev = r) {
		r = range_at(arr, size, i);
		r->reach = prev && prev->reach > r->end ? prev->reach : r->end;
	}
}

/* How many ranges start at or below @addr. */
static size_t ranges__count_below(void *arr, size_t nr, size_t size, uint64_t addr)
{
	size_t lo = 0, hi = nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (range_at(arr, size, mid)->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Of the first @below ranges, the last to start that holds @addr. */
static void *ranges__find(void *arr, size_t below, size_t size, uint64_t addr)
{
	struct addr_range *r;

	while (below-- > 0) {
		r = range_at(arr, size, below);
		if (r->reach <= addr)
			break;
		if (addr < r->end)
			return r;
	}
	return NULL;
}

/*
 * Of aliases at one address: a global name before a weak one before a
 * local one; then a name of the default version (name@@VERSION in a
 * debug file's .symtab) or of none before name@VERSION, the old version
 * that only programs linked against it call (arm64's libc has both
 * dlopen@GLIBC_2.17 and dlopen@@GLIBC_2.34 at one address); then any name
 * before glibc's __GI_ ones, the internal aliases its own calls go through
 * (__GI___clone3 is also __clone3 and clone3).
 */
static unsigned int symbol_rank(const GElf_Sym *sym, const char *name)
{
	const char *at = strchr(name, '@');
	unsigned int rank = (!at || at[1] == '@') << 1 | !!strncmp(name, "__GI_", 5);

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return rank + 8;
	case STB_WEAK:
		return rank + 4;
	default:
		return rank;
	}
}

static bool symbol_is_code(const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return shndx != SHN_UNDEF && shndx != SHN_ABS &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE);
}

/*
 * Aliases sort best last, which is the one a backward search meets first;
 * of equal rank, in the symbol table's order, so that the choice does not
 * rest on qsort()'s order of equal elements.
 */
static int symbol_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->range.start != y->range.start)
		return x->range.start < y->range.start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int object__add_symbol(struct object *obj, size_t *cap, int i)
{
	struct symbol *syms;
	const char *name;
	GElf_Word shndx;
	GElf_Addr addr;
	GElf_Sym sym;

	name = dwfl_module_getsym_info(obj->mod, i, &sym, &addr, &shndx, NULL, NULL);
	if (!name || !*name || !symbol_is_code(&sym, shndx))
		return 0;
	syms = array__grow(obj->syms, cap, obj->nr_syms, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	obj->syms = syms;
	syms[obj->nr_syms++] = (struct symbol){
	    .range = {.start = addr, .end = addr + sym.st_size},
	    .name = name,
	    .rank = symbol_rank(&sym, name),
	    .index = i,
	};
	return 0;
}

static void object__load_symbols(struct object *obj)
{
	size_t i, cap = 0;
	int nr;

	obj->syms_loaded = true;
	nr = dwfl_module_getsymtab(obj->mod);
	for (i = 1; nr > 0 && i < (size_t)nr; i++) {
		if (object__add_symbol(obj, &cap, (int)i)) {
			/* A partial table would name addresses wrongly. */
			obj->nr_syms = 0;
			return;
		}
	}
	ranges__sort(obj->syms, obj->nr_syms, sizeof(*obj->syms), symbol_cmp);
}

/*
 * The innermost sized symbol holding @addr; else, as assembly often has
 * no sizes, a sizeless symbol right below it.
 */
const struct symbol *object__find_symbol(struct object *obj, GElf_Addr addr)
{
	const struct symbol *sym;
	size_t below;

	if (!obj->syms_loaded)
		object__load_symbols(obj);
	below = ranges__count_below(obj->syms, obj->nr_syms, sizeof(*sym), addr);
	sym = ranges__find(obj->syms, below, sizeof(*sym), addr);
	if (sym || !below)
		return sym;
	sym = &obj->syms[below - 1];
	return sym->range.start == sym->range.end ? sym : NULL;
}

static int object__add_cu_ranges(struct object *obj, size_t *cap, Dwarf_Die *cudie)
{
	Dwarf_Addr base, start, end;
	struct cu_range *ranges;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cudie, off, &base, &start, &end)) > 0) {
		ranges = array__grow(obj->cu_ranges, cap, obj->nr_cu_ranges, sizeof(*ranges));
		if (!ranges)
			return -ENOMEM;
		obj->cu_ranges = ranges;
		ranges[obj->nr_cu_ranges++] = (struct cu_range){
		    .range = {.start = start, .end = end},
		    .die = *cudie,
		};
	}
	return 0;
}

static void object__load_cu_ranges(struct object *obj)
{
	Dwarf_Die *cudie = NULL;
	size_t cap = 0;

	obj->cu_ranges_loaded = true;
	while ((cudie = dwfl_module_nextcu(obj->mod, cudie, &obj->dwarf_bias))) {
		if (object__add_cu_ranges(obj, &cap, cudie)) {
			obj->nr_cu_ranges = 0;
			return;
		}
	}
	ranges__sort(obj->cu_ranges, obj->nr_cu_ranges, sizeof(*obj->cu_ranges), range_cmp);
}

/* The compilation unit holding module address @pc, and @pc in its terms. */
Dwarf_Die *object__cu_at(struct object *obj, Dwarf_Addr pc, Dwarf_Addr *dwarf_pc)
{
	struct cu_range *cu;
	size_t below;

	if (!obj->cu_ranges_loaded)
		object__load_cu_ranges(obj);
	*dwarf_pc = pc - obj->dwarf_bias;
	below = ranges__count_below(obj->cu_ranges, obj->nr_cu_ranges, sizeof(*cu), *dwarf_pc);
	cu = ranges__find(obj->cu_ranges, below, sizeof(*cu), *dwarf_pc);
	return cu ? &cu->die : NULL;
}

struct func_collector {
	struct func_range *funcs;
	size_t nr, cap;
};

static int collect_func(Dwarf_Die *die, void *arg)
{
	struct func_collector *c = arg;
	Dwarf_Addr base, start, end;
	struct func_range *funcs;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		funcs = array__grow(c->funcs, &c->cap, c->nr, sizeof(*funcs));
		if (!funcs)
			return DWARF_CB_ABORT;
		c->funcs = funcs;
		funcs[c->nr++] = (struct func_range){
		    .range = {.start = start, .end = end},
		    .die = *die,
		};
	}
	return DWARF_CB_OK;
}

static int cu_funcs__build(struct cu_funcs *cu, Dwarf_Die *cudie)
{
	struct func_collector c = {0};

	if (dwarf_getfuncs(cudie, collect_func, &c, 0) > 0) {
		free(c.funcs);
		return -ENOMEM;
	}
	ranges__sort(c.funcs, c.nr, sizeof(*c.funcs), range_cmp);
	cu->funcs = c.funcs;
	cu->nr = c.nr;
	return 0;
}

const struct cu_funcs *object__cu_funcs(struct object *obj, Dwarf_Die *cudie)
{
	Dwarf_Off offset = dwarf_dieoffset(cudie);
	struct cu_funcs cu = {.offset = offset}, *cus;
	size_t lo = 0, hi = obj->nr_cus, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (obj->cus[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < obj->nr_cus && obj->cus[lo].offset == offset)
		return &obj->cus[lo];
	cus = array__grow(obj->cus, &obj->cap_cus, obj->nr_cus, sizeof(*cus));
	if (!cus)
		return NULL;
	obj->cus = cus;
	if (cu_funcs__build(&cu, cudie))
		return NULL;
	memmove(&cus[lo + 1], &cus[lo], (obj->nr_cus - lo) * sizeof(*cus));
	cus[lo] = cu;
	obj->nr_cus++;
	return &cus[lo];
}

/* The innermost function holding @pc: a nested one if there is one. */
Dwarf_Die *cu_funcs__find(const struct cu_funcs *cu, Dwarf_Addr pc)
{
	struct func_range *func;
	size_t below;

	below = ranges__count_below(cu->funcs, cu->nr, sizeof(*func), pc);
	func = ranges__find(cu->funcs, below, sizeof(*func), pc);
	return func ? &func->die : NULL;
}

void object__release(struct object *obj)
{
	size_t i;

	for (i = 0; i < obj->nr_cus; i++)
		free(obj->cus[i].funcs);
	free(obj->cus);
	free(obj->cu_ranges);
	free(obj->syms);
}
