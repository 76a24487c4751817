/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_DEBUGINFOD_H
#define ALLOCTRACE_DEBUGINFOD_H

/*
 * With DEBUGINFOD_URLS set: each lookup bounded in time unless the user
 * bounded it, and the cache in our own user's home. Call before the first
 * lookup and after the traced command has started, which keeps its own
 * environment.
 */
void debuginfod__setup(void);

#endif
