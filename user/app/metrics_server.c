// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "app/metrics_server.h"
#include "export/metrics.h"
#include "lib/httpd.h"
#include "lib/log.h"

struct metrics_server {
	struct metrics *metrics;
	struct httpd *httpd;
	const char *addr;
	bool failed; /* told once */
};

int metrics_server__open(const struct options *opts, struct metrics_server **out)
{
	const struct listen_addr *la = &opts->listen;
	struct metrics_server *ms;
	int err;

	*out = NULL;
	if (!la->text)
		return 0;
	ms = calloc(1, sizeof(*ms));
	if (ms) {
		ms->addr = la->text;
		ms->metrics = metrics__new(opts->top);
		ms->httpd = httpd__new((const struct sockaddr *)&la->addr, la->len, "/metrics",
				       "text/plain; version=0.0.4; charset=utf-8");
	}
	if (ms && ms->metrics && ms->httpd) {
		*out = ms;
		return 0;
	}
	err = errno;
	pr_err("cannot listen on %s: %s", la->text, strerror(err));
	metrics_server__free(ms);
	return -err;
}

void metrics_server__free(struct metrics_server *ms)
{
	if (!ms)
		return;
	metrics__free(ms->metrics);
	httpd__free(ms->httpd);
	free(ms);
}

int metrics_server__watch(struct metrics_server *ms, int epfd)
{
	return ms ? httpd__watch(ms->httpd, epfd) : 0;
}

bool metrics_server__handle(struct metrics_server *ms, int fd)
{
	return ms && httpd__handle(ms->httpd, fd);
}

static void metrics_server__check(struct metrics_server *ms, int err)
{
	if (err && !ms->failed)
		pr_err("cannot serve the metrics of %s: %s", ms->addr, strerror(-err));
	ms->failed |= !!err;
}

void metrics_server__report(struct metrics_server *ms, const struct report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (!ms)
		return;
	f = open_memstream(&text, &len);
	if (!f) {
		metrics_server__check(ms, -errno);
		return;
	}
	err = metrics__render(ms->metrics, r, f);
	if (fclose(f) && !err)
		err = -errno;
	if (!err)
		err = httpd__set_body(ms->httpd, text, len);
	free(text);
	metrics_server__check(ms, err);
}

void metrics_server__big_alloc(struct metrics_server *ms, int pid)
{
	if (ms)
		metrics_server__check(ms, metrics__big_alloc(ms->metrics, pid));
}
