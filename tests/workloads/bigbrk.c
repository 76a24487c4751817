// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bigbrk: each way a big block reaches the kernel, for --big-only -p:
 *
 *   heap_mmap_4m        mmap of 4 MiB, anonymous
 *   heap_mremap_8m      that mapping grown to 8 MiB (moved if need be)
 *   heap_malloc_5m      malloc(5 MiB): glibc maps it (5 MiB and a page)
 *   heap_brk_malloc_6m  malloc(6 MiB) with mmap turned off (M_MMAP_MAX 0):
 *                       glibc's main arena grows by sbrk
 *   heap_sbrk_3m        sbrk(3 MiB) of the program's own
 *
 * then unmaps the 8 MiB mapping. Usage: bigbrk DIR [fork]: create
 * DIR/ready, wait for SIGUSR1, do the above (with fork, in a child it
 * waits for), write to DIR/truth the heap growth of the two brk ones
 * ("brk SIZE FUNCTION", as the alerts must say: the malloc's depends on
 * the arena's top), create DIR/done, exit 0 on a second SIGUSR1 (or after
 * 120 s).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "handshake.h"
#include "workload.h"

#define MiB (1024 * 1024)

NOINLINE void *heap_mmap_4m(void)
{
	return mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

NOINLINE void *heap_mremap_8m(void *p)
{
	return mremap(p, 4 * MiB, 8 * MiB, MREMAP_MAYMOVE);
}

NOINLINE void heap_malloc_5m(void)
{
	keep(malloc(5 * MiB));
}

/* How much the heap grew, by the program break before and after. */
NOINLINE size_t heap_brk_malloc_6m(void)
{
	char *before = sbrk(0);

	mallopt(M_MMAP_MAX, 0);
	keep(malloc(6 * MiB));
	return (char *)sbrk(0) - before;
}

NOINLINE void heap_sbrk_3m(void)
{
	keep(sbrk(3 * MiB));
}

static void write_truth(const char *dir, size_t brk_malloc)
{
	char path[4096], line[256];
	int fd, len;

	snprintf(path, sizeof(path), "%s/truth", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	len = snprintf(line, sizeof(line), "brk %zu heap_brk_malloc_6m\nbrk %d heap_sbrk_3m\n",
		       brk_malloc, 3 * MiB);
	if (fd < 0 || write(fd, line, len) != len)
		_exit(2);
	close(fd);
}

/* Each way in turn, the truth written. 0, or 2 if a mapping failed. */
static int big_blocks(const char *dir)
{
	size_t grown;
	void *p;

	p = heap_mmap_4m();
	p = p == MAP_FAILED ? p : heap_mremap_8m(p);
	if (p == MAP_FAILED)
		return 2;
	heap_malloc_5m();
	grown = heap_brk_malloc_6m();
	heap_sbrk_3m();
	munmap(p, 8 * MiB);
	write_truth(dir, grown);
	return 0;
}

int main(int argc, char **argv)
{
	time_t deadline = time(NULL) + 120;
	bool in_child = argc == 3 && !strcmp(argv[2], "fork");
	int err = handshake_start(in_child ? 2 : argc, argv, deadline), status;
	pid_t child;

	if (err)
		return err;
	if (!in_child) {
		err = big_blocks(argv[1]);
	} else {
		child = fork();
		if (!child)
			_exit(big_blocks(argv[1]));
		if (child < 0 || waitpid(child, &status, 0) != child)
			return 2;
		err = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
	}
	if (err)
		return err;
	touch(argv[1], "done");
	return wait_usr1(deadline) ? 1 : 0;
}
