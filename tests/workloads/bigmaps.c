// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bigmaps: the mappings --growth --big alerts on, with their addresses.
 * map_pages maps 8 MiB (whole huge pages: the kernel aligns it to one),
 * 8 MiB and a page, 4 MiB and 1 MiB anonymous; grow_pages moves the
 * 4 MiB one by growing it to 16 MiB. Not alerts: a file mapping and a
 * PROT_NONE reservation. Writes "function address size" to the file
 * argv[1] for each mapping of at least 2 MiB, as the alerts must say.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB (1UL << 20)

static FILE *truth;

static void say(const char *func, void *p, size_t size)
{
	if (p == MAP_FAILED)
		exit(2);
	if (size >= 2 * MiB)
		fprintf(truth, "%s %p %zu\n", func, p, size);
}

__attribute__((noinline)) static void *map_pages(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	say("map_pages", p, size);
	return p;
}

__attribute__((noinline)) static void *grow_pages(void *p, size_t old, size_t size)
{
	/* Mapped top-down, the mappings made before sit just above it: it must move. */
	p = mremap(p, old, size, MREMAP_MAYMOVE);
	say("grow_pages", p, size);
	return p;
}

int main(int argc, char **argv)
{
	int fd = open(argv[0], O_RDONLY);
	void *p;

	truth = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (fd < 0 || !truth)
		return 2;
	map_pages(8 * MiB);
	map_pages(8 * MiB + 4096);
	p = map_pages(4 * MiB);
	map_pages(1 * MiB);
	grow_pages(p, 4 * MiB, 16 * MiB);
	if (mmap(NULL, 8 * MiB, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED ||
	    mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return 2;
	return fclose(truth) ? 2 : 0;
}
