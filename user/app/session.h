/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_SESSION_H
#define ALLOCTRACE_SESSION_H

#include "cli/options.h"

/*
 * One tracing run: find the target and its allocator, attach, report every
 * interval and once more at the end. Returns an exit code (enum exit_code).
 */
int session__run(const struct options *opts);

#endif
