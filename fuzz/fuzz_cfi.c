// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: an object's call frame information. The input is read
 * as an ELF image in memory and turned into unwind rows; malformed and
 * truncated .eh_frame_hdr and .eh_frame must fail cleanly, and a table
 * that builds must be one the BPF side can binary-search: rows strictly
 * sorted, every page index entry a row of the table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/cfi.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	elf_version(EV_CURRENT);
	return 0;
}

static void check_table(const struct cfi_table *t)
{
	if (!t->nr_rows || !t->pages || t->rows[0].pc >= (1U << UNWIND_PAGE_SHIFT))
		abort();
	for (size_t i = 1; i < t->nr_rows; i++)
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			abort();
	for (size_t i = 0; i <= t->nr_pages; i++)
		if (t->pages[i] >= t->nr_rows || (i && t->pages[i] < t->pages[i - 1]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* libelf may write to the image it reads: hand it a copy. */
	char *image = malloc(size ? size : 1);
	struct cfi_table t;
	Elf *elf;

	if (!image)
		return 0;
	memcpy(image, data, size);
	elf = elf_memory(image, size);
	if (elf && !cfi_table__build(elf, &t)) {
		check_table(&t);
		cfi_table__release(&t);
	}
	if (elf)
		elf_end(elf);
	free(image);
	return 0;
}
