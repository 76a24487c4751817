/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_MAPFILE_H
#define ALLOCTRACE_MAPFILE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "proc/procmaps.h"

/*
 * Open the regular file behind @map as process @pid sees it: through
 * /proc/PID/map_files, else by its path resolved inside the process's
 * root (never on the way out of it, through no magic link), and only if
 * its device and inode are the mapping's. A descriptor, or -errno:
 * -ESTALE when the path no longer leads to that file (another file,
 * none, a symlink loop), -ENOEXEC when it names no regular file.
 */
int mapping__open(pid_t pid, const struct mapping *map);

/* Whether @st is the file that @map maps. */
bool mapping__is(const struct mapping *map, const struct stat *st);

/*
 * An O_PATH descriptor of process @pid's root directory, for opening the
 * files it names as it would (open_regular() with RESOLVE_IN_ROOT), or
 * -errno.
 */
int proc_root__open(pid_t pid);

#endif
