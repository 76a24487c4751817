/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_EXITFRAME_H
#define ALLOCTRACE_EXITFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "arch/arch.h"
#include "leakcheck/classify.h"
#include "proc/procmaps.h"

/*
 * Where a thread in its exit stop entered exit(): its stack unwound by
 * call frame information from the registers of the stop to exit()'s
 * frame and its caller's. Its stack below @sp held only exit()'s own
 * frames (the atexit handlers, stdio's flush, _exit), which have run:
 * what a frame that returned before left there is no pointer any frame
 * still running can use. @regs: the caller's callee-saved registers at
 * the call, as the CFI recovers them, @nr of them: exit()'s frames may
 * have kept them only there.
 */
struct exit_entry {
	uint64_t sp;
	uint64_t regs[ARCH_DWARF_REGS];
	unsigned int nr;
};

/*
 * The walks of one process @pid's threads, over its memory @mem and
 * mappings @maps (the objects opened as it sees them: proc/mapfile.h).
 * NULL with errno set.
 */
struct exit_walk;
struct exit_walk *exit_walk__new(pid_t pid, const struct proc_maps *maps,
				 const struct leak_memory *mem);
void exit_walk__free(struct exit_walk *w);

/*
 * The exit() entry of a thread stopped with registers @r, into *@out.
 * -ENOENT when exit() is not in its stack or the stack could not be
 * unwound to it (_exit() called directly, a stripped static program,
 * code without CFI on the way); 0 or -errno.
 */
int exit_walk__find(struct exit_walk *w, const struct arch_regs *r, struct exit_entry *out);

#endif
