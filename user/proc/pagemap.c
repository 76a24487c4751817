// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "proc/pagemap.h"
#include "proc/procfs.h"

#define PM_PAGE_SIZE 4096ULL
#define PM_PRESENT   (1ULL << 63)
#define PM_SWAPPED   (1ULL << 62)
#define PM_RUN	     512 /* entries per read: 4 KiB of pagemap, 2 MiB of memory */

static enum page_state state_of(uint64_t entry)
{
	if (entry & PM_PRESENT)
		return PAGE_RESIDENT;
	return entry & PM_SWAPPED ? PAGE_SWAPPED : PAGE_GONE;
}

/* Pages from @addrs[0] on that follow each other, at most PM_RUN. */
static size_t run_length(const uint64_t *addrs, size_t n)
{
	size_t len = 1;

	while (len < n && len < PM_RUN && addrs[len] == addrs[0] + len * PM_PAGE_SIZE)
		len++;
	return len;
}

static int read_run(int fd, const uint64_t *addrs, size_t len, enum page_state *states)
{
	uint64_t entries[PM_RUN];
	ssize_t got = pread(fd, entries, len * sizeof(entries[0]),
			    addrs[0] / PM_PAGE_SIZE * sizeof(entries[0]));

	if (got < 0)
		return -errno;
	/*
	 * Nothing at a user address: the process has no memory any more, it
	 * exited and waits to be reaped (on 6.1 its pagemap still opens, and
	 * reads empty). Its pages were not given back: it is gone.
	 */
	if (!got)
		return -ESRCH;
	/* Past the end of the address space reads short: those pages are gone. */
	for (size_t i = 0; i < len; i++)
		states[i] = i < (size_t)got / sizeof(entries[0]) ? state_of(entries[i]) : PAGE_GONE;
	return 0;
}

int pagemap__states(pid_t pid, const uint64_t *addrs, size_t n, enum page_state *states)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/*
	 * Not root, a zombie's pagemap is refused (EACCES), as another
	 * user's is: it is gone all the same.
	 */
	if (fd < 0)
		return errno == ENOENT || (errno == EACCES && proc_gone(pid)) ? -ESRCH : -errno;
	for (size_t i = 0, len; i < n && !err; i += len) {
		len = run_length(addrs + i, n - i);
		err = read_run(fd, addrs + i, len, states + i);
	}
	close(fd);
	return err;
}
