// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --growth past the first-touch budget at once (issue 43): touch_burst
 * touches argv[1] MiB (default 32: 8,192 pages, twice the budget's 4,096
 * tokens) of a mapping of its own in one go and keeps it. Then it stays
 * alive argv[2] seconds (default 2), so that a report reads them resident.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

__attribute__((noinline)) static void touch_burst(volatile char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		p[i * PAGE] = 1;
}

int main(int argc, char **argv)
{
	size_t pages = (argc > 1 ? strtoul(argv[1], NULL, 10) : 32) << 20 >> 12;
	char *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 2;
	/* One fault per page, as the truth counts them: a huge page would map 512 at once. */
	madvise(p, pages * PAGE, MADV_NOHUGEPAGE);
	touch_burst(p, pages);
	sleep(argc > 2 ? atoi(argv[2]) : 2);
	return p[0] == 1 ? 0 : 1;
}
