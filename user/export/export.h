/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_EXPORT_H
#define ALLOCTRACE_EXPORT_H

#include "report/report.h"

/*
 * File outputs written beside the live report: they see every report of
 * the run (with all stacks holding memory, uncut by --top) and every big
 * allocation, and write their file when the run ends (folded, pprof) or
 * keep it current (see each kind). One line each of export/kinds.def.
 */
enum export_kind {
#define EXPORT_KIND(id, option, ctor, ops, help) EXPORT_##id,
#include "export/kinds.def"
#undef EXPORT_KIND
	NR_EXPORTS,
};

struct exporter;

/*
 * Create the output file's temporary file at once, so a bad path fails
 * before tracing starts (export/outfile.h: mode 0600, no symbolic link in
 * any component); exporter__finish() renames it into place. NULL with
 * errno set; the cause is printed naming the path.
 */
struct exporter *exporter__new(enum export_kind kind, const char *path);
/*
 * --pprof-dir DIR: a gzipped pprof profile per report, each a new file of
 * @dir written whole before it gets its name, the @keep newest of them
 * kept. @dir must exist and take a file now (one is made and removed):
 * else NULL with errno set, the cause printed naming @dir.
 */
struct exporter *exporter__new_pprof_dir(const char *dir, unsigned int keep);
/* --pprof-keep's default: five minutes of reports at the default interval. */
#define PPROF_DIR_KEEP 60
/* Free @e; a file never finished is removed, its name never taken. */
void exporter__free(struct exporter *e);
/* The run failed before tracing: the same as exporter__free(). */
void exporter__discard(struct exporter *e);

/* Does @e need the reports made from the live blocks one by one? */
bool exporter__per_block(const struct exporter *e);

/* Both 0 or -errno. */
int exporter__report(struct exporter *e, const struct report *r);
int exporter__big_alloc(struct exporter *e, const struct big_alloc *a);

/* Write what the file still lacks after the final report. 0 or -errno. */
int exporter__finish(struct exporter *e);

/*
 * -o FILE: the live reports' stream, created as export files are. NULL
 * with errno set, the cause printed naming the path.
 */
FILE *output__open(const char *path);
/* Close, removing the file if still empty (the run failed before tracing). */
void output__discard(FILE *f, const char *path);
/* Close after the run: 0, or -errno printed naming the path. */
int output__close(FILE *f, const char *path);

#endif
