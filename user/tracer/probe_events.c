// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracefs uprobe events opened per thread with inherit: see probe_events.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "lib/log.h"
#include "lib/util.h"
#include "tracer/probe_events.h"

/* PF_KTHREAD of /proc/PID/stat's flags. */
#define PF_KTHREAD 0x00200000UL

/* The kernel thread the anchors are opened on: the first one the kernel starts. */
#define KTHREADD 2

#define GROUP_PREFIX "alloctrace_"

struct tracepoint {
	dev_t dev;
	ino_t ino;
	uint64_t offset;
	bool retprobe;
	long id;
};

struct anchor {
	long id;
	struct bpf_program *prog;
	struct bpf_link *link;
};

struct probe_events {
	int mnt; /* our tracefs mount, attached nowhere */
	struct tracepoint *tps;
	size_t nr_tps, tps_cap;
	struct anchor *anchors;
	size_t nr_anchors, anchors_cap;
};

static int perf_open(uint32_t type, uint64_t config, pid_t pid, bool inherit)
{
	struct perf_event_attr attr = {
	    .type = type,
	    .size = sizeof(attr),
	    .config = config,
	    .sample_period = type == PERF_TYPE_TRACEPOINT,
	    .inherit = inherit,
	};
	int fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int probe_events__open_thread(long id, pid_t tid)
{
	return perf_open(PERF_TYPE_TRACEPOINT, (uint64_t)id, tid, true);
}

int probe_events__open_unshared(pid_t tid)
{
	return perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, tid, false);
}

/* Is pid @pid a kernel thread? */
static bool kernel_thread(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* After the name in parentheses: state ppid pgrp session tty_nr tpgid flags. */
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & PF_KTHREAD);
}

/* Write @cmd to uprobe_events. 0 or -errno. */
static int command(const struct probe_events *pe, const char *cmd)
{
	int fd = openat(pe->mnt, "uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, cmd, strlen(cmd));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/*
 * The events of an alloctrace that is gone (killed: it could not remove
 * them) are removed now. Any other program's are left alone.
 */
static void remove_stale(const struct probe_events *pe)
{
	char line[PATH_MAX + 128], cmd[256];
	int fd = openat(pe->mnt, "uprobe_events", O_RDONLY | O_CLOEXEC);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	char group[64], name[64];
	int pid;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*c:%63[^/]/%63s", group, name) != 2 ||
		    sscanf(group, GROUP_PREFIX "%d", &pid) != 1 || pid == getpid() ||
		    !kill(pid, 0) || errno != ESRCH)
			continue;
		snprintf(cmd, sizeof(cmd), "-:%s/%s", group, name);
		if (!command(pe, cmd))
			pr_debug("removed the uprobe event %s/%s of an alloctrace gone", group,
				 name);
	}
	fclose(f);
}

struct probe_events *probe_events__open(void)
{
	struct probe_events *pe;
	int fs, err;

	if (!kernel_thread(KTHREADD)) {
		pr_debug("pid %d is no kernel thread: no anchor for inherited probes", KTHREADD);
		errno = ENOTSUP;
		return NULL;
	}
	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return NULL;
	fs = fsopen("tracefs", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		err = errno;
		pr_debug("cannot mount tracefs: %s", strerror(err));
		goto fail;
	}
	pe->mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID);
	err = pe->mnt < 0 ? errno : 0;
	close(fs);
	fs = -1;
	if (err) {
		pr_debug("cannot mount tracefs: %s", strerror(err));
		goto fail;
	}
	remove_stale(pe);
	return pe;
fail:
	if (fs >= 0)
		close(fs);
	free(pe);
	errno = err == ENOENT || err == ENODEV ? ENOTSUP : err;
	return NULL;
}

void probe_events__close(struct probe_events *pe)
{
	char cmd[128];

	if (!pe)
		return;
	for (size_t i = 0; i < pe->nr_anchors; i++)
		bpf_link__destroy(pe->anchors[i].link);
	for (size_t i = 0; i < pe->nr_tps; i++) {
		snprintf(cmd, sizeof(cmd), "-:" GROUP_PREFIX "%d/p%zu", getpid(), i);
		if (command(pe, cmd))
			pr_debug("cannot remove the uprobe event p%zu: %s", i, strerror(errno));
	}
	close(pe->mnt);
	free(pe->tps);
	free(pe->anchors);
	free(pe);
}

/* Only these in a path: a command of uprobe_events ends at white space. */
static bool plain_path(const char *path)
{
	return path[0] == '/' &&
	       strspn(path,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-") ==
		   strlen(path);
}

/* Define tracepoint @n at @path+@offset: its id, or -errno. */
static long define(struct probe_events *pe, size_t n, const char *path, uint64_t offset,
		   bool retprobe)
{
	char cmd[PATH_MAX + 96], idpath[96], buf[32];
	ssize_t len;
	int fd, err;

	if (!plain_path(path))
		return -EINVAL;
	snprintf(cmd, sizeof(cmd), "%c:" GROUP_PREFIX "%d/p%zu %s:0x%llx", retprobe ? 'r' : 'p',
		 getpid(), n, path, (unsigned long long)offset);
	err = command(pe, cmd);
	if (err)
		return err;
	snprintf(idpath, sizeof(idpath), "events/" GROUP_PREFIX "%d/p%zu/id", getpid(), n);
	fd = openat(pe->mnt, idpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	err = len <= 0 ? -EIO : 0;
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return strtol(buf, NULL, 10);
}

/* @prog on tracepoint @id with @cookie, once. 0 or -errno. */
static int anchor(struct probe_events *pe, long id, struct bpf_program *prog, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	struct anchor *a;
	int fd, err;

	for (size_t i = 0; i < pe->nr_anchors; i++) {
		if (pe->anchors[i].id == id && pe->anchors[i].prog == prog)
			return 0;
	}
	a = array__grow(pe->anchors, &pe->anchors_cap, pe->nr_anchors, sizeof(*a));
	if (!a)
		return -ENOMEM;
	pe->anchors = a;
	fd = perf_open(PERF_TYPE_TRACEPOINT, (uint64_t)id, KTHREADD, false);
	if (fd < 0)
		return fd;
	a = &pe->anchors[pe->nr_anchors];
	a->link = bpf_program__attach_perf_event_opts(prog, fd, &opts);
	if (!a->link) {
		err = -errno;
		close(fd);
		return err;
	}
	a->id = id;
	a->prog = prog;
	pe->nr_anchors++;
	return 0;
}

long probe_events__tracepoint(struct probe_events *pe, struct bpf_program *prog, const char *path,
			      dev_t dev, ino_t ino, uint64_t offset, bool retprobe, uint64_t cookie)
{
	struct tracepoint *tp = NULL;
	long id;
	int err;

	for (size_t i = 0; i < pe->nr_tps && !tp; i++) {
		tp = &pe->tps[i];
		if (tp->dev != dev || tp->ino != ino || tp->offset != offset ||
		    tp->retprobe != retprobe)
			tp = NULL;
	}
	if (!tp) {
		tp = array__grow(pe->tps, &pe->tps_cap, pe->nr_tps, sizeof(*tp));
		if (!tp)
			return -ENOMEM;
		pe->tps = tp;
		id = define(pe, pe->nr_tps, path, offset, retprobe);
		if (id < 0)
			return id;
		tp = &pe->tps[pe->nr_tps++];
		*tp = (struct tracepoint){dev, ino, offset, retprobe, id};
	}
	err = anchor(pe, tp->id, prog, cookie);
	return err ? err : tp->id;
}
