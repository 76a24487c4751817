// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probe/linkmap.h"
#include "proc/mapfile.h"
#include "proc/procmaps.h"

/* Bounds for reading another process's loader structures: never trust them. */
#define MAX_DYN_ENTRIES	 1024
#define MAX_LINK_ENTRIES 4096
#define MAX_PHDRS	 256

/* struct r_debug { int r_version; struct link_map *r_map; r_brk; r_state; ... } */
#define R_MAP_OFFSET   8
#define R_BRK_OFFSET   16
#define R_STATE_OFFSET 24

/* glibc's and musl's public struct link_map head, for 64-bit processes. */
struct link_map64 {
	uint64_t l_addr;
	uint64_t l_name;
	uint64_t l_ld;
	uint64_t l_next;
	uint64_t l_prev;
};

static int read_mem(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int read_auxv(pid_t pid, uint64_t *phdr, uint64_t *phnum)
{
	uint64_t aux[2];
	char path[64];
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*phdr = *phnum = 0;
	while (read(fd, aux, sizeof(aux)) == sizeof(aux) && aux[0] != AT_NULL) {
		if (aux[0] == AT_PHDR)
			*phdr = aux[1];
		else if (aux[0] == AT_PHNUM)
			*phnum = aux[1];
	}
	close(fd);
	if (*phdr && *phnum && *phnum <= MAX_PHDRS)
		err = 0;
	return err;
}

/* Where the executable's dynamic section is in memory. */
static int find_dynamic(int mem, uint64_t phdr, uint64_t phnum, uint64_t *dyn)
{
	Elf64_Phdr ph[MAX_PHDRS];
	uint64_t bias = 0, vaddr = 0;
	bool have_bias = false;
	int err;

	err = read_mem(mem, phdr, ph, phnum * sizeof(*ph));
	if (err)
		return err;
	for (uint64_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_PHDR) {
			bias = phdr - ph[i].p_vaddr;
			have_bias = true;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			vaddr = ph[i].p_vaddr;
		}
	}
	if (!have_bias || !vaddr)
		return -ENOENT;
	*dyn = bias + vaddr;
	return 0;
}

static int find_r_debug(int mem, uint64_t dyn, uint64_t *r_debug)
{
	Elf64_Dyn d;
	int err;

	for (int i = 0; i < MAX_DYN_ENTRIES; i++) {
		err = read_mem(mem, dyn + i * sizeof(d), &d, sizeof(d));
		if (err)
			return err;
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_DEBUG && d.d_un.d_ptr) {
			*r_debug = d.d_un.d_ptr;
			return 0;
		}
	}
	return -ENOENT;
}

static char *read_string(int mem, uint64_t addr)
{
	char buf[PATH_MAX];
	ssize_t n;

	if (!addr)
		return strdup("");
	n = pread(mem, buf, sizeof(buf) - 1, (off_t)addr);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

static int walk(int mem, uint64_t r_debug, struct link_names *out)
{
	struct link_map64 lm;
	uint64_t node;
	char **grown;
	int err;

	err = read_mem(mem, r_debug + R_MAP_OFFSET, &node, sizeof(node));
	for (int i = 0; !err && node && i < MAX_LINK_ENTRIES; i++) {
		err = read_mem(mem, node, &lm, sizeof(lm));
		if (err)
			break;
		grown = realloc(out->names, (out->nr + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		out->names = grown;
		out->names[out->nr] = read_string(mem, lm.l_name);
		if (!out->names[out->nr])
			return -ENOMEM;
		out->nr++;
		node = lm.l_next;
	}
	return out->nr ? 0 : -ENOENT;
}

/* @pid's memory (*@mem, to close) and the address of its loader's r_debug. 0 or -errno. */
static int open_r_debug(pid_t pid, int *mem, uint64_t *r_debug)
{
	uint64_t phdr = 0, phnum = 0, dyn;
	char path[64];
	int err;

	err = read_auxv(pid, &phdr, &phnum);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	*mem = open(path, O_RDONLY | O_CLOEXEC);
	if (*mem < 0)
		return -errno;
	err = find_dynamic(*mem, phdr, phnum, &dyn);
	if (!err)
		err = find_r_debug(*mem, dyn, r_debug);
	if (err)
		close(*mem);
	return err;
}

int link_names__read(pid_t pid, struct link_names *out)
{
	uint64_t r_debug;
	int mem, err;

	out->names = NULL;
	out->nr = 0;
	err = open_r_debug(pid, &mem, &r_debug);
	if (err)
		return err;
	err = walk(mem, r_debug, out);
	close(mem);
	if (err)
		link_names__release(out);
	return err;
}

/* The file and offset of the code at @addr, a file mapping of @pid's. */
static int code_file(pid_t pid, uint64_t addr, struct link_watch *w)
{
	const struct mapping *m;
	struct proc_maps pm;
	struct stat st;
	int err;

	err = proc_maps__read(pid, &pm);
	if (err)
		return err;
	m = proc_maps__find(&pm, addr);
	if (!m || !m->exec || !mapping__is_file(m)) {
		err = -ENOENT;
	} else {
		/*
		 * Through the process's own mapping, its mount namespace may be
		 * another; map_files needs CAP_SYS_ADMIN, its root does not, but
		 * a path there may lead out of it (an absolute symlink): only
		 * the file mapped is probed.
		 */
		snprintf(w->path, sizeof(w->path), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		if (access(w->path, R_OK)) {
			snprintf(w->path, sizeof(w->path), "/proc/%d/root%s", pid, m->path);
			if (stat(w->path, &st) || !mapping__is(m, &st))
				err = -ESTALE;
		}
		snprintf(w->name, sizeof(w->name), "%s", m->path);
		w->offset = addr - m->start + m->pgoff;
	}
	proc_maps__release(&pm);
	return err;
}

int link_watch__find(pid_t pid, struct link_watch *w)
{
	uint64_t r_debug, r_brk;
	int mem, err;

	err = open_r_debug(pid, &mem, &r_debug);
	if (err)
		return err;
	err = read_mem(mem, r_debug + R_BRK_OFFSET, &r_brk, sizeof(r_brk));
	close(mem);
	if (!err && !r_brk)
		err = -ENOENT;
	if (!err)
		err = code_file(pid, r_brk, w);
	if (!err)
		w->to_state = (int64_t)(r_debug + R_STATE_OFFSET - r_brk);
	return err;
}

void link_names__release(struct link_names *ln)
{
	for (size_t i = 0; i < ln->nr; i++)
		free(ln->names[i]);
	free(ln->names);
	ln->names = NULL;
	ln->nr = 0;
}
