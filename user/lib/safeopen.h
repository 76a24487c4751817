/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_SAFEOPEN_H
#define ALLOCTRACE_SAFEOPEN_H

#include <stdint.h>

/*
 * Open @path (relative to @dirfd, or absolute) for reading, only if it is
 * a regular file, without blocking and without opening anything else on
 * the way: a FIFO would block open() forever, a device would spin reads
 * or act on open. @resolve holds openat2()'s RESOLVE_* flags (0 for
 * none). A descriptor, or -errno (-ENOEXEC for a file that is no regular
 * file).
 */
int open_regular(int dirfd, const char *path, uint64_t resolve);

#endif
