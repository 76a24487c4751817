/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PLACEMENT_H
#define ALLOCTRACE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloctrace.h"

/* A prologue longer than this is the function's real work already. */
#define PLACEMENT_SPAN 64
/* How much of a function placement__x86() may read: its span plus one instruction. */
#define PLACEMENT_CODE_MAX (PLACEMENT_SPAN + 16)
#define PLACEMENT_ARGS	   COOKIE_ARGS

/* What a probe needs to see at the instruction it sits on. */
struct placement_need {
	unsigned int nr_args; /* the function's arguments: all kept readable */
	bool keep_sp;	      /* a return probe shares the breakpoint: the stack pointer unmoved */
};

/* Where a probe sits and where it finds the call's arguments there. */
struct placement {
	uint64_t offset;		 /* from the function's start */
	uint8_t arg_reg[PLACEMENT_ARGS]; /* enum x86_reg holding each argument */
	bool stepped;			 /* the kernel single-steps the instruction */
	char why[160];			 /* for --verbose */
};

/* The function's first instruction, single-stepped, the arguments where the ABI puts them. */
void placement__entry(struct placement *out);

/*
 * Where in an x86-64 function, of which @len bytes are at @code, a probe
 * costs least and still sees every call with what @need asks for. When
 * unsure, the function's first instruction, with the arguments where the
 * ABI puts them.
 */
void placement__x86(const uint8_t *code, size_t len, const struct placement_need *need,
		    struct placement *out);

#endif
