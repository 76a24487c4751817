/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OUTFILE_H
#define ALLOCTRACE_OUTFILE_H

#include <limits.h>
#include <stdbool.h>

/*
 * An output file that is the caller's and no one else's: made fresh, mode
 * 0600, under a temporary name in its directory, then renamed over its
 * name. The directory is reached without following a symbolic link in any
 * component, and it and every directory above it may be changed only by
 * root and the caller (as sshd's StrictModes asks: owned by one of them,
 * and not writable by group or others unless sticky). A file another user
 * planted at the name is never written through, only replaced.
 */
struct out_file {
	int dir_fd;		 /* the directory (O_PATH) */
	int fd;			 /* the new file, -1 once handed on */
	char tmp[64];		 /* its temporary name; "" once renamed into place */
	char base[NAME_MAX + 1]; /* its name */
};

/*
 * A new file to become @path, under its temporary name. 0 or -errno, after
 * one line "cannot create PATH: WHY".
 */
int out_file__create(struct out_file *o, const char *path);
/* Rename it over @path. 0 or -errno, after one line naming @path. */
int out_file__publish(struct out_file *o, const char *path);
/*
 * The run failed before tracing: remove the temporary file, or the
 * renamed one if it is still ours and empty. Then release @o.
 */
void out_file__discard(struct out_file *o);
void out_file__release(struct out_file *o);

/*
 * Remove @path if it is still the empty file open as @fd: a file put in
 * its place meanwhile is not ours to remove.
 */
void out_path_remove_empty(const char *path, int fd);

/* A temporary file of @dir_fd, O_EXCL, 0600, its name in @tmp. fd or -errno. */
int out_tmp_open(int dir_fd, char *tmp, size_t size);
/*
 * The directory @path itself, reached as out_file__create reaches a file's
 * directory (O_PATH). fd, or -errno after one line "cannot write @what to
 * PATH: WHY".
 */
int out_dir_open(const char *path, const char *what);

#endif
