/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_SYMBOLIZE_H
#define ALLOCTRACE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "symbolize/frame.h"

struct symbolizer;

/* Returns NULL with errno set on failure. Reads /proc/PID/maps at once. */
struct symbolizer *symbolizer__new(pid_t pid);
void symbolizer__free(struct symbolizer *s);

/*
 * Reread the target's mappings. If the process is gone the mappings known
 * so far are kept, so a final report after exit still symbolizes.
 * Returns 0 or -errno.
 */
int symbolizer__refresh(struct symbolizer *s);

/*
 * Resolve @addr into at most @max frames: the innermost inlined call
 * first, the containing function last. Returns the number of frames
 * written (at least 1 when @max >= 1; an unresolvable address gives one
 * frame with only addr, and module/offset if mapped).
 *
 * @addr is taken as a return address, as stack unwinding gives: function,
 * inlines and file:line are those of addr - 1, the call instruction, so
 * that the line is the call's and not the next one. frame.addr and
 * frame.offset are still those of @addr itself, and function_offset is
 * @addr minus the symbol's start. Pass a function's own start plus one to
 * name that function.
 */
int symbolizer__resolve(struct symbolizer *s, uint64_t addr, struct frame_info *frames, int max);

#endif
