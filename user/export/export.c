// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The file side of every export: each kind (exporters.h) only keeps what
 * it needs from the reports and formats it; here the file is created,
 * written and closed, and failures are told the same way for all kinds.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "export/export.h"
#include "export/exporters.h"
#include "export/outfile.h"
#include "lib/log.h"
#include "lib/util.h"

struct exporter {
	const struct export_ops *ops;
	void *state;
	char *path;	     /* for messages */
	struct out_file out; /* a single file, renamed into place when written */
	int err;	     /* the first failure, told once and returned ever after */
	/* --pprof-dir: a file per report in a directory, the newest @keep kept. */
	int dir_fd; /* -1 for a single file */
	unsigned int keep;
	unsigned int seq; /* reports written, numbering the files */
	int dir_err;	  /* the last report's failure: told when it changes */
};

static const struct export_kind_entry {
	void *(*new)(void);
	const struct export_ops *ops;
} export_kinds[NR_EXPORTS] = {
#define EXPORT_KIND(id, option, ctor, ops, help) [EXPORT_##id] = {ctor, &ops},
#include "export/kinds.def"
#undef EXPORT_KIND
};

/* The option and its help are cli/options.c's: a row must give both. */
#define EXPORT_KIND(id, option, ctor, ops, help)                                                   \
	_Static_assert(sizeof(option) > 1 && sizeof(help) > 1, #id ": no option or no help");
#include "export/kinds.def"
#undef EXPORT_KIND

/* @e without its output, which the caller opens; NULL with errno set, told. */
static struct exporter *exporter__alloc(enum export_kind kind, const char *path)
{
	struct exporter *e;
	int err;

	if ((unsigned int)kind >= NR_EXPORTS || !path) {
		pr_err("cannot export to %s: %s", path ? path : "(null)", strerror(EINVAL));
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		pr_err("cannot export to %s: %s", path, strerror(errno));
		return NULL;
	}
	e->out = (struct out_file){.dir_fd = -1, .fd = -1};
	e->dir_fd = -1;
	e->ops = export_kinds[kind].ops;
	if (!(e->path = strdup(path)) || !(e->state = export_kinds[kind].new())) {
		err = errno;
		pr_err("cannot export to %s: %s", path, strerror(err));
		exporter__free(e);
		errno = err;
		return NULL;
	}
	return e;
}

/* Takes @e; returns it, or NULL with errno -@err when @err is one. */
static struct exporter *exporter__opened(struct exporter *e, int err)
{
	if (!err)
		return e;
	exporter__free(e);
	errno = -err;
	return NULL;
}

struct exporter *exporter__new(enum export_kind kind, const char *path)
{
	struct exporter *e = exporter__alloc(kind, path);

	if (!e)
		return NULL;
	/* Last, so that a failure above leaves no file behind. */
	return exporter__opened(e, out_file__create(&e->out, path));
}

bool exporter__per_block(const struct exporter *e)
{
	return e->ops->per_block;
}

/*
 * --pprof-dir's files: "alloctrace-PID-YYYYmmddTHHMMSSZ-SEQ.pb.gz", PID
 * alloctrace's own, the time the report's (UTC), SEQ its number in the
 * run. Only names of this shape are ever removed.
 */
#define DIR_FILE_PREFIX "alloctrace-"
#define DIR_FILE_SUFFIX ".pb.gz"
#define DIR_STAMP_LEN	16

/* What orders the files of a directory, oldest first. */
struct dir_file {
	char *name;
	char stamp[DIR_STAMP_LEN + 1];
	unsigned long pid, seq;
};

/* A decimal number ending at @end; false if none. */
static bool parse_decimal(const char **s, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return false;
	errno = 0;
	*out = strtoul(*s, &end, 10);
	*s = end;
	return !errno;
}

/* Whether @name is one of the files this writer makes, and its order in @df. */
static bool dir_file__parse(const char *name, struct dir_file *df)
{
	const char *p = name + strlen(DIR_FILE_PREFIX);

	if (strncmp(name, DIR_FILE_PREFIX, strlen(DIR_FILE_PREFIX)) ||
	    !parse_decimal(&p, &df->pid) || *p++ != '-')
		return false;
	for (int i = 0; i < DIR_STAMP_LEN; i++) {
		if (i == 8 ? p[i] != 'T' : i == 15 ? p[i] != 'Z' : !isdigit((unsigned char)p[i]))
			return false;
	}
	memcpy(df->stamp, p, DIR_STAMP_LEN);
	df->stamp[DIR_STAMP_LEN] = '\0';
	p += DIR_STAMP_LEN;
	return *p++ == '-' && parse_decimal(&p, &df->seq) && !strcmp(p, DIR_FILE_SUFFIX);
}

static int dir_file__cmp(const void *a, const void *b)
{
	const struct dir_file *x = a, *y = b;
	int c = strcmp(x->stamp, y->stamp);

	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Every file of the directory this writer could have made, in @files. 0 or -errno. */
static int dir_files__list(int dir_fd, struct dir_file **files, size_t *nr)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t cap = 0;
	struct dir_file df, *grown;
	struct dirent *de;
	int err = 0;

	*files = NULL;
	*nr = 0;
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!dir_file__parse(de->d_name, &df))
			continue;
		grown = array__grow(*files, &cap, *nr, sizeof(*grown));
		if (!grown) {
			err = -ENOMEM;
			break;
		}
		*files = grown;
		df.name = strdup(de->d_name);
		if (!df.name) {
			err = -ENOMEM;
			break;
		}
		(*files)[(*nr)++] = df;
	}
	closedir(d);
	return err;
}

