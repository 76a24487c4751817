// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: an ELF file. The input is written to a memfd that
 * elf_file__open opens as /proc/self/fd/N; then the lookups allocator.c
 * makes: malloc and free (and a few more), their file offsets, the first
 * bytes of their code, PT_INTERP. Malformed and truncated files must fail
 * cleanly. libelf itself is not instrumented: coverage comes from elfsym.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "probe/elfsym.h"

static int fd = -1;
static char path[64];

static const char *const names[] = {
    "malloc", "free", "calloc", "je_malloc", "_Znwm", "mmap",
};
#define NR_NAMES (sizeof(names) / sizeof(names[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

static void check_read(struct elf_file *ef, uint64_t vaddr, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	uint64_t offset;
	long got;

	if (!buf)
		return;
	if (!elf_file__vaddr_to_offset(ef, vaddr, &offset)) {
		got = elf_file__read(ef, vaddr, buf, len);
		if (got > (long)len)
			abort();
	} else if (elf_file__read(ef, vaddr, buf, len) >= 0) {
		/* Both look the address up in the same segments. */
		abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addrs[NR_NAMES], vaddr;
	struct elf_file *ef;
	size_t i;
	int found;

	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	ef = elf_file__open(path);
	if (!ef) {
		if (errno != ENOEXEC && errno != ENOMEM)
			abort();
		return 0;
	}
	found = elf_file__find_funcs(ef, names, NR_NAMES, addrs, NULL);
	if (found < 0 || found > (int)NR_NAMES)
		abort();
	for (i = 0; i < NR_NAMES; i++) {
		if (!addrs[i])
			continue;
		check_read(ef, addrs[i], 16);
		check_read(ef, addrs[i], 4096);
	}
	/* Addresses from the input: entry point, section and segment fields. */
	for (i = 0; i + sizeof(vaddr) <= size && i < 16 * sizeof(vaddr); i += sizeof(vaddr)) {
		memcpy(&vaddr, data + i, sizeof(vaddr));
		check_read(ef, vaddr, 16);
	}
	check_read(ef, 0, 16);
	check_read(ef, UINT64_MAX, 16);
	(void)elf_file__has_interp(ef);
	elf_file__close(ef);
	return 0;
}
