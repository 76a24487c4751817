// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The files a process maps, opened as the process sees them. A process
 * chooses its paths, its mount namespace and what lies at them; nothing
 * it chose is followed outside its root or opened unless it is the very
 * file mapped (docs/reliability.md, "A hostile target").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/safeopen.h"
#include "proc/mapfile.h"

bool mapping__is(const struct mapping *map, const struct stat *st)
{
	return map->inode == st->st_ino && map->dev_major == major(st->st_dev) &&
	       map->dev_minor == minor(st->st_dev);
}

int proc_root__open(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Without map_files (it needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE):
 * /proc/PID/root/PATH would resolve an absolute symlink in the process's
 * tree against our root, to the host's file of that name.
 */
static int mapping__open_in_root(pid_t pid, const struct mapping *map)
{
	struct stat st;
	int root, fd;

	root = proc_root__open(pid);
	if (root < 0)
		return root;
	fd = open_regular(root, map->path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	close(root);
	/* Gone, a loop, a magic link: the path no longer leads to the file. */
	if (fd < 0 && fd != -EACCES && fd != -EPERM && fd != -ENOMEM && fd != -ENOEXEC)
		return -ESTALE;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !mapping__is(map, &st)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int mapping__open(pid_t pid, const struct mapping *map)
{
	char path[PATH_MAX];
	int fd;

	/* Works for deleted files and for other mount namespaces. */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 map->start, map->end);
	fd = open_regular(AT_FDCWD, path, 0);
	/* Another file may now have the name of a deleted one. */
	if (fd >= 0 || map->deleted || !map->path || map->path[0] != '/')
		return fd;
	return mapping__open_in_root(pid, map);
}
