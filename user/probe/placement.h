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

/* The architecture this loader probes (arch_elf_machine's), or NULL where placement knows none. */
const struct insn_arch *placement__native(void);

/* What a single-stepped probe costs on the loader's machine, for the warning. */
const char *placement__step_cost(void);

/*
 * Calls on a function's single-stepped probes since the start past which
 * the cost is worth a warning: on x86-64 under KVM 10,000 take about 55 ms
 * of the traced programs' time (5.5 us each, against 4-10 ms emulated).
 */
#define PLACEMENT_STEP_WARN_CALLS 10000

/*
 * The functions to warn of now, a bit each (1 << enum alloc_func): those
 * of @stepped (probed on single-stepped instructions) whose @calls (@nr of
 * them, by function) reached PLACEMENT_STEP_WARN_CALLS, and not in @said.
 */
uint64_t placement__stepped_due(const uint64_t *calls, size_t nr, uint64_t stepped, uint64_t said);

/* A function this long or longer is not scanned for its exits. */
#define PLACEMENT_BODY_MAX 4096
/* Nor one that leaves in more places than this. */
#define PLACEMENT_EXITS 16

/* What a probe needs to see at the instruction it sits on. */
struct placement_need {
	unsigned int nr_args; /* the function's arguments: all kept readable */
	bool keep_sp;	      /* a return probe shares the breakpoint: the stack pointer unmoved */
	bool track_sp;	      /* the stack pointer moved only by constants, summed in sp_adjust */
};

/*
 * Where a call leaves the function, for a return probe of its own there:
 * a return instruction (a plain probe on it sees the returned value), or a
 * tail call with the return address back in its register (a return probe
 * on it hooks the return of the function it jumps to).
 */
struct placement_exit {
	uint32_t offset; /* from the function's start */
	bool tail;
};

/* Where a probe sits and where it finds the call's arguments there. */
struct placement {
	uint64_t offset; /* from the function's start */
	uint8_t
	    arg_reg[PLACEMENT_ARGS]; /* the register holding each argument, by @arch's numbers */
	bool stepped;		     /* the kernel single-steps the instruction */
	uint16_t sp_adjust;	     /* the probe's stack pointer plus this is the call's */
	uint8_t nr_exits;	     /* 0: the return probe shares the entry's breakpoint */
	struct placement_exit exits[PLACEMENT_EXITS];
	char why[160]; /* for --verbose */
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

/*
 * Every place where a call of the @arch function of @len bytes at @code
 * leaves it, into @out->exits, for a function whose entry probe sits at
 * @out->offset and whose return address stays in a register (arm64's
 * x30). 0, or -EOPNOTSUPP when some exit cannot be vouched for (an
 * indirect branch, an unknown one, a tail call with the return address
 * maybe elsewhere, a branch back over the entry probe, too many), with
 * the reason in @why of @size bytes; @out->nr_exits is 0 then.
 */
int placement__exits(const struct insn_arch *arch, const uint8_t *code, size_t len,
		     struct placement *out, char *why, size_t size);

/*
 * @out, placed by placement__walk() for @need with keep_sp (its return
 * probe sharing the entry's breakpoint) and single-stepped for it: placed
 * again with return probes of their own on the exits of the whole @arch
 * function, @len bytes at @code, where the return address stays in a
 * register and placement__exits() vouches for every exit. Else @out stays
 * where it was, its reason saying what kept it there.
 */
void placement__move_return(const struct insn_arch *arch, const uint8_t *code, size_t len,
			    struct placement_need need, struct placement *out);

#endif
