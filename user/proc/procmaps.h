/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PROCMAPS_H
#define ALLOCTRACE_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. */
struct mapping {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff; /* file offset of start */
	uint64_t inode;
	unsigned int dev_major;
	unsigned int dev_minor;
	bool read;
	bool write;
	bool exec;
	bool deleted; /* the file was unlinked; " (deleted)" is cut from path */
	char *path;   /* NULL for anonymous memory; "[stack]" etc. kept as is */
};

struct proc_maps {
	struct mapping *maps; /* sorted by start, as the kernel lists them */
	size_t nr;
};

/* Both return 0 or -errno; on error @out is left empty. */
int proc_maps__read(pid_t pid, struct proc_maps *out);
int proc_maps__parse(FILE *f, struct proc_maps *out);
void proc_maps__release(struct proc_maps *m);

/* The mapping holding @addr, or NULL. */
const struct mapping *proc_maps__find(const struct proc_maps *m, uint64_t addr);

/* True for a mapping backed by a regular file (not [vdso], not anonymous). */
bool mapping__is_file(const struct mapping *map);

/*
 * True for private anonymous memory as the kernel means it
 * (vma_is_anonymous()): no path, [heap] or a name given by prctl
 * ([anon:NAME]); not [stack], which grows down, nor the kernel's own
 * mappings ([vdso], [vvar], [uprobes]), nor shared memory, which has a path.
 */
bool mapping__is_anonymous(const struct mapping *map);

#endif
