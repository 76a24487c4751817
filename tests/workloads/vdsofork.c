// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A forked child's first vDSO calls (issue 23, item 5): the child calls
 * time() and clock_gettime(), whose code and data pages (the kernel's
 * [vdso] and [vvar]) it faults in as fork did not copy them; then
 * clock_gettime() writes the first byte of a fresh page (vdso_touch: a
 * stack that starts in [vdso]) and child_pages touches 8 pages: 9 pages
 * of growth, all of it: no malloc, no stdio. It creates DIR/ready and
 * stays until DIR/done exists (or 60 s), so that its pages are resident
 * at a report.
 * Usage: vdsofork DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES 8

static __attribute__((noinline)) void child_pages(void)
{
	char *p =
	    mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		memset(p, 1, PAGES * 4096);
}

/* The vDSO's own code makes the first touch of a fresh page: its stack starts in [vdso]. */
static __attribute__((noinline)) int vdso_touch(void)
{
	struct timespec *ts =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return ts == MAP_FAILED || clock_gettime(CLOCK_MONOTONIC, ts) ? -1 : 0;
}

static void wait_file(const char *path)
{
	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		usleep(10 * 1000);
}

int main(int argc, char **argv)
{
	char path[4096];
	struct timespec ts;
	pid_t child;
	int status;

	if (argc != 2) {
		fprintf(stderr, "usage: vdsofork DIR\n");
		return 2;
	}
	child = fork();
	if (!child) {
		if (time(NULL) < 0 || clock_gettime(CLOCK_MONOTONIC, &ts))
			_exit(1);
		if (vdso_touch())
			_exit(1);
		child_pages();
		snprintf(path, sizeof(path), "%s/ready", argv[1]);
		close(open(path, O_CREAT | O_WRONLY, 0600));
		snprintf(path, sizeof(path), "%s/done", argv[1]);
		wait_file(path);
		_exit(0);
	}
	return child < 0 || waitpid(child, &status, 0) != child || status;
}
