// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One address to its frames: the inlined calls DWARF records there, the
 * source line, and the function's name from the symbol table.
 */
#include <dwarf.h>
#include <limits.h>
#include "symbolize/lines.h"

/* Lexical blocks and inlined calls nested in one function. */
#define MAX_SCOPES 64

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
static int expand_scopes(struct strtab *strings, Dwarf_Die *cudie, Dwarf_Die *scopes, int nr_scopes,
			 struct frame_info *frame, struct frame_info *out)
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
		frame->function = strtab__intern_symbol(strings, die__name(&scopes[i]));
		frame->inlined = true;
		out[nr++] = *frame;
		*frame = base;
		frame__set_call_site(frame, strings, &scopes[i], files, nr_files);
	}
	frame->function = strtab__intern_symbol(strings, die__name(&scopes[0]));
	return nr;
}

/* @pc is a DWARF address in @cudie. */
int frame__expand_inlines(struct strtab *strings, struct object *obj, Dwarf_Die *cudie,
			  Dwarf_Addr pc, struct frame_info *frame, struct frame_info *out)
{
	Dwarf_Die scopes[MAX_SCOPES], *func;
	const struct cu_funcs *cu;

	cu = object__cu_funcs(obj, cudie);
	func = cu ? cu_funcs__find(cu, pc) : NULL;
	if (!func)
		return 0;
	return expand_scopes(strings, cudie, scopes, die__scopes_at(func, pc, scopes), frame, out);
}

void frame__set_source(struct frame_info *frame, struct strtab *strings, Dwarf_Die *cudie,
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
void frame__set_symbol(struct frame_info *frame, struct strtab *strings, struct object *obj,
		       Dwarf_Addr pc)
{
	const struct symbol *sym;

	sym = object__find_symbol(obj, pc);
	if (!sym)
		return;
	frame->function = strtab__intern_symbol(strings, sym->name);
	frame->function_offset = frame->offset - sym->range.start;
}
