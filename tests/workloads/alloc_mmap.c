// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_mmap: memory taken straight from the kernel with anonymous mmap,
 * beside glibc malloc's own use of mmap for big blocks. With --mmap the
 * direct calls count as allocations (func "mmap", "mremap"); the mmap,
 * mremap and munmap calls malloc, realloc and free make inside glibc are
 * part of those calls and must not count a second time.
 *
 *   mmap_leak          3 x mmap(1 MiB) kept                 = 3145728 bytes (mmap)
 *   mmap_churn         2 x mmap(64 KiB) + munmap            =       0
 *   mremap_grow        mmap(1 MiB), mremap to 2 MiB, kept   = 2097152 (mremap)
 *   mmap_file          mmap of a file, 128 KiB, kept        =       0 (not anonymous)
 *   big_malloc         malloc(4 MiB), served by mmap, kept  = 4194304 (malloc)
 *   big_realloc        malloc(4 MiB) -> realloc(8 MiB), which
 *                      glibc does with mremap, kept         = 8388608 (realloc)
 *   big_malloc_churn   3 x free(malloc(4 MiB)): munmap      =       0
 *   churn              10,000 malloc/free pairs             =       0
 *
 * With --mmap: 17,825,792 bytes in 6 blocks; 10,013 allocation calls
 * (6 mmap, 1 mremap, 10,005 malloc, 1 realloc), 10,007 releases (2 munmap,
 * 1 mremap, 10,003 free, 1 realloc). Without it the mmap and mremap lines
 * are not there: 12,582,912 bytes in 2 blocks, 10,006 allocation calls,
 * 10,004 releases. Nothing else allocates: no stdio.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "workload.h"

#define KiB (1UL << 10)
#define MiB (1UL << 20)

/* Each function calls mmap itself, so that it is frames[0] of its blocks. */
NOINLINE void mmap_leak(void)
{
	for (int i = 0; i < 3; i++)
		keep(mmap(NULL, 1 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0));
}

NOINLINE void mmap_churn(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = mmap(NULL, 64 * KiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED || munmap(p, 64 * KiB))
			abort();
	}
}

/* Like realloc: the block moves to the mremap call site with its new size. */
NOINLINE void mremap_grow(void)
{
	void *p = mmap(NULL, 1 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	keep(mremap(p, 1 * MiB, 2 * MiB, MREMAP_MAYMOVE));
}

/*
 * A file mapping is not memory the program allocated. 128 KiB, more than
 * the file holds (allowed, as long as the rest is not touched), so that
 * --big 64K would show it if it were counted.
 */
NOINLINE void mmap_file(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		abort();
	keep(mmap(NULL, 128 * KiB, PROT_READ, MAP_PRIVATE, fd, 0));
	close(fd);
}

NOINLINE void big_malloc(void)
{
	keep(malloc(4 * MiB));
}

NOINLINE void big_realloc(void)
{
	char *p = malloc(4 * MiB);

	keep(realloc(p, 8 * MiB));
}

NOINLINE void big_malloc_churn(void)
{
	for (int i = 0; i < 3; i++)
		free(malloc(4 * MiB));
}

int main(void)
{
	/*
	 * A fixed threshold: glibc would otherwise raise it when an mmapped
	 * block is freed, and serve the next 4 MiB from the heap instead.
	 */
	if (!mallopt(M_MMAP_THRESHOLD, 256 * KiB))
		abort();
	mmap_leak();
	mmap_churn();
	mremap_grow();
	mmap_file();
	big_malloc();
	big_realloc();
	big_malloc_churn();
	churn();
	return 0;
}
