// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Output files a hostile local user cannot read, redirect or plant: see
 * outfile.h. Without this, a 0666 file an ordinary user made at the
 * path in /tmp was reused, owner and mode kept, and a symbolic link
 * anywhere above the file was followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "export/outfile.h"
#include "lib/log.h"

#define WHY_MAX	     (PATH_MAX + 200)
#define NOT_FOLLOWED "a symbolic link, which alloctrace does not follow"

/*
 * Whether anyone but root and the caller could rename, remove or plant
 * entries of the directory @fd (shown as @name): its owner is someone
 * else, or group or others may write it and it is not sticky.
 */
static int dir_check(int fd, const char *name, char *why, size_t size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, size,
			 "%s is another user's (uid %u), who could swap its files: alloctrace "
			 "writes only where no one but root and you can",
			 name, (unsigned int)st.st_uid);
		return -EPERM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, size,
			 "%s is writable by others and not sticky, so they could swap its files: "
			 "alloctrace writes only where no one but root and you can",
			 name);
		return -EPERM;
	}
	return 0;
}

/* The next directory @comp of @fd, which is closed; no symbolic link. fd or -errno. */
static int walk_step(int fd, const char *comp, const char *shown, char *why, size_t size)
{
	int next = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int err = next < 0 ? -errno : 0;

	close(fd);
	if (!err && fstat(next, &st))
		err = -errno;
	else if (!err && S_ISLNK(st.st_mode)) {
		snprintf(why, size, "%s is " NOT_FOLLOWED, shown);
		err = -ELOOP;
	} else if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (!err)
		err = dir_check(next, shown, why, size);
	if (err && next >= 0)
		close(next);
	return err ? err : next;
}

/*
 * The directory @dir from "/", one component at a time (relative to the
 * working directory's real path), each checked. O_PATH fd or -errno.
 */
static int walk(const char *dir, char *why, size_t size)
{
	char path[PATH_MAX], shown[PATH_MAX] = "", *comp, *save;
	size_t len = 0;
	int fd;

	if (*dir == '/')
		path[0] = '\0';
	else if (!getcwd(path, sizeof(path)))
		return -errno;
	len = strlen(path);
	if (snprintf(path + len, sizeof(path) - len, "/%s", dir) >= (int)(sizeof(path) - len))
		return -ENAMETOOLONG;
	len = 0;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dir_check(fd, "/", why, size)) {
		close(fd);
		return -EPERM;
	}
	for (comp = strtok_r(path, "/", &save); comp && fd >= 0;
	     comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, "."))
			continue;
		len += snprintf(shown + len, sizeof(shown) - len, "/%s", comp);
		fd = walk_step(fd, comp, shown, why, size);
	}
	return fd;
}

/* @path's directory into @dir and its last component into @base. 0 or -errno. */
static int split(const char *path, char *dir, char *base)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;

	if (strlen(path) >= PATH_MAX || strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EISDIR;
	strcpy(base, name);
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else
		snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path);
	return 0;
}

/*
 * What is at the name now may only be replaced: not a link, a directory,
 * a FIFO or a device, nor a file of /proc or /sys, which take what is
 * written to them as settings; and in a sticky directory, not another
 * user's file, which the kernel lets only root or its owner replace.
 */
static int check_entry(const struct out_file *o, char *why, size_t size)
{
	struct statfs fs;
	struct stat st, dir;

	if (fstatfs(o->dir_fd, &fs) || fstat(o->dir_fd, &dir))
		return -errno;
	if (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC) {
		snprintf(why, size, "it is a file of /proc or /sys, not one to write a report to");
		return -EINVAL;
	}
	if (fstatat(o->dir_fd, o->base, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		snprintf(why, size, "it is " NOT_FOLLOWED);
	else if (S_ISDIR(st.st_mode))
		return -EISDIR;
	else if (!S_ISREG(st.st_mode))
		snprintf(why, size, "it is not a regular file");
	else if (st.st_uid != geteuid() && geteuid() && dir.st_uid != geteuid())
		snprintf(why, size,
			 "it is another user's file (uid %u) in a sticky directory, which only "
			 "its owner may replace",
			 (unsigned int)st.st_uid);
	else
		return 0;
	return S_ISLNK(st.st_mode) ? -ELOOP : S_ISREG(st.st_mode) ? -EPERM : -EINVAL;
}

int out_tmp_open(int dir_fd, char *tmp, size_t size)
{
	static unsigned int seq;
	struct timespec ts;
	int fd = -1;

	/* Unpredictable enough that no one keeps the name taken; O_EXCL if they try. */
	for (int i = 0; i < 16 && fd < 0; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, size, ".alloctrace-%d-%08lx.tmp", (int)getpid(),
			 ((unsigned long)ts.tv_nsec ^ (unsigned long)ts.tv_sec << 16) + seq++);
		fd =
		    openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	return fd < 0 ? -errno : fd;
}

int out_file__create(struct out_file *o, const char *path)
{
	char dir[PATH_MAX], why[WHY_MAX] = "";
	int err;

	*o = (struct out_file){.dir_fd = -1, .fd = -1};
	err = split(path, dir, o->base);
	if (!err) {
		o->dir_fd = walk(dir, why, sizeof(why));
		err = o->dir_fd < 0 ? o->dir_fd : check_entry(o, why, sizeof(why));
	}
	if (!err) {
		o->fd = out_tmp_open(o->dir_fd, o->tmp, sizeof(o->tmp));
		err = o->fd < 0 ? o->fd : 0;
	}
	if (err) {
		pr_err("cannot create %s: %s", path, *why ? why : strerror(-err));
		if (o->fd < 0)
			o->tmp[0] = '\0';
		out_file__discard(o);
	}
	return err;
}

int out_file__publish(struct out_file *o, const char *path)
{
	int err = renameat(o->dir_fd, o->tmp, o->dir_fd, o->base) ? -errno : 0;

	if (!err) {
		o->tmp[0] = '\0';
		return 0;
	}
	if (err == -EPERM || err == -EACCES)
		pr_err("cannot create %s: a file another user put there meanwhile is in the way, "
		       "which only its owner may replace",
		       path);
	else
		pr_err("cannot create %s: %s", path, strerror(-err));
	return err;
}

void out_file__discard(struct out_file *o)
{
	if (o->tmp[0] && o->dir_fd >= 0)
		unlinkat(o->dir_fd, o->tmp, 0);
	o->tmp[0] = '\0';
	out_file__release(o);
}

void out_file__release(struct out_file *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	o->fd = o->dir_fd = -1;
}

int out_dir_open(const char *path, const char *what)
{
	char why[WHY_MAX] = "";
	int fd = walk(path, why, sizeof(why));

	if (fd < 0)
		pr_err("cannot write %s to %s: %s", what, path, *why ? why : strerror(-fd));
	return fd;
}

void out_path_remove_empty(const char *path, int fd)
{
	char dir[PATH_MAX], base[NAME_MAX + 1], why[WHY_MAX];
	struct stat mine, now;
	int dir_fd;

	if (fd < 0 || split(path, dir, base) || fstat(fd, &mine) || mine.st_size)
		return;
	dir_fd = walk(dir, why, sizeof(why));
	if (dir_fd < 0)
		return;
	if (!fstatat(dir_fd, base, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == mine.st_dev &&
	    now.st_ino == mine.st_ino)
		unlinkat(dir_fd, base, 0);
	close(dir_fd);
}
