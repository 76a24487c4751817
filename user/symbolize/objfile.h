/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OBJFILE_H
#define ALLOCTRACE_OBJFILE_H

#include <libelf.h>
#include <stdint.h>
#include <sys/types.h>
#include "proc/procmaps.h"

/*
 * Open the regular file behind @map as process @pid sees it (through
 * /proc/PID/map_files, else /proc/PID/root), deleted or in another mount
 * namespace. A descriptor, or -errno.
 */
int mapping__open(pid_t pid, const struct mapping *map);

/* @elf's load bias in the process, from the segment that @map maps. 0 or -errno. */
int elf__load_bias(Elf *elf, const struct mapping *map, uint64_t *bias);

#endif
