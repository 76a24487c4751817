// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "export/export.h"
#include "fixtures.h"

static const struct frame_info frames[] = {
    {.addr = 0x555555555189,
     .module = "/usr/bin/leaky",
     .offset = 0x1189,
     .function = "leak_a",
     .file = "leak.c",
     .line = 42},
    {.addr = 0x5555555551a0,
     .module = "/usr/bin/leaky",
     .offset = 0x11a0,
     .function = "main",
     .file = "leak.c",
     .line = 80},
};

static const struct report_stack stacks[] = {
    {.stack_id = 1,
     .outstanding_bytes = 2400,
     .outstanding_allocs = 100,
     .allocs = 100,
     .alloc_bytes = 2400,
     .nr_frames = ARRAY_SIZE(frames),
     .frames = frames},
    {.stack_id = 2,
     .outstanding_bytes = 100,
     .outstanding_allocs = 1,
     .allocs = 1,
     .alloc_bytes = 100,
     .nr_frames = 0,
     .frames = NULL},
};

static const struct profile_totals totals = {.outstanding_bytes = 2500};

static const struct report final_report = {
    .final = true,
    .time = 1700000000.25,
    .pid = 1234,
    .comm = "leaky",
    .totals = &totals,
    .nr_stacks = ARRAY_SIZE(stacks),
    .nr_holding = ARRAY_SIZE(stacks),
    .stacks = stacks,
    .exit = {.exited = true, .status = 0},
};

static const struct big_alloc big = {
    .time = 1700000000.5,
    .pid = 1234,
    .tid = 1234,
    .func = "malloc",
    .size = 16777216,
    .addr = 0x7f0000001000,
    .nr_frames = ARRAY_SIZE(frames),
    .frames = frames,
};

struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/alloctrace-export.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/out", fx->dir);
	umask(022);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

/* The whole file, with a NUL after it; free() it. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *data;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	data = calloc(1, size + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, size, f), size);
	fclose(f);
	*len = size;
	return data;
}

/*
 * What is printed when exporter__new() (or, with @keep, exporter__new_pprof_dir())
 * fails on @path, as it must, with @err.
 */
static char *failed_open(enum export_kind kind, const char *path, unsigned int keep, int err)
{
	char log[] = "/tmp/alloctrace-export-log.XXXXXX", *text;
	int fd = mkstemp(log), saved = dup(STDERR_FILENO);
	size_t len;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	errno = 0;
	assert_null(keep ? exporter__new_pprof_dir(path, keep) : exporter__new(kind, path));
	assert_int_equal(errno, err);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	text = slurp(log, &len);
	unlink(log);
	return text;
}

static char *failed_new(enum export_kind kind, const char *path, int err)
{
	return failed_open(kind, path, 0, err);
}

/* Nothing at the name until the file is written whole, then a 0600 file. */
static void test_creates_fresh(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e;
	struct stat st;

	e = exporter__new(EXPORT_FOLDED, fx->path);
	assert_non_null(e);
	assert_int_equal(stat(fx->path, &st), -1);
	assert_int_equal(exporter__report(e, &final_report), 0);
	assert_int_equal(exporter__finish(e), 0);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	exporter__free(e);
}

/* A file already there, 0666, is replaced, not written through. */
static void test_replaces(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e;
	struct stat old, st;
	char data[32] = "";
	FILE *f = fopen(fx->path, "w"), *held;

	assert_non_null(f);
	fputs("old contents\n", f);
	fclose(f);
	assert_int_equal(chmod(fx->path, 0666), 0);
	held = fopen(fx->path, "r");
	assert_non_null(held);
	assert_int_equal(stat(fx->path, &old), 0);
	e = exporter__new(EXPORT_PPROF, fx->path);
	assert_non_null(e);
	assert_int_equal(exporter__report(e, &final_report), 0);
	assert_int_equal(exporter__finish(e), 0);
	exporter__free(e);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_true(st.st_ino != old.st_ino);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_non_null(fgets(data, sizeof(data), held));
	assert_string_equal(data, "old contents\n");
	fclose(held);
}

