// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file side of every export: each kind (exporters.h) only keeps what
 * it needs from the reports and formats it; here the file is created,
 * written and closed, and failures are told the same way for all kinds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "export/export.h"
#include "export/exporters.h"
#include "lib/log.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct exporter {
	const struct export_ops *ops;
	void *state;
	char *path; /* for messages */
	int fd;	    /* -1 once handed to the stream that wrote the file */
	int err;    /* the first failure, told once and returned ever after */
};

static const struct export_kind_entry {
	void *(*new)(void);
	const struct export_ops *ops;
} export_kinds[] = {
    [EXPORT_FOLDED] = {folded_bytes_new, &folded_ops},
    [EXPORT_FOLDED_COUNT] = {folded_count_new, &folded_ops},
    [EXPORT_PPROF] = {pprof_new, &pprof_ops},
    [EXPORT_HTML] = {html_new, &html_ops},
};

/*
 * ELOOP's own text, "Too many levels of symbolic links", would mislead;
 * ENXIO is what a FIFO without a reader gives under O_NONBLOCK.
 */
static const char *open_error(int err)
{
	if (err == ELOOP)
		return "it is a symbolic link, which alloctrace does not follow";
	return err == ENXIO ? "it is not a regular file" : strerror(err);
}

/*
 * Only a regular file where files store data: /proc and /sys files look
 * regular, but take what is written to them as kernel settings.
 */
static const char *not_a_file(int fd)
{
	struct statfs fs;
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (fstatfs(fd, &fs) || fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)
		return "it is a file of /proc or /sys, not one to write a report to";
	return NULL;
}

/*
 * O_NOFOLLOW: a file in a shared directory such as /tmp could otherwise
 * be a link planted to make a privileged tracer overwrite another file.
 * O_NONBLOCK: a FIFO would otherwise hold the run until someone reads it;
 * on a regular file it changes nothing.
 */
static int open_output(const char *path)
{
	int fd =
	    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	const char *why;
	int err;

	if (fd < 0) {
		err = errno;
		pr_err("cannot create %s: %s", path, open_error(err));
		return -err;
	}
	why = not_a_file(fd);
	if (why) {
		close(fd);
		pr_err("cannot create %s: %s", path, why);
		return -EINVAL;
	}
	return fd;
}

struct exporter *exporter__new(enum export_kind kind, const char *path)
{
	struct exporter *e;
	int err;

	if ((unsigned int)kind >= ARRAY_SIZE(export_kinds) || !path) {
		pr_err("cannot export to %s: %s", path ? path : "(null)", strerror(EINVAL));
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path)) || !(e->state = export_kinds[kind].new())) {
		err = errno;
		pr_err("cannot export to %s: %s", path, strerror(err));
		goto fail;
	}
	e->ops = export_kinds[kind].ops;
	/* Last, so that a failure above leaves no empty file behind. */
	e->fd = open_output(path);
	if (e->fd >= 0)
		return e;
	err = -e->fd;
	e->fd = -1;
fail:
	exporter__free(e);
	errno = err;
	return NULL;
}

/*
 * Remove @path if it is still the empty file open as @fd: a run that
 * failed before tracing leaves no empty output behind, and a file put in
 * its place meanwhile is not ours to remove.
 */
static void discard_output(int fd, const char *path)
{
	struct stat mine, now;

	if (fd < 0 || fstat(fd, &mine) || lstat(path, &now))
		return;
	if (mine.st_dev == now.st_dev && mine.st_ino == now.st_ino && !mine.st_size)
		unlink(path);
}

void exporter__discard(struct exporter *e)
{
	if (e)
		discard_output(e->fd, e->path);
	exporter__free(e);
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	if (e->state)
		e->ops->free(e->state);
	if (e->fd >= 0)
		close(e->fd);
	free(e->path);
	free(e);
}

/* Keeps and tells the first failure: one message per file, not per report. */
static int exporter__check(struct exporter *e, int err)
{
	if (err && !e->err) {
		e->err = err;
		pr_err("cannot write %s: %s", e->path, strerror(-err));
	}
	return err;
}

