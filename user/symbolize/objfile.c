// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where the objects a process maps are loaded: what the symbolizer and the
 * unwind tables both need.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <unistd.h>
#include "symbolize/objfile.h"

/*
 * The load bias from the segment that @map maps, rather than from the
 * first segment: a mapping need not hold the first segment, and ELF
 * addresses need not start at 0.
 */
int elf__load_bias(Elf *elf, const struct mapping *map, uint64_t *bias)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	GElf_Phdr ph;
	size_t i, nr;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nr))
		return -ENOEXEC;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (map->pgoff < (ph.p_offset & ~(page - 1)) ||
		    map->pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = map->start - (map->pgoff + ph.p_vaddr - ph.p_offset);
		return 0;
	}
	return -ENOEXEC;
}