static void test_refuses_symlink(void **state)
{
	struct fixture *fx = *state;
	char target[160], expected[512], *msg, *data;
	size_t len;
	FILE *f;

	snprintf(target, sizeof(target), "%s/target", fx->dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	assert_int_equal(symlink(target, fx->path), 0);
	msg = failed_new(EXPORT_FOLDED, fx->path, ELOOP);
	snprintf(expected, sizeof(expected),
		 "alloctrace: cannot create %s: it is a symbolic link, which alloctrace does "
		 "not follow\n",
		 fx->path);
	assert_string_equal(msg, expected);
	free(msg);
	data = slurp(target, &len);
	assert_string_equal(data, "keep me\n");
	free(data);
}

static void test_refuses_directory(void **state)
{
	struct fixture *fx = *state;
	char expected[256], *msg;

	msg = failed_new(EXPORT_PPROF, fx->dir, EISDIR);
	snprintf(expected, sizeof(expected), "alloctrace: cannot create %s: %s\n", fx->dir,
		 strerror(EISDIR));
	assert_string_equal(msg, expected);
	free(msg);
}

static void test_no_such_directory(void **state)
{
	struct fixture *fx = *state;
	char path[192], expected[256], *msg;

	snprintf(path, sizeof(path), "%s/missing/out", fx->dir);
	msg = failed_new(EXPORT_FOLDED_COUNT, path, ENOENT);
	snprintf(expected, sizeof(expected), "alloctrace: cannot create %s: %s\n", path,
		 strerror(ENOENT));
	assert_string_equal(msg, expected);
	free(msg);
}

static void test_invalid_kind(void **state)
{
	struct fixture *fx = *state;
	struct stat st;

	free(failed_new((enum export_kind)NR_EXPORTS, fx->path, EINVAL));
	assert_int_equal(stat(fx->path, &st), -1);
}

/* @kind after a periodic report, the final one and an alert; the file. */
static char *export_run(const char *path, enum export_kind kind, size_t *len)
{
	struct report periodic = final_report;
	struct exporter *e;

	periodic.final = false;
	periodic.nr_stacks = 1;
	e = exporter__new(kind, path);
	assert_non_null(e);
	assert_int_equal(exporter__report(e, &periodic), 0);
	assert_int_equal(exporter__big_alloc(e, &big), 0);
	assert_int_equal(exporter__report(e, &final_report), 0);
	assert_int_equal(exporter__finish(e), 0);
	/* Once written, the file is done. */
	assert_int_equal(exporter__finish(e), -EINVAL);
	exporter__free(e);
	return slurp(path, len);
}

static void test_folded(void **state)
{
	struct fixture *fx = *state;
	size_t len;
	char *data;

	data = export_run(fx->path, EXPORT_FOLDED, &len);
	assert_string_equal(data, "[stack unknown] 100\nmain;leak_a 2400\n");
	free(data);
	data = export_run(fx->path, EXPORT_FOLDED_COUNT, &len);
	assert_string_equal(data, "[stack unknown] 1\nmain;leak_a 100\n");
	free(data);
}

/* Several processes: each stack under its process, the unknown one too. */
static void test_folded_by_process(void **state)
{
	static const struct report procs[] = {
	    {.pid = 1234,
	     .comm = "leaky",
	     .totals = &totals,
	     .nr_stacks = ARRAY_SIZE(stacks),
	     .stacks = stacks},
	    {.pid = 1240, .comm = "a;b", .totals = &totals, .nr_stacks = 1, .stacks = stacks},
	};
	struct report r = final_report;
	struct fixture *fx = *state;
	struct exporter *e;
	size_t len;
	char *data;

	r.per_process = true;
	r.nr_stacks = 0;
	r.stacks = NULL;
	r.procs = procs;
	r.nr_procs = r.nr_procs_total = ARRAY_SIZE(procs);
	e = exporter__new(EXPORT_FOLDED, fx->path);
	assert_non_null(e);
	assert_int_equal(exporter__report(e, &r), 0);
	assert_int_equal(exporter__finish(e), 0);
	exporter__free(e);
	data = slurp(fx->path, &len);
	assert_string_equal(data, "pid 1234 (leaky);[stack unknown] 100\n"
				  "pid 1234 (leaky);main;leak_a 2400\n"
				  "pid 1240 (a?b);main;leak_a 2400\n");
	free(data);
}

static void test_pprof(void **state)
{
	struct fixture *fx = *state;
	size_t len;
	char *data;

	data = export_run(fx->path, EXPORT_PPROF, &len);
	assert_true(len > 20);
	assert_memory_equal(data, "\x1f\x8b", 2);
	free(data);
}

static void test_html(void **state)
{
	struct fixture *fx = *state;
	size_t len;
	char *data;

	data = export_run(fx->path, EXPORT_HTML, &len);
	assert_true(len > 0);
	free(data);
}

/*
 * Every kind of export/kinds.def, a new one too, makes a file of the same
 * reports: its row's constructor and ops are there and whole.
 */
static void test_every_kind(void **state)
{
	struct fixture *fx = *state;
	size_t len;

	for (int kind = 0; kind < NR_EXPORTS; kind++) {
		free(export_run(fx->path, kind, &len));
		assert_true(len > 0);
	}
}

/* A write error shows at the end, once, and stays. */
/*
 * A file that cannot grow past 16 bytes (RLIMIT_FSIZE: writes past it fail
 * with EFBIG): the error is told once and returned ever after.
 */
static void test_write_error(void **state)
{
	struct fixture *fx = *state;
	struct rlimit old, small;
	struct exporter *e;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = (struct rlimit){.rlim_cur = 16, .rlim_max = old.rlim_max};
	signal(SIGXFSZ, SIG_IGN);
	e = exporter__new(EXPORT_FOLDED, fx->path);
	assert_non_null(e);
	assert_int_equal(exporter__report(e, &final_report), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	assert_int_equal(exporter__finish(e), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(exporter__report(e, &final_report), -EFBIG);
	assert_int_equal(exporter__big_alloc(e, &big), -EFBIG);
	assert_int_equal(exporter__finish(e), -EFBIG);
	exporter__free(e);
	signal(SIGXFSZ, SIG_DFL);
}

/*
 * Only regular files, outside /proc and /sys: a FIFO (which would block
 * the run), a device, a kernel setting.
 */
static void test_refuses_special(void **state)
{
	static const struct {
		const char *path, *why;
	} special[] = {
	    {NULL, "it is not a regular file"}, /* the FIFO */
	    {"/dev/null", "it is not a regular file"},
	    {"/proc/version", "it is a file of /proc or /sys, not one to write a report to"},
	};
	struct fixture *fx = *state;
	char expected[256], *msg;
	const char *path;

	assert_int_equal(mkfifo(fx->path, 0600), 0);
	for (size_t i = 0; i < ARRAY_SIZE(special); i++) {
		path = special[i].path ? special[i].path : fx->path;
		/* Never opened: a FIFO without a reader cannot hold the run. */
		msg = failed_new(EXPORT_FOLDED, path, EINVAL);
		snprintf(expected, sizeof(expected), "alloctrace: cannot create %s: %s\n", path,
			 special[i].why);
		assert_string_equal(msg, expected);
		free(msg);
	}
}

/* Freed without finishing: nothing at the name, no temporary file left. */
static void test_free_unfinished(void **state)
{
	struct fixture *fx = *state;
	struct exporter *e = exporter__new(EXPORT_PPROF, fx->path);
	struct stat st;
	struct dirent *de;
	DIR *d;

	assert_non_null(e);
	assert_int_equal(exporter__report(e, &final_report), 0);
	exporter__free(e);
	exporter__free(NULL);
	assert_int_equal(stat(fx->path, &st), -1);
	d = opendir(fx->dir);
	assert_non_null(d);
	while ((de = readdir(d)))
		assert_true(!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."));
	closedir(d);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void plant(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("keep\n", f);
	fclose(f);
}

/*
 * --pprof-dir: a file per report, named by pid, UTC time and number; the
 * oldest by the time in their names go first, whichever run wrote them,
 * until @keep are left; other names are never touched.
 */
static void test_pprof_dir(void **state)
{
	struct fixture *fx = *state;
	struct report r = final_report;
	char name[3][96];
	struct exporter *e;
	size_t len;
	char *data, path[256];

	plant(fx->dir, "alloctrace-1-20200101T000000Z-000009.pb.gz");
	plant(fx->dir, "alloctrace-7-20991231T235959Z-000001.pb.gz");
	plant(fx->dir, "alloctrace-1-2020.pb.gz");
	plant(fx->dir, "notes");
	e = exporter__new_pprof_dir(fx->dir, 2);
	assert_non_null(e);
	for (int i = 0; i < 3; i++) {
		snprintf(name[i], sizeof(name[i]), "alloctrace-%d-20231114T2213%02dZ-%06d.pb.gz",
			 (int)getpid(), 20 + i, i + 1);
		r.time = final_report.time + i;
		assert_int_equal(exporter__report(e, &r), 0);
		assert_true(exists(fx->dir, name[i]));
	}
	/* The files are written at each report: nothing is left for the end. */
	assert_int_equal(exporter__finish(e), 0);
	exporter__free(e);
	assert_false(exists(fx->dir, "alloctrace-1-20200101T000000Z-000009.pb.gz"));
	assert_false(exists(fx->dir, name[0]));
	assert_false(exists(fx->dir, name[1]));
	assert_true(exists(fx->dir, name[2]));
	/* Named as made in 2099: the newest, by its name. */
	assert_true(exists(fx->dir, "alloctrace-7-20991231T235959Z-000001.pb.gz"));
	assert_true(exists(fx->dir, "alloctrace-1-2020.pb.gz"));
	assert_true(exists(fx->dir, "notes"));
	snprintf(path, sizeof(path), "%s/.alloctrace-%d.tmp", fx->dir, (int)getpid());
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/%s", fx->dir, name[2]);
	data = slurp(path, &len);
	assert_true(len > 20);
	assert_memory_equal(data, "\x1f\x8b", 2);
	free(data);
}

/* A directory that is missing or is not one: one line naming it, at once. */
static void test_pprof_dir_refused(void **state)
{
	struct fixture *fx = *state;
	char missing[128], text[256], *log;

	snprintf(missing, sizeof(missing), "%s/none", fx->dir);
	log = failed_open(EXPORT_PPROF, missing, 60, ENOENT);
	snprintf(text, sizeof(text),
		 "alloctrace: cannot write pprof files to %s: No such file or directory\n",
		 missing);
	assert_string_equal(log, text);
	free(log);
	plant(fx->dir, "file");
	snprintf(missing, sizeof(missing), "%s/file", fx->dir);
	log = failed_open(EXPORT_PPROF, missing, 60, ENOTDIR);
	snprintf(text, sizeof(text),
		 "alloctrace: cannot write pprof files to %s: Not a directory\n", missing);
	assert_string_equal(log, text);
	free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_creates_fresh, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_replaces, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuses_symlink, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuses_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_such_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_kind, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_folded_by_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pprof, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_html, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_every_kind, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuses_special, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_free_unfinished, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pprof_dir, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pprof_dir_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
