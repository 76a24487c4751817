// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The processes --cgroup and --comm choose among those --all would trace:
 * the cgroup the BPF side compares against, and the ones running already,
 * whose allocators are probed at the start.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "proc/access.h"
#include "proc/choose.h"
#include "proc/procfs.h"
#include "lib/log.h"

int cgroup__resolve(const char *path, struct cgroup_ref *cg)
{
	char dir[PATH_MAX];
	struct stat st, up;
	struct statfs fs;
	char *slash;

	if (!realpath(path, dir) || stat(dir, &st) || statfs(dir, &fs)) {
		pr_err("--cgroup %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fs.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode)) {
		pr_err("--cgroup %s: not a cgroup v2 directory (such as "
		       "/sys/fs/cgroup/system.slice/NAME.service)",
		       path);
		return -EINVAL;
	}
	/* The kernel numbers a cgroup by its directory's inode, its depth from the mount's root. */
	cg->id = st.st_ino;
	cg->level = 0;
	while ((slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (stat(dir, &up) || up.st_dev != st.st_dev)
			break;
		cg->level++;
	}
	return 0;
}

struct choice_walk {
	const struct proc_choice *c;
	pid_t self;
	int (*fn)(void *ctx, pid_t pid);
	void *ctx;
	unsigned int not_yours; /* chosen, but left alone: see access.h */
};

static int choice_walk__visit(struct choice_walk *w, pid_t pid)
{
	char comm[COMM_MAX + 2];

	if (pid <= 0 || pid == w->self)
		return 0;
	if (w->c->comm) {
		proc_thread_name(pid, pid, comm, sizeof(comm));
		if (strcmp(comm, w->c->comm))
			return 0;
	}
	if (!access__may_trace(pid)) {
		w->not_yours++;
		return 0;
	}
	return w->fn(w->ctx, pid);
}

/* Every process of the cgroup @dir and of those below it. */
static int choice_walk__cgroup(struct choice_walk *w, const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	int pid, err = 0;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!err && fscanf(f, "%d", &pid) == 1)
		err = choice_walk__visit(w, pid);
	fclose(f);
	d = opendir(dir);
	while (!err && d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < (int)sizeof(path))
			err = choice_walk__cgroup(w, path);
	}
	if (d)
		closedir(d);
	return err;
}

static int choice_walk__proc(struct choice_walk *w)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;
	char *end;
	long pid;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		pid = strtol(de->d_name, &end, 10);
		if (!*end && pid <= INT_MAX)
			err = choice_walk__visit(w, (pid_t)pid);
	}
	closedir(d);
	return err;
}

int proc_choice__for_each(const struct proc_choice *c, pid_t self, int (*fn)(void *ctx, pid_t pid),
			  void *ctx)
{
	struct choice_walk w = {.c = c, .self = self, .fn = fn, .ctx = ctx};
	int err = c->cgroup ? choice_walk__cgroup(&w, c->cgroup) : choice_walk__proc(&w);

	if (w.not_yours)
		pr_warn(
		    "not tracing %u processes that are not yours (another user's, or not "
		    "dumpable): without root alloctrace traces only what you could ptrace yourself",
		    w.not_yours);
	return err;
}
