/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_METRICS_SERVER_H
#define ALLOCTRACE_METRICS_SERVER_H

#include <stdbool.h>
#include "cli/options.h"
#include "report/report.h"

/*
 * --listen: the latest report as Prometheus metrics at /metrics, served
 * from the session's event loop. Every function takes NULL (no --listen)
 * and then does nothing.
 */
struct metrics_server;

/*
 * Listen on --listen's address into *@out (NULL without --listen). 0, or
 * -errno after one line naming the address.
 */
int metrics_server__open(const struct options *opts, struct metrics_server **out);
void metrics_server__free(struct metrics_server *ms);

/* Serve from the loop of @epfd. 0 or -errno. */
int metrics_server__watch(struct metrics_server *ms, int epfd);
/* True if @fd was the server's, and its event was served. */
bool metrics_server__handle(struct metrics_server *ms, int fd);

/* What scrapes get from now on: @r, as the live report shows it. */
void metrics_server__report(struct metrics_server *ms, const struct report *r);
void metrics_server__big_alloc(struct metrics_server *ms, int pid);

#endif
