/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ELFSYM_H
#define ALLOCTRACE_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An ELF object opened to find where functions are. */
struct elf_file;

/*
 * Returns NULL with errno set (ENOEXEC for a file that is not whole, valid
 * ELF, or no regular file: open_regular() opens it).
 */
struct elf_file *elf_file__open(const char *path);

/* The same for an open descriptor, which it takes, even on failure. */
struct elf_file *elf_file__from_fd(int fd);
void elf_file__close(struct elf_file *ef);

/*
 * Look up @n defined function symbols by name in one pass over .dynsym and
 * .symtab. addrs[i] is the address of names[i], or 0 when not defined, and
 * sizes[i] (unless @sizes is NULL) its symbol's size, 0 when unknown.
 * Returns how many were found, or -errno.
 */
int elf_file__find_funcs(struct elf_file *ef, const char *const *names, size_t n, uint64_t *addrs,
			 uint64_t *sizes);

/* File offset of a virtual address in a loadable segment: 0 or -ENOENT. */
int elf_file__vaddr_to_offset(struct elf_file *ef, uint64_t vaddr, uint64_t *offset);

/* Copy up to @len bytes of the file's content at @vaddr. Bytes copied or -errno. */
long elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

/* True when the object asks for a dynamic loader (PT_INTERP). */
bool elf_file__has_interp(struct elf_file *ef);

#endif
