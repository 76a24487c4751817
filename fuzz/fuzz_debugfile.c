// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: an ELF image a traced process could map, read as the
 * symbolizer reads what it names: its .gnu_debuglink (only a plain file
 * name may come out), its .gnu_debugdata (inflated within DEBUGDATA_MAX,
 * never kept) and its build-id note. Malformed input must fail cleanly.
 */
#include <elfutils/libdwelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/debugfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const void *id;
	const char *name;
	GElf_Word crc;
	char *copy;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	/* libelf may write into the image it parses: a copy of our own. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (elf) {
		name = elf__debuglink(elf, &crc);
		if (name && (strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, ".")))
			abort();
		elf__check_debugdata(elf);
		dwelf_elf_gnu_build_id(elf, &id);
		elf_end(elf);
	}
	free(copy);
	return 0;
}
