/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_FRAME_H
#define ALLOCTRACE_FRAME_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One symbolized frame. Strings belong to whoever produced the frame (the
 * symbolizer keeps them until it is freed). Unknown parts are NULL or 0;
 * module and offset are set whenever the address falls in a mapping, so
 * that every frame can be symbolized later with addr2line.
 */
struct frame_info {
	uint64_t addr;
	const char *module;   /* path of the mapped object, NULL if unmapped */
	uint64_t offset;      /* address in the object's ELF address space */
	const char *function; /* demangled name, NULL if unknown */
	uint64_t function_offset;
	const char *file;     /* source file, NULL if unknown */
	unsigned int line;    /* 0 if unknown */
	bool inlined;	      /* an inlined call inside the next frame */
	const char *build_id; /* the object's GNU build id, lowercase hex; NULL if unknown */
};

#endif
