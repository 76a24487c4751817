// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/debuginfod.h"
#include "symbolize/demangle.h"
#include "symbolize/objfile.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"
#include "lib/util.h"

/* Deeper inline chains lose their outermost inlined calls. */
#define MAX_FRAMES 32
/* Lexical blocks and inlined calls nested in one function. */
#define MAX_SCOPES 64

/* Every string handed out, so frames stay valid across refreshes. */
struct strtab {
	char **slots; /* open addressing; NULL marks a free slot */
	size_t cap;   /* a power of two, or 0 */
	size_t nr;
};

struct cache_entry {
	uint64_t addr;
	struct frame_info *frames; /* NULL marks a free slot */
	int nr;
};

struct addr_cache {
	struct cache_entry *slots;
	size_t cap; /* a power of two, or 0 */
	size_t nr;
};

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
	struct addr_range range; /* runtime addresses */
	const char *name;	 /* in the ELF file, alive with the Dwfl */
	unsigned int rank;	 /* which of several aliases to prefer */
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
	Dwarf_Addr dwarf_bias; /* runtime address minus DWARF address */
	struct cu_funcs *cus;  /* sorted by offset */
	size_t nr_cus, cap_cus;
};

/* What is known about the object behind one mapping. */
struct map_object {
	uint64_t bias;	    /* runtime address minus ELF address */
	struct object *obj; /* NULL when there is no ELF object to read */
};

/* Everything a refresh replaces at once. */
struct layout {
	struct proc_maps maps;
	struct map_object *map_objs; /* parallel to maps.maps */
	struct object *objs;
	size_t nr_objs;
	Dwfl *dwfl;
};

struct symbolizer {
	pid_t pid;
	struct layout layout;
	struct strtab strings;
	struct addr_cache cache;
};

/* Build ids are hashes, 20 bytes for SHA-1: a longer note is no build id. */
#define MAX_BUILD_ID 64

/*
 * The build ids, in hex, of objects whose debug information was looked
 * for and not found, shared by all symbolizers while any is alive: a
 * debuginfod query can take DEBUGINFOD_TIMEOUT seconds, and every refresh
 * of a process and every process that maps the object would ask again.
 * Symbolizers are used from one thread only.
 */
static struct strtab missing_debuginfo;
static unsigned int nr_symbolizers;

static int module__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name);

/*
 * Debug info may sit in the object or apart from it: by build id under
 * /usr/lib/debug/.build-id, by .gnu_debuglink beside the object, in its
 * .debug directory or under /usr/lib/debug, then from debuginfod when
 * DEBUGINFOD_URLS is set (docs/alloctrace.8, "Symbols").
 */
static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = module__find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static size_t hash_addr(uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h ^ h >> 32);
}

static size_t strtab__slot(const struct strtab *tab, const char *str)
{
	size_t mask = tab->cap - 1, i;

	for (i = hash_str(str) & mask; tab->slots[i]; i = (i + 1) & mask)
		if (!strcmp(tab->slots[i], str))
			break;
	return i;
}

static int strtab__grow(struct strtab *tab)
{
	struct strtab bigger = {.cap = tab->cap ? tab->cap * 2 : 256, .nr = tab->nr};
	size_t i;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < tab->cap; i++)
		if (tab->slots[i])
			bigger.slots[strtab__slot(&bigger, tab->slots[i])] = tab->slots[i];
	free(tab->slots);
	*tab = bigger;
	return 0;
}

/* NULL for a NULL @str or when out of memory: the frame just knows less. */
static const char *strtab__intern(struct strtab *tab, const char *str)
{
	size_t i;

	if (!str)
		return NULL;
	if (2 * (tab->nr + 1) > tab->cap && strtab__grow(tab))
		return NULL;
	i = strtab__slot(tab, str);
	if (!tab->slots[i]) {
		tab->slots[i] = strdup(str);
		if (!tab->slots[i])
			return NULL;
		tab->nr++;
	}
	return tab->slots[i];
}

