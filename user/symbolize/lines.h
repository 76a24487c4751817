/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_LINES_H
#define ALLOCTRACE_LINES_H

#include "symbolize/frame.h"
#include "symbolize/objindex.h"
#include "symbolize/strtab.h"

/* Deeper inline chains lose their outermost inlined calls. */
#define MAX_FRAMES 32

/*
 * One frame per inlined call at DWARF address @pc of @cudie, innermost
 * first, into @out (at most MAX_FRAMES - 1); then @frame becomes the
 * containing function, with the call site of the outermost one. Returns
 * the number of frames written.
 */
int frame__expand_inlines(struct strtab *strings, struct object *obj, Dwarf_Die *cudie,
			  Dwarf_Addr pc, struct frame_info *frame, struct frame_info *out);

/* @frame's file and line at DWARF address @pc of @cudie. */
void frame__set_source(struct frame_info *frame, struct strtab *strings, Dwarf_Die *cudie,
		       Dwarf_Addr pc);

/* The symbol table has names that the DWARF may lack, and .cold parts. */
void frame__set_symbol(struct frame_info *frame, struct strtab *strings, struct object *obj,
		       Dwarf_Addr pc);

#endif
