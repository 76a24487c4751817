/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OBJFILE_H
#define ALLOCTRACE_OBJFILE_H

#include <libelf.h>
#include <stdint.h>
#include "proc/mapfile.h"

/* @elf's load bias in the process, from the segment that @map maps. 0 or -errno. */
int elf__load_bias(Elf *elf, const struct mapping *map, uint64_t *bias);

/*
 * A descriptor of the vDSO a process maps as @map ("[vdso]"): a copy of
 * alloctrace's own, the kernel's same image, or -errno (-ENOENT when @map
 * is not that size).
 */
int vdso__open(const struct mapping *map);

#endif
