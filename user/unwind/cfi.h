/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_CFI_H
#define ALLOCTRACE_CFI_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "alloctrace.h"

/*
 * An object's call frame information as the BPF unwinder reads it: rows
 * sorted by address, and for each page of text the index of the row in
 * effect at its start, so that a lookup searches one page's rows only.
 */
struct cfi_table {
	uint64_t base; /* ELF address that row pcs count from (page aligned) */
	struct unwind_row *rows;
	size_t nr_rows;
	uint32_t *pages; /* nr_pages + 1 entries: the last bounds the last page */
	size_t nr_pages;
};

/*
 * Build @t from @elf's .eh_frame, and from its .debug_frame where
 * .eh_frame has no FDE, for @elf's machine (unwind/cfi_arch.h). Code at the entry point that no FDE
 * covers (the dynamic loader's _start and _dl_start_user) is the outermost frame. Returns 0,
 * -ENOTSUP for a machine without a walker, -ENOENT when the object has no usable CFI, -EINVAL when
 * a CFA program is refused (cfi_for_each_fde()), or -errno.
 */
int cfi_table__build(Elf *elf, struct cfi_table *t);
/*
 * As cfi_table__build(), for objects of ELF machine @machine only (the
 * loader's own, the BPF walker's): another's (code a qemu-user guest
 * maps) gets -ENOTSUP, and its frames frame pointers.
 */
int cfi_table__build_for(Elf *elf, unsigned int machine, struct cfi_table *t);
void cfi_table__release(struct cfi_table *t);

/* The addresses one FDE covers, [start, end). */
struct cfi_fde {
	uint64_t start;
	uint64_t end;
};

typedef int (*cfi_fde_fn)(const struct cfi_fde *fde, void *arg);

/*
 * Vet every CFA program in @elf's @section (".eh_frame" or
 * ".debug_frame"): each must be one this project understands and name only
 * registers x86-64 or arm64 has (cfi_check.c), so that libdw may run them. Each
 * FDE's range goes to @fn (which may be NULL). 0; -EINVAL when a program is
 * refused; -ENOENT when there is no such section to read; or what @fn
 * returned when not 0.
 */
int cfi_for_each_fde(Elf *elf, const char *section, cfi_fde_fn fn, void *arg);

#endif
