/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_KEEPER_H
#define ALLOCTRACE_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A keeper: a process forked to be the tracer of one snapshot, so that
 * alloctrace's death (SIGKILL, an OOM kill) at any instant leaves the
 * target with a tracer that finishes or undoes the step under way. It is
 * made to outlive alloctrace: its own session (no terminal's or process
 * group's signal reaches it), the catchable signals ignored, out of the
 * OOM killer's choice (oom_score_adj -1000), and no descriptor of
 * alloctrace's kept but a socket to it, whose end of file is its word
 * that alloctrace is gone.
 *
 * In the caller: the keeper's pid, *@fd the caller's end of the socket,
 * or -errno. In the keeper: 0, *@fd its end.
 */
pid_t keeper__fork(int *fd);

/* Whole messages, retried on EINTR: 0, -EPIPE when the other side is gone, or -errno. */
int keeper__send(int fd, const void *buf, size_t len);
int keeper__recv(int fd, void *buf, size_t len);

/* Has the other side closed its end? */
bool keeper__peer_gone(int fd);

#endif
