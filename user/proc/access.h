/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ACCESS_H
#define ALLOCTRACE_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Who may use alloctrace's powers on what. Root (effective uid 0) traces
 * any process. Anyone else holds capabilities an administrator gave it
 * (or a binary's file capabilities gave it): it traces only the
 * processes it could ptrace without them, and reads no process's memory.
 */

/*
 * Refuse a setuid or setgid start (real, effective and saved ids not all
 * the same): the caller would act with someone else's powers. 0, or
 * -EPERM after one line saying so.
 */
int access__check_ids(void);

/* Whether the caller is not root, so that access__may_trace() limits it. */
bool access__limited(void);

/*
 * Whether the caller could ptrace @pid without any capability, as the
 * kernel's PTRACE_MODE_ATTACH_REALCREDS check without CAP_SYS_PTRACE:
 * the process's real, effective and saved uids and gids all the caller's
 * real ones, and the process dumpable. Always true for root.
 */
bool access__may_trace(pid_t pid);

#endif