static const char *strtab__intern_symbol(struct strtab *tab, const char *name)
{
	const char *interned;
	char *readable;

	if (!name)
		return NULL;
	readable = demangle(name);
	if (!readable)
		return NULL;
	interned = strtab__intern(tab, readable);
	free(readable);
	return interned;
}

static bool strtab__has(const struct strtab *tab, const char *str)
{
	return tab->cap && tab->slots[strtab__slot(tab, str)];
}

static void strtab__release(struct strtab *tab)
{
	size_t i;

	for (i = 0; i < tab->cap; i++)
		free(tab->slots[i]);
	free(tab->slots);
	*tab = (struct strtab){0};
}

static size_t addr_cache__slot(const struct addr_cache *cache, uint64_t addr)
{
	size_t mask = cache->cap - 1, i;

	for (i = hash_addr(addr) & mask; cache->slots[i].frames; i = (i + 1) & mask)
		if (cache->slots[i].addr == addr)
			break;
	return i;
}

static const struct cache_entry *addr_cache__find(const struct addr_cache *cache, uint64_t addr)
{
	const struct cache_entry *e;

	if (!cache->cap)
		return NULL;
	e = &cache->slots[addr_cache__slot(cache, addr)];
	return e->frames ? e : NULL;
}

static int addr_cache__resize(struct addr_cache *cache, size_t cap)
{
	struct addr_cache resized = {.cap = cap, .nr = cache->nr};
	size_t i;

	resized.slots = calloc(resized.cap, sizeof(*resized.slots));
	if (!resized.slots)
		return -ENOMEM;
	for (i = 0; i < cache->cap; i++)
		if (cache->slots[i].frames)
			resized.slots[addr_cache__slot(&resized, cache->slots[i].addr)] =
			    cache->slots[i];
	free(cache->slots);
	*cache = resized;
	return 0;
}

/* Caching is best effort: on failure the address is just resolved again. */
static void addr_cache__add(struct addr_cache *cache, uint64_t addr,
			    const struct frame_info *frames, int nr)
{
	struct cache_entry *e;

	if (2 * (cache->nr + 1) > cache->cap &&
	    addr_cache__resize(cache, cache->cap ? cache->cap * 2 : 1024))
		return;
	e = &cache->slots[addr_cache__slot(cache, addr)];
	e->frames = malloc(nr * sizeof(*frames));
	if (!e->frames)
		return;
	memcpy(e->frames, frames, nr * sizeof(*frames));
	e->addr = addr;
	e->nr = nr;
	cache->nr++;
}

static void addr_cache__release(struct addr_cache *cache)
{
	size_t i;

	for (i = 0; i < cache->cap; i++)
		free(cache->slots[i].frames);
	free(cache->slots);
	*cache = (struct addr_cache){0};
}

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

static unsigned int symbol_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

static bool symbol_is_code(const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return shndx != SHN_UNDEF && shndx != SHN_ABS &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE);
}

/* Aliases sort best last, which is the one a backward search meets first. */
static int symbol_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->range.start != y->range.start)
		return x->range.start < y->range.start ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
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
	    .rank = symbol_rank(&sym),
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
static const struct symbol *object__find_symbol(struct object *obj, GElf_Addr addr)
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

/* The compilation unit holding runtime address @pc, and @pc in its terms. */
static Dwarf_Die *object__cu_at(struct object *obj, Dwarf_Addr pc, Dwarf_Addr *dwarf_pc)
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

static const struct cu_funcs *object__cu_funcs(struct object *obj, Dwarf_Die *cudie)
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
static Dwarf_Die *cu_funcs__find(const struct cu_funcs *cu, Dwarf_Addr pc)
{
	struct func_range *func;
	size_t below;

	below = ranges__count_below(cu->funcs, cu->nr, sizeof(*func), pc);
	func = ranges__find(cu->funcs, below, sizeof(*func), pc);
	return func ? &func->die : NULL;
}