/* A report on several processes as one on all their stacks (see .by_process). */
struct flat_report {
	struct report r;
	struct report_stack *stacks;
	struct frame_info *frames;
	char (*roots)[64];
};

static void flat_report__release(struct flat_report *f)
{
	free(f->stacks);
	free(f->frames);
	free(f->roots);
}

static int flat_report__init(struct flat_report *f, const struct report *r)
{
	static const struct frame_info unknown = {.function = "[stack unknown]"};
	size_t nr_stacks = 0, nr_frames = 0, n = 0, k = 0;

	for (size_t i = 0; i < r->nr_procs; i++) {
		nr_stacks += r->procs[i].nr_stacks;
		for (size_t j = 0; j < r->procs[i].nr_stacks; j++)
			nr_frames += r->procs[i].stacks[j].nr_frames + 2;
	}
	*f = (struct flat_report){
	    .stacks = calloc(nr_stacks + 1, sizeof(*f->stacks)),
	    .frames = calloc(nr_frames + 1, sizeof(*f->frames)),
	    .roots = calloc(r->nr_procs + 1, sizeof(*f->roots)),
	};
	if (!f->stacks || !f->frames || !f->roots)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_procs; i++) {
		const struct report *p = &r->procs[i];

		snprintf(f->roots[i], sizeof(f->roots[i]), "pid %d (%s)", p->pid,
			 p->comm ? p->comm : "?");
		for (size_t j = 0; j < p->nr_stacks; j++, n++) {
			const struct report_stack *s = &p->stacks[j];

			f->stacks[n] = *s;
			f->stacks[n].frames = &f->frames[k];
			/* The allocations whose stack was lost still weigh, under their process. */
			if (s->nr_frames)
				memcpy(&f->frames[k], s->frames, s->nr_frames * sizeof(*s->frames));
			else
				f->frames[k] = unknown;
			k += s->nr_frames ? s->nr_frames : 1;
			f->frames[k++] = (struct frame_info){.function = f->roots[i]};
			f->stacks[n].nr_frames = &f->frames[k] - f->stacks[n].frames;
		}
	}
	f->r = *r;
	f->r.per_process = false;
	f->r.nr_procs = 0;
	f->r.procs = NULL;
	f->r.stacks = f->stacks;
	f->r.nr_stacks = f->r.nr_holding = n;
	return 0;
}

int exporter__report(struct exporter *e, const struct report *r)
{
	struct flat_report flat;
	int err;

	if (e->err)
		return e->err;
	if (!r->per_process || !e->ops->by_process)
		return exporter__check(e, e->ops->report(e->state, r));
	err = flat_report__init(&flat, r);
	if (!err)
		err = e->ops->report(e->state, &flat.r);
	flat_report__release(&flat);
	return exporter__check(e, err);
}

int exporter__big_alloc(struct exporter *e, const struct big_alloc *a)
{
	if (e->err)
		return e->err;
	if (!e->ops->big_alloc)
		return 0;
	return exporter__check(e, e->ops->big_alloc(e->state, a));
}

/* stdio keeps the first write error in the stream's flag and in errno. */
static int stream_close(FILE *f)
{
	int err = 0;

	if (fflush(f) || ferror(f))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

int exporter__finish(struct exporter *e)
{
	FILE *f;
	int err;

	if (e->err)
		return e->err;
	if (e->fd < 0)
		return -EINVAL;
	f = fdopen(e->fd, "w");
	if (!f)
		return exporter__check(e, -errno);
	e->fd = -1;
	errno = 0;
	err = e->ops->finish(e->state, f);
	if (err)
		fclose(f);
	else
		err = stream_close(f);
	return exporter__check(e, err);
}

FILE *output__open(const char *path)
{
	int fd = open_output(path);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		pr_err("cannot create %s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

void output__discard(FILE *f, const char *path)
{
	discard_output(fileno(f), path);
	fclose(f);
}

int output__close(FILE *f, const char *path)
{
	int err = stream_close(f);

	if (err)
		pr_err("cannot write %s: %s", path, strerror(-err));
	return err;
}
