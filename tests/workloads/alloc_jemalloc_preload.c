// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_jemalloc_preload: a plain program (no -ljemalloc) whose allocator
 * is whatever symbol lookup gives it: glibc's, or jemalloc's when run with
 * LD_PRELOAD=libjemalloc.so.2, which comes before libc in lookup order.
 * The leaks are the same either way:
 *
 *   leak_malloc           30 x malloc(100)                =  3000 bytes
 *   leak_calloc            4 x calloc(10, 50)              =  2000
 *   leak_realloc           3 x 10 -> 5000 (realloc)        = 15000
 *   leak_posix_memalign    2 x posix_memalign(4096, 3000)  =  6000
 *   leak_memalign          2 x memalign(64, 700)           =  1400
 *   leak_aligned_alloc     3 x aligned_alloc(256, 512)     =  1536
 *   churn                 10,000 malloc/free pairs         =     0
 *
 * In all 28,936 bytes in 44 blocks; 10,047 allocation calls, 10,003
 * releases. Nothing else allocates: no stdio.
 *
 * Usage:
 *   alloc_jemalloc_preload             leak and exit 0
 *   alloc_jemalloc_preload DIR         for -p: create DIR/ready, wait for
 *                                      SIGUSR1, leak, create DIR/done, exit
 *                                      0 on a second SIGUSR1 (it ends itself
 *                                      after 120 s, so that a broken test
 *                                      cannot leave it behind)
 *   alloc_jemalloc_preload --is-jemalloc
 *                                      exit 0 if jemalloc provides malloc,
 *                                      1 if not (checks the test's setup)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include "handshake.h"
#include "workload.h"

NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 3; i++) {
		char *p = malloc(10);

		keep(realloc(p, 5000));
	}
}

NOINLINE void leak_posix_memalign(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = NULL;

		if (posix_memalign(&p, 4096, 3000))
			abort();
		keep(p);
	}
}

/* glibc's memalign and aligned_alloc start with a single-stepped cmpb: probed past it. */
NOINLINE void leak_memalign(void)
{
	for (int i = 0; i < 2; i++)
		keep(memalign(64, 700));
}

NOINLINE void leak_aligned_alloc(void)
{
	for (int i = 0; i < 3; i++)
		keep(aligned_alloc(256, 512));
}

static void leak_all(void)
{
	leak_malloc(30, 100);
	leak_calloc(4, 10, 50);
	leak_realloc();
	leak_posix_memalign();
	leak_memalign();
	leak_aligned_alloc();
	churn();
}

/*
 * Which object's malloc the program calls: the one that defines it first
 * in lookup order. Only jemalloc's has mallocx beside it.
 */
static int is_jemalloc(void)
{
	Dl_info info;

	if (!dladdr((void *)malloc, &info) || !info.dli_fname)
		return 0;
	return strstr(info.dli_fname, "libjemalloc") != NULL;
}

/* The -p handshake of handshake.h, without target.c's pre-attach blocks. */
static int wait_and_leak(const char *dir)
{
	time_t deadline = time(NULL) + 120;

	block_usr1();
	touch(dir, "ready");
	if (wait_usr1(deadline))
		return 1;
	leak_all();
	touch(dir, "done");
	return wait_usr1(deadline) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--is-jemalloc"))
		return !is_jemalloc();
	if (argc > 1)
		return wait_and_leak(argv[1]);
	leak_all();
	return 0;
}
