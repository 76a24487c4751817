// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ELF objects shared by every process that maps them. Each process's
 * symbolizer once reported the objects it maps to a libdwfl session of its
 * own, so a server that forks a worker per connection had the same files
 * read, inflated and indexed again for each worker: libc's compressed
 * debug file alone took about 30 MiB and a tenth of a CPU second each time
 * (PostgreSQL under --comm: 150 MiB for a handful of backends). Here each
 * file is opened once, as the only module of a Dwfl at the file's own
 * addresses, and kept while any layout holds it.
 *
 * Two mappings share an object only when they are the same file (device,
 * inode, size and change time of the descriptor opened on it), named by
 * the same path (debug links are looked up beside it) under the same root
 * (in which that path resolves). Symbolizers are used from one thread
 * only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/debugfile.h"
#include "symbolize/objcache.h"

struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	bool has_root;
	dev_t root_dev;
	ino_t root_ino;
};

struct shared_object {
	struct object obj; /* first: objcache__put() is given &obj */
	struct file_id id;
	char *path;
	Dwfl *dwfl;
	int root_fd; /* the module's own copy, or -1 */
	unsigned int refs;
	struct shared_object *next;
};

static struct shared_object *objects;

static int file_id__get(struct file_id *id, int fd, int root_fd)
{
	struct stat st;

	*id = (struct file_id){0};
	if (fstat(fd, &st))
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->ctime = st.st_ctim;
	if (root_fd < 0)
		return 0;
	if (fstat(root_fd, &st))
		return -errno;
	id->has_root = true;
	id->root_dev = st.st_dev;
	id->root_ino = st.st_ino;
	return 0;
}

static bool file_id__equal(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec &&
	       a->has_root == b->has_root && a->root_dev == b->root_dev &&
	       a->root_ino == b->root_ino;
}

static void shared_object__free(struct shared_object *so)
{
	object__release(&so->obj);
	/* libdwfl owns the file's descriptor, and its modules use the root. */
	if (so->dwfl)
		dwfl_end(so->dwfl);
	if (so->root_fd >= 0)
		close(so->root_fd);
	free(so->path);
	free(so);
}

/* Takes @fd. */
static struct shared_object *shared_object__open(int fd, const char *path, int root_fd,
						 const struct file_id *id)
{
	struct shared_object *so;
	Dwfl_Module *mod;

	so = calloc(1, sizeof(*so));
	if (!so) {
		close(fd);
		return NULL;
	}
	so->id = *id;
	so->root_fd = root_fd >= 0 ? fcntl(root_fd, F_DUPFD_CLOEXEC, 0) : -1;
	so->path = strdup(path);
	so->dwfl = dwfl_begin(&debugfile_callbacks);
	if (!so->path || !so->dwfl || (root_fd >= 0 && so->root_fd < 0)) {
		close(fd);
		shared_object__free(so);
		errno = ENOMEM;
		return NULL;
	}
	dwfl_report_begin(so->dwfl);
	mod = dwfl_report_elf(so->dwfl, path, path, fd, 0, true);
	dwfl_report_end(so->dwfl, NULL, NULL);
	if (!mod) {
		close(fd);
		shared_object__free(so);
		errno = ENOEXEC;
		return NULL;
	}
	debugfile__set_root(mod, so->root_fd);
	so->obj.mod = mod;
	return so;
}

struct object *objcache__get(int fd, const char *path, int root_fd)
{
	struct shared_object *so;
	struct file_id id;
	int err;

	err = file_id__get(&id, fd, root_fd);
	if (err) {
		close(fd);
		errno = -err;
		return NULL;
	}
	for (so = objects; so; so = so->next) {
		if (file_id__equal(&so->id, &id) && !strcmp(so->path, path)) {
			close(fd);
			so->refs++;
			return &so->obj;
		}
	}
	so = shared_object__open(fd, path, root_fd, &id);
	if (!so)
		return NULL;
	so->refs = 1;
	so->next = objects;
	objects = so;
	return &so->obj;
}

void objcache__put(struct object *obj)
{
	struct shared_object *so = (struct shared_object *)obj, **p;

	if (!obj || --so->refs)
		return;
	for (p = &objects; *p != so; p = &(*p)->next)
		;
	*p = so->next;
	shared_object__free(so);
}
