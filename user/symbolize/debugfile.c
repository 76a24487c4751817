// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where an object's debug information is, trusting nothing the traced
 * process chose: its .gnu_debuglink is a name looked up only in the
 * object's own directory (inside the process's root), its .debug and
 * /usr/lib/debug; every file opened is a regular file (open_regular); its
 * .gnu_debugdata is inflated only within a bound.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/log.h"
#include "lib/safeopen.h"
#include "symbolize/debugfile.h"
#include "symbolize/debuginfod.h"
#include "symbolize/strtab.h"

static int debugfile__find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name);

/* docs/alloctrace.8, "Symbols", says the order. */
const Dwfl_Callbacks debugfile_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = debugfile__find,
    .section_address = dwfl_offline_section_address,
};

/*
 * The build ids, in hex, of objects whose debug information was looked
 * for and not found, shared by all symbolizers while any is alive: a
 * debuginfod query can take DEBUGINFOD_TIMEOUT seconds, and every refresh
 * of a process and every process that maps the object would ask again.
 * And the objects already warned about. Symbolizers are used from one
 * thread only.
 */
static struct strtab missing_debuginfo, warned;
static unsigned int nr_holders;

void debugfile__hold(void)
{
	if (!nr_holders++)
		debuginfod__setup();
}

void debugfile__put(void)
{
	if (--nr_holders)
		return;
	strtab__release(&missing_debuginfo);
	strtab__release(&warned);
}

void debugfile__warn_once(const char *path, const char *why)
{
	if (strtab__has(&warned, path))
		return;
	strtab__intern(&warned, path);
	pr_warn("%s: %s: its frames are left unnamed", path, why);
}

void debugfile__set_root(Dwfl_Module *mod, int root_fd)
{
	void **userdata;

	/* 0 is a descriptor, NULL no root: the userdata is root_fd + 1. */
	if (dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = (void *)(intptr_t)(root_fd + 1);
}

int module__build_id(Dwfl_Module *mod, char hex[2 * MAX_BUILD_ID + 1])
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len, i;

	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0 || len > MAX_BUILD_ID)
		return -ENOENT;
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[bits[i] >> 4];
		hex[2 * i + 1] = digits[bits[i] & 0xf];
	}
	hex[2 * len] = '\0';
	return 0;
}

static bool debuglink__plain(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strlen(name) < NAME_MAX;
}

const char *elf__debuglink(Elf *elf, GElf_Word *crc)
{
	const char *name = dwelf_elf_gnu_debuglink(elf, crc);

	return debuglink__plain(name) ? name : NULL;
}

static uint32_t file_crc(int fd)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return (uint32_t)crc;
}

/* The object's build id if it has one, else the link's CRC, as gdb checks. */
static bool debugfile__matches(Dwfl_Module *mod, int fd, GElf_Word crc)
{
	const unsigned char *want;
	const void *got;
	GElf_Addr vaddr;
	ssize_t len, n;
	Elf *elf;

	len = dwfl_module_build_id(mod, &want, &vaddr);
	if (len <= 0)
		return file_crc(fd) == crc;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &got) : -1;
	n = n == len && !memcmp(got, want, (size_t)len);
	elf_end(elf);
	return n;
}

/* @dir + "/" + @sub + @name, opened at @dirfd with @resolve, if it matches. */
static int debuglink__try(Dwfl_Module *mod, int dirfd, uint64_t resolve, const char *dir,
			  const char *sub, const char *name, GElf_Word crc, char **found)
{
	char path[PATH_MAX];
	int n, fd;

	n = snprintf(path, sizeof(path), "%s/%s%s", dir, sub, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open_regular(dirfd, path, resolve);
	if (fd < 0)
		return fd;
	if (!debugfile__matches(mod, fd, crc)) {
		close(fd);
		return -ENOENT;
	}
	*found = strdup(path);
	return fd;
}

/*
 * @file_name is the object's path in its process's mount namespace:
 * its directory is looked up in that root, never above it.
 */
static int debuglink__find(Dwfl_Module *mod, int root_fd, const char *file_name, const char *name,
			   GElf_Word crc, char **found)
{
	const uint64_t in_root = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	char dir[PATH_MAX], debug_dir[PATH_MAX];
	const char *slash;
	int fd = -ENOENT;

	slash = file_name ? strrchr(file_name, '/') : NULL;
	if (!debuglink__plain(name) || !slash || file_name[0] != '/' ||
	    (size_t)(slash - file_name) >= sizeof(dir))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file_name), file_name);
	if (root_fd >= 0) {
		fd = debuglink__try(mod, root_fd, in_root, dir, "", name, crc, found);
		if (fd < 0)
			fd =
			    debuglink__try(mod, root_fd, in_root, dir, ".debug/", name, crc, found);
	}
	if (fd < 0 && snprintf(debug_dir, sizeof(debug_dir), "/usr/lib/debug%s", dir) <
			  (int)sizeof(debug_dir))
		fd = debuglink__try(mod, AT_FDCWD, RESOLVE_NO_MAGICLINKS, debug_dir, "", name, crc,
				    found);
	return fd;
}

/*
 * By build id under /usr/lib/debug/.build-id (libdwfl looks only in
 * absolute directories, root's), then by debug link, then from debuginfod:
 * libdwfl's standard search without a file name or link, which then skips
 * its own search by path and asks debuginfod. Each object's failure is
 * remembered by its build id.
 */
static int debugfile__find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int root_fd = (int)(intptr_t)*userdata - 1;
	char id[2 * MAX_BUILD_ID + 1];
	bool has_id = !module__build_id(mod, id);
	int fd;

	if (has_id && strtab__has(&missing_debuginfo, id)) {
		errno = ENOENT;
		return -1;
	}
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd < 0)
		fd = debuglink__find(mod, root_fd, file_name, debuglink_file, debuglink_crc,
				     debuginfo_file_name);
	if (fd < 0 && has_id) {
		errno = 0;
		fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0,
						  debuginfo_file_name);
	}
	if (fd < 0 && has_id)
		strtab__intern(&missing_debuginfo, id);
	if (fd < 0)
		errno = ENOENT;
	return fd < 0 ? -1 : fd;
}

static Elf_Scn *elf__section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr shdr;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Inflate into a scratch buffer, counting, never keeping more than it. */
static int xz__check_size(const void *in, size_t len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	static uint8_t scratch[65536];
	lzma_ret ret;

	if (lzma_stream_decoder(&strm, DEBUGDATA_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = len;
	do {
		strm.next_out = scratch;
		strm.avail_out = sizeof(scratch);
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK && strm.total_out <= DEBUGDATA_MAX);
	lzma_end(&strm);
	if (ret == LZMA_STREAM_END && strm.total_out <= DEBUGDATA_MAX)
		return 0;
	return ret == LZMA_OK || ret == LZMA_MEMLIMIT_ERROR ? -EFBIG : -EBADMSG;
}

int elf__check_debugdata(Elf *elf)
{
	Elf_Scn *scn = elf__section(elf, ".gnu_debugdata");
	Elf_Data *data;

	if (!scn)
		return 0;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		return -EBADMSG;
	return xz__check_size(data->d_buf, data->d_size);
}
