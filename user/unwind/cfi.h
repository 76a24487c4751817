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
	uint64_t base;		/* ELF address that row pcs count from (page aligned) */
	struct unwind_row *rows;
	size_t nr_rows;
	uint32_t *pages;	/* nr_pages + 1 entries: the last bounds the last page */
	size_t nr_pages;
};

/*
 * Build @t from @elf's .eh_frame, found through its .eh_frame_hdr.
 * Returns 0, -ENOENT when the object has no usable CFI, -EINVAL when
 * cfi_check() refuses it, or -errno.
 */
int cfi_table__build(Elf *elf, struct cfi_table *t);
void cfi_table__release(struct cfi_table *t);

/*
 * 0 when every CFA program in @elf's .eh_frame is one this project
 * understands and names only registers x86-64 has (cfi_check.c), so that
 * libdw may run them; -EINVAL when one is not, -ENOENT when there is no
 * .eh_frame section to read.
 */
int cfi_check(Elf *elf);

/* Bytes of a DW_EH_PE value format, or 0 for those it does not take (uleb, omit). */
size_t cfi_encoded_size(uint8_t enc);

#endif