static void object__release(struct object *obj)
{
	size_t i;

	for (i = 0; i < obj->nr_cus; i++)
		free(obj->cus[i].funcs);
	free(obj->cus);
	free(obj->cu_ranges);
	free(obj->syms);
}

static bool die__is_scope(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_lexical_block:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

/* The child scope of @parent that holds @pc. */
static bool die__child_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *child)
{
	if (dwarf_child(parent, child))
		return false;
	do {
		if (die__is_scope(child) && dwarf_haspc(child, pc) > 0)
			return true;
	} while (!dwarf_siblingof(child, child));
	return false;
}

/*
 * @func and the scopes nested in it that hold @pc, outermost first.
 * dwarf_getscopes() would continue from an inlined instance into the
 * scopes of its abstract definition instead of its caller.
 */
static int die__scopes_at(Dwarf_Die *func, Dwarf_Addr pc, Dwarf_Die *scopes)
{
	int nr = 1;

	scopes[0] = *func;
	while (nr < MAX_SCOPES && die__child_at(&scopes[nr - 1], pc, &scopes[nr]))
		nr++;
	return nr;
}

static const char *die__name(Dwarf_Die *die)
{
	static const int attrs[] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name};
	Dwarf_Attribute attr;
	const char *name;
	size_t i;

	/* The linkage name demangles with its scope and parameters. */
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		name = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &attr));
		if (name)
			return name;
	}
	return NULL;
}

/* Where the inlined instance @die was called from. */
static void frame__set_call_site(struct frame_info *frame, struct strtab *strings, Dwarf_Die *die,
				 Dwarf_Files *files, size_t nr_files)
{
	Dwarf_Attribute attr;
	Dwarf_Word file, line;

	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &file) && file < nr_files)
		frame->file = strtab__intern(strings, dwarf_filesrc(files, file, NULL, NULL));
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) && line <= UINT_MAX)
		frame->line = (unsigned int)line;
}

/*
 * One frame per inlined call in @scopes, innermost first, into @out; then
 * @frame becomes the containing function, with the call site of the
 * outermost one. Returns the number of frames written.
 */
static int symbolizer__expand_scopes(struct symbolizer *s, Dwarf_Die *cudie, Dwarf_Die *scopes,
				     int nr_scopes, struct frame_info *frame,
				     struct frame_info *out)
{
	const struct frame_info base = {.addr = frame->addr,
					.module = frame->module,
					.offset = frame->offset,
					.build_id = frame->build_id};
	Dwarf_Files *files = NULL;
	size_t nr_files = 0;
	int i, nr = 0;

	if (dwarf_getsrcfiles(cudie, &files, &nr_files))
		nr_files = 0;
	for (i = nr_scopes - 1; i > 0 && nr < MAX_FRAMES - 1; i--) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		frame->function = strtab__intern_symbol(&s->strings, die__name(&scopes[i]));
		frame->inlined = true;
		out[nr++] = *frame;
		*frame = base;
		frame__set_call_site(frame, &s->strings, &scopes[i], files, nr_files);
	}
	frame->function = strtab__intern_symbol(&s->strings, die__name(&scopes[0]));
	return nr;
}

/* @pc is a DWARF address in @cudie. */
static int symbolizer__expand_inlines(struct symbolizer *s, struct object *obj, Dwarf_Die *cudie,
				      Dwarf_Addr pc, struct frame_info *frame,
				      struct frame_info *out)
{
	Dwarf_Die scopes[MAX_SCOPES], *func;
	const struct cu_funcs *cu;

	cu = object__cu_funcs(obj, cudie);
	func = cu ? cu_funcs__find(cu, pc) : NULL;
	if (!func)
		return 0;
	return symbolizer__expand_scopes(s, cudie, scopes, die__scopes_at(func, pc, scopes), frame,
					 out);
}

