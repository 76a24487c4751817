/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_METRICS_SERVER_H
#define ALLOCTRACE_METRICS_SERVER_H

#include "cli/options.h"
#include "report/report.h"

/*
 * --listen: the latest report as Prometheus metrics at /metrics, served by
 * libmicrohttpd from threads of its own, so that a scrape is answered while
 * the loop scans or reports. The loop renders each report into a new
 * immutable document and publishes it; the server's threads only ever read
 * the published document, never the session. Every function takes NULL
 * (no --listen) and then does nothing.
 */
struct metrics_server;

/*
 * Serve on --listen's address, with --web-config's TLS and users, into
 * *@out (NULL without --listen): 503 until the first report. 0, or -errno
 * after one line naming the address or the file.
 */
int metrics_server__open(const struct options *opts, struct metrics_server **out);
void metrics_server__free(struct metrics_server *ms);

/* What scrapes get from now on: @r, as the live report shows it. */
void metrics_server__report(struct metrics_server *ms, const struct report *r);
void metrics_server__big_alloc(struct metrics_server *ms, int pid);

#endif
