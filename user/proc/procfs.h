/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PROCFS_H
#define ALLOCTRACE_PROCFS_H

/* What /proc/PID tells of a process, read when asked. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The name of thread @tid of process @pid into @buf; empty if it is gone. */
void proc_thread_name(pid_t pid, uint32_t tid, char *buf, size_t size);

/*
 * Process @pid's pid in the innermost pid namespace it lives in, when that
 * is not alloctrace's; 0 otherwise or when it is gone.
 */
pid_t proc_ns_pid(pid_t pid);

/* Resident memory of process @pid in bytes, 0 when it is gone. */
uint64_t proc_rss(pid_t pid);

/* Copy up to @len bytes of process @pid's memory at @addr. Bytes read or -errno. */
long proc_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Process @pid has exited, or is a zombie: nothing of it left to stop or read. */
bool proc_gone(pid_t pid);

#endif