static void frame__set_source(struct frame_info *frame, struct strtab *strings, Dwarf_Die *cudie,
			      Dwarf_Addr pc)
{
	Dwarf_Line *line;
	const char *file;
	int lineno;

	line = dwarf_getsrc_die(cudie, pc);
	if (!line)
		return;
	file = dwarf_linesrc(line, NULL, NULL);
	frame->file = strtab__intern(strings, file);
	frame->line = file && !dwarf_lineno(line, &lineno) && lineno > 0 ? (unsigned int)lineno : 0;
}

/* The symbol table has names that the DWARF may lack, and .cold parts. */
static void frame__set_symbol(struct frame_info *frame, struct strtab *strings, struct object *obj,
			      Dwarf_Addr pc)
{
	const struct symbol *sym;

	sym = object__find_symbol(obj, pc);
	if (!sym)
		return;
	frame->function = strtab__intern_symbol(strings, sym->name);
	frame->function_offset = frame->addr - sym->range.start;
}

/* In hex, as debuginfod and pprof name an object. 0 or -ENOENT. */
static int module__build_id(Dwfl_Module *mod, char hex[2 * MAX_BUILD_ID + 1])
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, i;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0 || len > MAX_BUILD_ID)
		return -ENOENT;
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[bits[i] >> 4];
		hex[2 * i + 1] = digits[bits[i] & 0xf];
	}
	hex[2 * len] = '\0';
	return 0;
}

static const char *object__build_id(const struct object *obj, struct strtab *strings)
{
	char hex[2 * MAX_BUILD_ID + 1];

	return module__build_id(obj->mod, hex) ? NULL : strtab__intern(strings, hex);
}

/* libdwfl's lookups, each object's failure remembered by its build id. */
static int module__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name)
{
	char id[2 * MAX_BUILD_ID + 1];
	bool has_id = !module__build_id(mod, id);
	int fd;

	if (has_id && strtab__has(&missing_debuginfo, id)) {
		errno = ENOENT;
		return -1;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd < 0 && has_id)
		strtab__intern(&missing_debuginfo, id);
	return fd;
}

static const struct map_object *layout__find(const struct layout *lay, uint64_t addr,
					     const struct mapping **map)
{
	*map = proc_maps__find(&lay->maps, addr);
	return *map ? &lay->map_objs[*map - lay->maps.maps] : NULL;
}

/*
 * @addr is a return address: the call is the instruction before it, and
 * may even be the last one of a function (a call to a noreturn function),
 * so source, inlines and symbol are looked up at @addr - 1.
 */
static int symbolizer__lookup(struct symbolizer *s, uint64_t addr, struct frame_info *out)
{
	struct frame_info frame = {.addr = addr};
	const struct map_object *mo;
	const struct mapping *map;
	Dwarf_Addr pc, dwarf_pc;
	Dwarf_Die *cudie;
	int nr = 0;

	mo = layout__find(&s->layout, addr, &map);
	if (!mo) {
		out[0] = frame;
		return 1;
	}
	frame.module = strtab__intern(&s->strings, map->path);
	frame.offset = addr - mo->bias;
	if (!mo->obj) {
		out[0] = frame;
		return 1;
	}
	frame.build_id = object__build_id(mo->obj, &s->strings);
	pc = addr > map->start ? addr - 1 : addr;
	cudie = object__cu_at(mo->obj, pc, &dwarf_pc);
	if (cudie) {
		frame__set_source(&frame, &s->strings, cudie, dwarf_pc);
		nr = symbolizer__expand_inlines(s, mo->obj, cudie, dwarf_pc, &frame, out);
	}
	frame.inlined = false;
	frame__set_symbol(&frame, &s->strings, mo->obj, pc);
	out[nr++] = frame;
	return nr;
}

static int object__load_bias(int fd, const struct mapping *map, uint64_t *bias)
{
	Elf *elf;
	int err;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = elf__load_bias(elf, map, bias);
	elf_end(elf);
	return err;
}

