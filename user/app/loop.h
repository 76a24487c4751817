/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_LOOP_H
#define ALLOCTRACE_APP_LOOP_H

#include "app/state.h"

/*
 * The event loop: it owns the session's fds (epoll, the signalfd, the
 * report timer, the exec retry timer) and hands each event to the file
 * whose job it is: reports, execs, the targets' ends, the BPF ring buffer.
 */

/* Signals come through a signalfd from now on. 0 or -errno. */
int loop__block_signals(struct session *s);

/* Make the timers and watch every fd. 0 or -errno. */
int loop__setup(struct session *s);

/* Until the run is done. 0 or -errno. */
int loop__run(struct session *s);

#endif
