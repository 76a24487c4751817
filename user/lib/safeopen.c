// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one way alloctrace opens a file that a traced process chose: its
 * mapped objects and the debug files their sections name.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/safeopen.h"

static int open_path(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = resolve};
	int fd;

	if (!resolve)
		fd = openat(dirfd, path, (int)how.flags);
	else
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/*
 * An O_PATH descriptor opens nothing: no FIFO waits for a writer, no
 * driver's open() runs (a watchdog starts on open). Only once fstat()
 * says regular file is the same inode opened for reading, through the
 * descriptor's /proc/self/fd link, which names that inode and no path,
 * so no rename in between can swap it. O_NONBLOCK, cleared afterwards, is
 * the second belt: should anything but a regular file get this far, open
 * still returns.
 */
int open_regular(int dirfd, const char *path, uint64_t resolve)
{
	char self[64];
	struct stat st;
	int pfd, fd, err;

	pfd = open_path(dirfd, path, resolve);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st)) {
		err = -errno;
		close(pfd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return -ENOEXEC;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	if (fcntl(fd, F_SETFL, 0)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
