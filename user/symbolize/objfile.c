// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where the objects a process maps are loaded: what the symbolizer and the
 * unwind tables both need.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "proc/procmaps.h"
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

/* Our own [vdso] mapping, once: 0 or -errno. */
static int own_vdso(struct mapping *out)
{
	static struct mapping vdso;
	static int err = 1;
	struct proc_maps maps;
	size_t i;

	if (err > 0) {
		err = proc_maps__read(getpid(), &maps);
		for (i = 0; !err && i < maps.nr; i++)
			if (maps.maps[i].path && !strcmp(maps.maps[i].path, "[vdso]"))
				break;
		if (!err && i == maps.nr)
			err = -ENOENT;
		if (!err)
			vdso =
			    (struct mapping){.start = maps.maps[i].start, .end = maps.maps[i].end};
		proc_maps__release(&maps);
	}
	*out = vdso;
	return err;
}

/*
 * The vDSO is in memory only, with no file to open: libdwfl is given a
 * copy of ours. A process of our architecture maps the kernel's one image
 * of it, so it is not read from the target (whose memory it controls); a
 * mapping of another size is another image, and left unnamed.
 */
int vdso__open(const struct mapping *map)
{
	struct mapping own;
	size_t size, done;
	ssize_t n;
	int fd, err;

	err = own_vdso(&own);
	if (err)
		return err;
	size = own.end - own.start;
	if (map->end - map->start != size)
		return -ENOENT;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (done = 0; done < size; done += (size_t)n) {
		n = write(fd, (const char *)(uintptr_t)own.start + done, size - done);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0) {
			err = n ? -errno : -EIO;
			close(fd);
			return err;
		}
	}
	return fd;
}
