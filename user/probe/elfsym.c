// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/safeopen.h"
#include "probe/elfsym.h"

struct elf_file {
	int fd;
	Elf *elf;
};

/*
 * libelf quietly drops section headers that lie past the end of the file,
 * so a truncated object would pass for one that defines nothing.
 */
static bool complete(Elf *elf, int fd)
{
	struct stat st;
	GElf_Ehdr eh;
	size_t nr_phdrs;
	uint64_t room;

	if (fstat(fd, &st) || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nr_phdrs))
		return false;
	if (eh.e_shoff > (uint64_t)st.st_size)
		return false;
	room = st.st_size - eh.e_shoff;
	return !eh.e_shentsize || room / eh.e_shentsize >= eh.e_shnum;
}

struct elf_file *elf_file__from_fd(int fd)
{
	struct elf_file *ef;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		goto err_close;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		goto err_close;
	ef->fd = fd;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !complete(ef->elf, ef->fd)) {
		elf_end(ef->elf);
		free(ef);
		errno = ENOEXEC;
		goto err_close;
	}
	return ef;

err_close:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

struct elf_file *elf_file__open(const char *path)
{
	int fd = open_regular(AT_FDCWD, path, 0);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return elf_file__from_fd(fd);
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	elf_end(ef->elf);
	close(ef->fd);
	free(ef);
}

static bool is_defined_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_value;
}

static void match_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, const char *const *names,
			  size_t n, uint64_t *addrs, uint64_t *sizes)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count, i, j;
	const char *name;
	GElf_Sym sym;

	if (!data || !shdr->sh_entsize)
		return;
	count = shdr->sh_size / shdr->sh_entsize;
	for (i = 0; i < count; i++) {
		if (!gelf_getsym(data, i, &sym) || !is_defined_func(&sym))
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name)
			continue;
		for (j = 0; j < n; j++) {
			if (addrs[j] || strcmp(name, names[j]))
				continue;
			addrs[j] = sym.st_value;
			if (sizes)
				sizes[j] = sym.st_size;
		}
	}
}

int elf_file__find_funcs(struct elf_file *ef, const char *const *names, size_t n, uint64_t *addrs,
			 uint64_t *sizes)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int found = 0;
	size_t i;

	memset(addrs, 0, n * sizeof(*addrs));
	if (sizes)
		memset(sizes, 0, n * sizeof(*sizes));
	/* .dynsym first: the exported definition is the one callers reach. */
	for (int pass = 0; pass < 2; pass++) {
		Elf32_Word want = pass ? SHT_SYMTAB : SHT_DYNSYM;

		while ((scn = elf_nextscn(ef->elf, scn))) {
			if (gelf_getshdr(scn, &shdr) && shdr.sh_type == want)
				match_symbols(ef->elf, scn, &shdr, names, n, addrs, sizes);
		}
	}
	for (i = 0; i < n; i++)
		found += addrs[i] != 0;
	return found;
}

static int find_segment(struct elf_file *ef, uint64_t vaddr, GElf_Phdr *out)
{
	size_t i, nr;

	if (elf_getphdrnum(ef->elf, &nr))
		return -ENOEXEC;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(ef->elf, i, out) || out->p_type != PT_LOAD)
			continue;
		if (vaddr >= out->p_vaddr && vaddr < out->p_vaddr + out->p_filesz)
			return 0;
	}
	return -ENOENT;
}

int elf_file__vaddr_to_offset(struct elf_file *ef, uint64_t vaddr, uint64_t *offset)
{
	GElf_Phdr phdr;
	int err = find_segment(ef, vaddr, &phdr);

	if (err)
		return err;
	*offset = vaddr - phdr.p_vaddr + phdr.p_offset;
	return 0;
}

long elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t offset;
	GElf_Phdr phdr;
	ssize_t ret;
	int err;

	err = find_segment(ef, vaddr, &phdr);
	if (err)
		return err;
	offset = vaddr - phdr.p_vaddr + phdr.p_offset;
	if (len > phdr.p_vaddr + phdr.p_filesz - vaddr)
		len = phdr.p_vaddr + phdr.p_filesz - vaddr;
	ret = pread(ef->fd, buf, len, offset);
	return ret < 0 ? -errno : ret;
}

bool elf_file__has_interp(struct elf_file *ef)
{
	GElf_Phdr phdr;
	size_t i, nr;

	if (elf_getphdrnum(ef->elf, &nr))
		return false;
	for (i = 0; i < nr; i++) {
		if (gelf_getphdr(ef->elf, i, &phdr) && phdr.p_type == PT_INTERP)
			return true;
	}
	return false;
}
