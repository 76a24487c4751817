// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The objects a process maps, opened as the process sees them, and where
 * they are loaded: what the symbolizer and the unwind tables both need.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/objfile.h"

static int mapping__open_path(pid_t pid, const struct mapping *map)
{
	char path[PATH_MAX];
	int fd;

	/* Works for deleted files and for other mount namespaces. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 map->start, map->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* Another file may now have the name of a deleted one. */
	if (fd >= 0 || map->deleted)
		return fd;
	if (snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, map->path) <
	    (int)sizeof(path))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(map->path, O_RDONLY | O_CLOEXEC);
	return fd;
}

int mapping__open(pid_t pid, const struct mapping *map)
{
	struct stat st;
	int fd;

	fd = mapping__open_path(pid, map);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

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
