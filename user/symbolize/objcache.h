/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OBJCACHE_H
#define ALLOCTRACE_OBJCACHE_H

#include "symbolize/objindex.h"

/*
 * The object of the ELF file open on @fd, which a process maps as @path
 * and whose debug links resolve under @root_fd (-1: none): the one already
 * open for that file, path and root, or a new one. Its module is at the
 * file's own addresses. Takes @fd, also on failure. NULL with errno set
 * when libdwfl cannot read the file.
 */
struct object *objcache__get(int fd, const char *path, int root_fd);

/* Lets go of @obj (may be NULL): closed once no layout holds it. */
void objcache__put(struct object *obj);

#endif
