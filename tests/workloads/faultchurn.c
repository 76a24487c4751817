// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --growth's sampled mode (issue 23): a server that maps a buffer per
 * request, as Apache's mod_deflate does, and faults faster than the
 * tracer's first-touch budget. Each of argv[1] requests maps, fills and
 * unmaps CHURN_PAGES pages (serve_request) and touches one page more of a
 * region it keeps (keep_page): argv[1] pages stay resident at the end, the
 * churned ones none. Then it stays alive argv[2] seconds (default 2).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE	    4096
#define CHURN_PAGES 24

__attribute__((noinline)) static void serve_request(void)
{
	char *p = mmap(NULL, CHURN_PAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(2);
	for (size_t i = 0; i < CHURN_PAGES; i++)
		p[i * PAGE] = 1;
	munmap(p, CHURN_PAGES * PAGE);
}

__attribute__((noinline)) static void keep_page(volatile char *kept, size_t i)
{
	kept[i * PAGE] = 1;
}

int main(int argc, char **argv)
{
	size_t requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 16384;
	char *kept =
	    mmap(NULL, requests * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (kept == MAP_FAILED)
		return 2;
	/* One fault per page, as the truth counts them: a huge page would map 512 at once. */
	madvise(kept, requests * PAGE, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < requests; i++) {
		serve_request();
		keep_page(kept, i);
	}
	sleep(argc > 2 ? atoi(argv[2]) : 2);
	return kept[0] == 1 ? 0 : 1;
}