/* The oldest files go until @keep are left. 0 or -errno. */
static int exporter__rotate(struct exporter *e)
{
	struct dir_file *files;
	size_t nr, i;
	int err = dir_files__list(e->dir_fd, &files, &nr);

	if (!err && nr > e->keep) {
		qsort(files, nr, sizeof(*files), dir_file__cmp);
		for (i = 0; i < nr - e->keep; i++) {
			if (unlinkat(e->dir_fd, files[i].name, 0) && errno != ENOENT && !err)
				err = -errno;
		}
	}
	for (i = 0; i < nr; i++)
		free(files[i].name);
	free(files);
	return err;
}

struct exporter *exporter__new_pprof_dir(const char *dir, unsigned int keep)
{
	struct exporter *e = exporter__alloc(EXPORT_PPROF, dir);
	char tmp[64];
	int fd;

	if (!e)
		return NULL;
	e->keep = keep;
	e->dir_fd = out_dir_open(dir, "pprof files");
	if (e->dir_fd < 0)
		return exporter__opened(e, e->dir_fd);
	/* A file made and removed: whether the directory takes one, told now. */
	fd = out_tmp_open(e->dir_fd, tmp, sizeof(tmp));
	if (fd < 0) {
		pr_err("cannot write pprof files to %s: %s", dir, strerror(-fd));
		return exporter__opened(e, fd);
	}
	close(fd);
	unlinkat(e->dir_fd, tmp, 0);
	return e;
}

void exporter__discard(struct exporter *e)
{
	exporter__free(e);
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	if (e->state)
		e->ops->free(e->state);
	/* Never written: its temporary file goes, and nothing took the name. */
	out_file__discard(&e->out);
	if (e->dir_fd >= 0)
		close(e->dir_fd);
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
			f->stacks[n].pid = p->pid;
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
	/* The processes' verdicts are in their stacks: the classes are there to show. */
	for (size_t i = 0; i < r->nr_procs && !f->r.leak_check; i++) {
		if (r->procs[i].leak_check && !r->procs[i].leak_check->error)
			f->r.leak_check = r->procs[i].leak_check;
	}
	f->r.per_process = false;
	f->r.nr_procs = 0;
	f->r.procs = NULL;
	f->r.stacks = f->stacks;
	f->r.nr_stacks = f->r.nr_holding = n;
	return 0;
}

