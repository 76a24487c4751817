/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PLACEMENT_H
#define ALLOCTRACE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloctrace.h"
#include "probe/insn.h"

/* A prologue longer than this is the function's real work already. */
#define PLACEMENT_SPAN 64
/* How much of a function placement__walk() may read: its span plus one instruction. */
#define PLACEMENT_CODE_MAX (PLACEMENT_SPAN + 16)
#define PLACEMENT_ARGS	   COOKIE_ARGS

_Static_assert(PLACEMENT_ARGS <= INSN_ARGS, "an ABI register for every argument");

/*
 * The architecture this loader probes, or NULL where placement knows none,
 * and what a single-stepped probe costs there, for the warning.
 */
#if defined(__x86_64__)
#define PLACEMENT_NATIVE    (&insn_x86)
#define PLACEMENT_STEP_COST "about 5.5 us a call instead of 0.4-1 us"
#elif defined(__aarch64__)
#define PLACEMENT_NATIVE    (&insn_arm64)
#define PLACEMENT_STEP_COST "two exceptions a call instead of one"
#else
#define PLACEMENT_NATIVE    NULL
#define PLACEMENT_STEP_COST "an extra exception a call"
#endif

/* What a probe needs to see at the instruction it sits on. */
struct placement_need {
	unsigned int nr_args; /* the function's arguments: all kept readable */
	bool keep_sp;	      /* a return probe shares the breakpoint: the stack pointer unmoved */
};

/* Where a probe sits and where it finds the call's arguments there. */
struct placement {
	uint64_t offset; /* from the function's start */
	uint8_t
	    arg_reg[PLACEMENT_ARGS]; /* the register holding each argument, by @arch's numbers */
	bool stepped;		     /* the kernel single-steps the instruction */
	char why[160];		     /* for --verbose */
};

/*
 * The function's first instruction, single-stepped, the arguments where
 * @arch's ABI puts them (the loader's own with NULL).
 */
void placement__entry(const struct insn_arch *arch, struct placement *out);

/*
 * Where in an @arch function, of which @len bytes are at @code, a probe
 * costs least and still sees every call with what @need asks for. When
 * unsure, or with no @arch, the function's first instruction, with the
 * arguments where the ABI puts them.
 */
void placement__walk(const struct insn_arch *arch, const uint8_t *code, size_t len,
		     const struct placement_need *need, struct placement *out);

#endif