/* @map is the object's lowest mapping; @bias is kept when this fails. */
static Dwfl_Module *object__report(Dwfl *dwfl, pid_t pid, const struct mapping *map, uint64_t *bias)
{
	Dwfl_Module *mod;
	int fd;

	fd = mapping__open(pid, map);
	if (fd < 0)
		return NULL;
	if (object__load_bias(fd, map, bias)) {
		close(fd);
		return NULL;
	}
	/* The name is the target's path, so that debuglink lookups work. */
	mod = dwfl_report_elf(dwfl, map->path, map->path, fd, *bias, true);
	/* On success libdwfl owns the descriptor. */
	if (!mod)
		close(fd);
	return mod;
}

static int mapping__object_cmp(const void *a, const void *b)
{
	const struct mapping *x = *(const struct mapping *const *)a;
	const struct mapping *y = *(const struct mapping *const *)b;
	int cmp;

	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	if (x->dev_major != y->dev_major)
		return x->dev_major < y->dev_major ? -1 : 1;
	if (x->dev_minor != y->dev_minor)
		return x->dev_minor < y->dev_minor ? -1 : 1;
	cmp = strcmp(x->path, y->path);
	if (cmp)
		return cmp;
	return (x->start > y->start) - (x->start < y->start);
}

static bool mapping__same_object(const struct mapping *x, const struct mapping *y)
{
	return x->inode == y->inode && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor && !strcmp(x->path, y->path);
}

/* @group: the mappings of one object, lowest first. */
static void layout__add_object(struct layout *lay, pid_t pid, const struct mapping **group,
			       size_t nr)
{
	uint64_t bias = group[0]->start - group[0]->pgoff;
	struct object *obj = NULL;
	Dwfl_Module *mod;
	size_t i;

	for (i = 0; i < nr && !group[i]->exec; i++)
		;
	/* Only code holds return addresses; data files need not be opened. */
	if (i < nr) {
		mod = object__report(lay->dwfl, pid, group[0], &bias);
		if (mod) {
			obj = &lay->objs[lay->nr_objs++];
			*obj = (struct object){.mod = mod};
		}
	}
	for (i = 0; i < nr; i++)
		lay->map_objs[group[i] - lay->maps.maps] = (struct map_object){bias, obj};
}

static int layout__add_objects(struct layout *lay, pid_t pid)
{
	const struct mapping **order;
	size_t i, j, nr = 0;

	order = calloc(lay->maps.nr ? lay->maps.nr : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < lay->maps.nr; i++)
		if (mapping__is_file(&lay->maps.maps[i]))
			order[nr++] = &lay->maps.maps[i];
	qsort(order, nr, sizeof(*order), mapping__object_cmp);
	for (i = 0; i < nr; i = j) {
		for (j = i + 1; j < nr && mapping__same_object(order[i], order[j]); j++)
			;
		layout__add_object(lay, pid, order + i, j - i);
	}
	free(order);
	return 0;
}

static void layout__release(struct layout *lay)
{
	size_t i;

	for (i = 0; i < lay->nr_objs; i++)
		object__release(&lay->objs[i]);
	free(lay->objs);
	if (lay->dwfl)
		dwfl_end(lay->dwfl);
	free(lay->map_objs);
	proc_maps__release(&lay->maps);
	*lay = (struct layout){0};
}

/* Takes @lay->maps; on failure everything in @lay is released. */
static int layout__build(struct layout *lay, pid_t pid)
{
	size_t i, nr = lay->maps.nr ? lay->maps.nr : 1;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -ELIBBAD;
		goto fail;
	}
	/* An object has at least one mapping: nr is enough for both. */
	lay->map_objs = calloc(nr, sizeof(*lay->map_objs));
	lay->objs = calloc(nr, sizeof(*lay->objs));
	lay->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!lay->map_objs || !lay->objs || !lay->dwfl) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < lay->maps.nr; i++)
		lay->map_objs[i].bias = lay->maps.maps[i].start - lay->maps.maps[i].pgoff;
	dwfl_report_begin(lay->dwfl);
	err = layout__add_objects(lay, pid);
	dwfl_report_end(lay->dwfl, NULL, NULL);
	if (err)
		goto fail;
	return 0;
