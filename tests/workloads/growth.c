// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --growth's known truth: map_pages touches 64 pages of its own mapping,
 * fill_buffer mallocs and fills 1 MiB (a mapping of 257 pages with
 * glibc's header: its first page is touched by malloc, whose frames the
 * report drops), released touches 32 pages and unmaps them again. Then it
 * stays alive for the reports: argv[1] seconds (default 5). With a
 * directory as argv[2] it does the work only after the -p handshake
 * (handshake.h), so that a tracer attached before sees every page.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "handshake.h"

#define PAGE 4096

static void touch_pages(char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		p[i * PAGE] = 1;
}

__attribute__((noinline)) static char *map_pages(size_t pages)
{
	char *p =
	    mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(2);
	touch_pages(p, pages);
	return p;
}

__attribute__((noinline)) static char *fill_buffer(void)
{
	char *p = malloc(1 << 20);

	if (!p)
		exit(2);
	memset(p, 1, 1 << 20);
	return p;
}

__attribute__((noinline)) static void released(void)
{
	char *p = map_pages(32);

	munmap(p, 32 * PAGE);
}

int main(int argc, char **argv)
{
	volatile char *keep[2];

	if (argc > 2) {
		block_usr1();
		touch(argv[2], "ready");
		if (wait_usr1(time(NULL) + 60))
			return 2;
	}
	keep[0] = map_pages(64);
	keep[1] = fill_buffer();
	released();
	if (argc > 2)
		touch(argv[2], "done");
	sleep(argc > 1 ? atoi(argv[1]) : 5);
	return keep[0][0] + keep[1][0] == 2 ? 0 : 1;
}