/* @r handed to @e's kind, flattened if it wants. 0 or -errno. */
static int exporter__take(struct exporter *e, const struct report *r)
{
	struct flat_report flat;
	int err;

	if (!r->per_process || !e->ops->by_process)
		return e->ops->report(e->state, r);
	err = flat_report__init(&flat, r);
	if (!err)
		err = e->ops->report(e->state, &flat.r);
	flat_report__release(&flat);
	return err;
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

/* The whole file, as @e's kind writes it, to @fd, which is closed. 0 or -errno. */
static int exporter__write_fd(struct exporter *e, int fd)
{
	FILE *f = fdopen(fd, "w");
	int err;

	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	err = e->ops->finish(e->state, f);
	if (err)
		fclose(f);
	else
		err = stream_close(f);
	return err;
}

/* The report just taken as a new file of the directory, then the oldest removed. */
static int exporter__write_dir(struct exporter *e, double time)
{
	char tmp[64], name[128], stamp[DIR_STAMP_LEN + 1];
	time_t secs = (time_t)time;
	struct tm tm;
	int fd, err;

	if (!gmtime_r(&secs, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	snprintf(name, sizeof(name), DIR_FILE_PREFIX "%d-%s-%06u" DIR_FILE_SUFFIX, (int)getpid(),
		 stamp, ++e->seq);
	fd = out_tmp_open(e->dir_fd, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = exporter__write_fd(e, fd);
	if (!err && renameat(e->dir_fd, tmp, e->dir_fd, name))
		err = -errno;
	if (err) {
		unlinkat(e->dir_fd, tmp, 0);
		return err;
	}
	return exporter__rotate(e);
}

/*
 * A directory's failures are per report: a full disk may have room again
 * at the next one. Told when they start or change, not at every report;
 * the first is returned at the end.
 */
static int exporter__check_dir(struct exporter *e, int err)
{
	if (err && err != e->dir_err)
		pr_err("cannot write a pprof file to %s: %s", e->path, strerror(-err));
	e->dir_err = err;
	if (err && !e->err)
		e->err = err;
	return err;
}

int exporter__report(struct exporter *e, const struct report *r)
{
	int err;

	if (e->dir_fd >= 0) {
		err = exporter__take(e, r);
		return exporter__check_dir(e, err ? err : exporter__write_dir(e, r->time));
	}
	if (e->err)
		return e->err;
	return exporter__check(e, exporter__take(e, r));
}

int exporter__big_alloc(struct exporter *e, const struct big_alloc *a)
{
	if (e->err)
		return e->err;
	if (!e->ops->big_alloc)
		return 0;
	return exporter__check(e, e->ops->big_alloc(e->state, a));
}

int exporter__finish(struct exporter *e)
{
	int fd = e->out.fd, err;

	/* A directory has its files already, one per report. */
	if (e->dir_fd >= 0)
		return e->err;
	if (fd < 0)
		return e->err ? e->err : -EINVAL;
	e->out.fd = -1;
	if (e->err) {
		close(fd);
		out_file__discard(&e->out);
		return e->err;
	}
	err = exporter__check(e, exporter__write_fd(e, fd));
	if (!err && (err = out_file__publish(&e->out, e->path)))
		e->err = err;
	if (err)
		out_file__discard(&e->out);
	return err;
}

FILE *output__open(const char *path)
{
	struct out_file o;
	FILE *f = NULL;
	int err;

	/*
	 * The reports stream into it during the run, so it is renamed into
	 * place at once: from then on it is a 0600 file of ours in a
	 * directory only root and the caller may change, which no one else
	 * can open, replace or remove.
	 */
	err = out_file__create(&o, path);
	if (!err && !(err = out_file__publish(&o, path))) {
		f = fdopen(o.fd, "w");
		if (!f) {
			err = -errno;
			pr_err("cannot create %s: %s", path, strerror(errno));
			out_path_remove_empty(path, o.fd);
		} else {
			o.fd = -1;
		}
	}
	out_file__discard(&o);
	errno = -err;
	return f;
}

void output__discard(FILE *f, const char *path)
{
	out_path_remove_empty(path, fileno(f));
	fclose(f);
}

int output__close(FILE *f, const char *path)
{
	int err = stream_close(f);

	if (err)
		pr_err("cannot write %s: %s", path, strerror(-err));
	return err;
}