fail:
	layout__release(lay);
	return err;
}

static bool str_equal(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool mapping__equal(const struct mapping *x, const struct mapping *y)
{
	return x->start == y->start && x->end == y->end && x->pgoff == y->pgoff &&
	       x->inode == y->inode && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor && x->read == y->read && x->write == y->write &&
	       x->exec == y->exec && x->deleted == y->deleted && str_equal(x->path, y->path);
}

static bool proc_maps__equal(const struct proc_maps *x, const struct proc_maps *y)
{
	size_t i;

	if (x->nr != y->nr)
		return false;
	for (i = 0; i < x->nr; i++)
		if (!mapping__equal(&x->maps[i], &y->maps[i]))
			return false;
	return true;
}

/* Whether what was resolved for @addr under @old still holds under @new. */
static bool layout__same_at(const struct layout *old, const struct layout *new, uint64_t addr)
{
	const struct mapping *old_map, *new_map;
	const struct map_object *old_mo, *new_mo;

	old_mo = layout__find(old, addr, &old_map);
	new_mo = layout__find(new, addr, &new_map);
	if (!old_mo || !new_mo)
		return !old_mo && !new_mo;
	return mapping__equal(old_map, new_map) && old_mo->bias == new_mo->bias &&
	       !old_mo->obj == !new_mo->obj;
}

static void addr_cache__prune(struct addr_cache *cache, const struct layout *old,
			      const struct layout *new)
{
	size_t i;

	if (!cache->cap)
		return;
	for (i = 0; i < cache->cap; i++) {
		if (!cache->slots[i].frames || layout__same_at(old, new, cache->slots[i].addr))
			continue;
		free(cache->slots[i].frames);
		cache->slots[i].frames = NULL;
		cache->nr--;
	}
	/* Emptied slots would break probe chains; rehashing closes them. */
	if (addr_cache__resize(cache, cache->cap))
		addr_cache__release(cache);
}

struct symbolizer *symbolizer__new(pid_t pid)
{
	struct symbolizer *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = pid;
	if (!nr_symbolizers++)
		debuginfod__setup();
	err = proc_maps__read(pid, &s->layout.maps);
	if (!err)
		err = layout__build(&s->layout, pid);
	if (err) {
		symbolizer__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	layout__release(&s->layout);
	addr_cache__release(&s->cache);
	strtab__release(&s->strings);
	free(s);
	if (!--nr_symbolizers)
		strtab__release(&missing_debuginfo);
}

int symbolizer__refresh(struct symbolizer *s)
{
	struct layout fresh = {0};
	int err;

	err = proc_maps__read(s->pid, &fresh.maps);
	/* A process that is gone keeps what we knew of it. */
	if (err == -ENOENT || err == -ESRCH)
		return 0;
	if (err)
		return err;
	if (!fresh.maps.nr || proc_maps__equal(&fresh.maps, &s->layout.maps)) {
		proc_maps__release(&fresh.maps);
		return 0;
	}
	err = layout__build(&fresh, s->pid);
	if (err)
		return err;
	addr_cache__prune(&s->cache, &s->layout, &fresh);
	layout__release(&s->layout);
	s->layout = fresh;
	return 0;
}

int symbolizer__resolve(struct symbolizer *s, uint64_t addr, struct frame_info *frames, int max)
{
	struct frame_info found[MAX_FRAMES];
	const struct cache_entry *e;
	int nr;

	if (max <= 0)
		return 0;
	e = addr_cache__find(&s->cache, addr);
	if (e) {
		nr = e->nr < max ? e->nr : max;
		memcpy(frames, e->frames, nr * sizeof(*frames));
		return nr;
	}
	nr = symbolizer__lookup(s, addr, found);
	addr_cache__add(&s->cache, addr, found, nr);
	if (nr > max)
		nr = max;
	memcpy(frames, found, nr * sizeof(*frames));
	return nr;
}
