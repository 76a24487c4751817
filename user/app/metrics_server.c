// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include "app/metrics_server.h"
#include "export/metrics.h"
#include "lib/log.h"
#include "lib/webconfig.h"

/*
 * The limits that keep an idle flood from starving the scrapes. A scrape
 * takes one connection for a few milliseconds, and every answer closes it,
 * so a scraper never needs more than a few at once: each client address
 * may hold METRICS_PER_ADDRESS, so that clients at one address (17 that
 * reconnect when dropped, or 1,000) leave the other addresses' scrapes
 * alone; all of them together METRICS_CLIENTS, which bounds the fds the
 * server may take; a connection that sends nothing for METRICS_TIMEOUT
 * seconds is dropped. libmicrohttpd refuses a connection over a limit as
 * soon as it is accepted, where the old server dropped its oldest client.
 */
#define METRICS_CLIENTS	    256
#define METRICS_PER_ADDRESS 32
#define METRICS_TIMEOUT	    5
/* Two threads: a wrong password's bcrypt (tens of ms) stalls only one. */
#define METRICS_THREADS 2
/* A request's headers and the answer's: past it, 431. */
#define METRICS_MEMORY (8 * 1024)

/* One report's metrics, never changed once published; freed by its last reader. */
struct doc {
	atomic_uint refs;
	size_t len;
	char text[];
};

struct metrics_server {
	struct metrics *metrics; /* the loop's alone */
	struct web_config *web;	 /* NULL without --web-config */
	const char *addr;
	int fd; /* the listening socket until the daemon owns it */
	struct MHD_Daemon *daemon;
	atomic_bool starting; /* libmicrohttpd's messages explain a failed start */
	char why[200];
	bool failed; /* told once */
	pthread_mutex_t lock;
	struct doc *doc; /* under lock: the latest, NULL before the first report */
	char **verified; /* under lock: per user, the last password bcrypt accepted */
};

static void doc_put(void *cls)
{
	struct doc *d = cls;

	if (d && atomic_fetch_sub(&d->refs, 1) == 1)
		free(d);
}

static int start(struct metrics_server *ms, const struct listen_addr *la);

static bool loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24 == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Anyone who reaches a port beyond loopback reads what the targets hold. */
static void warn_exposed(const struct metrics_server *ms, const struct listen_addr *la)
{
	bool tls = ms->web && ms->web->cert_pem, auth = ms->web && ms->web->nr_users;

	if (loopback(&la->addr) || (tls && auth))
		return;
	pr_warn("--listen %s serves beyond this machine without %s: add them with --web-config",
		la->text,
		tls    ? "authentication"
		: auth ? "TLS"
		       : "TLS or authentication");
}

static int listen_on(const struct listen_addr *la)
{
	int fd = socket(la->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd >= 0 && !setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int)) &&
	    !bind(fd, (const struct sockaddr *)&la->addr, la->len) && !listen(fd, SOMAXCONN))
		return fd;
	if (fd >= 0) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return -1;
}

int metrics_server__open(const struct options *opts, struct metrics_server **out)
{
	const struct listen_addr *la = &opts->listen;
	struct metrics_server *ms;
	int err;

	*out = NULL;
	if (!la->text)
		return 0;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	ms->addr = la->text;
	ms->fd = -1;
	pthread_mutex_init(&ms->lock, NULL);
	if (la->web_config && (err = web_config__load(la->web_config, &ms->web))) {
		metrics_server__free(ms);
		return err;
	}
	ms->verified = calloc(ms->web ? ms->web->nr_users + 1 : 1, sizeof(char *));
	ms->metrics = metrics__new(opts->top);
	if (ms->verified && ms->metrics)
		ms->fd = listen_on(la);
	if (ms->fd < 0) {
		err = errno;
		pr_err("cannot listen on %s: %s", la->text, strerror(err));
		metrics_server__free(ms);
		return -err;
	}
	err = start(ms, la);
	if (err) {
		metrics_server__free(ms);
		return err;
	}
	warn_exposed(ms, la);
	*out = ms;
	return 0;
}

void metrics_server__free(struct metrics_server *ms)
{
	if (!ms)
		return;
	if (ms->daemon)
		MHD_stop_daemon(ms->daemon); /* closes the listening socket */
	else if (ms->fd >= 0)
		close(ms->fd);
	for (size_t i = 0; ms->verified && ms->web && i < ms->web->nr_users; i++)
		free(ms->verified[i]);
	free(ms->verified);
	doc_put(ms->doc);
	pthread_mutex_destroy(&ms->lock);
	web_config__free(ms->web);
	metrics__free(ms->metrics);
	free(ms);
}

/* Equal strings, in a time that does not say where they differ. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return !diff;
}

/* Whether @pass is user @u's (NULL: no such user, checked as long all the same). */
static bool password_ok(struct metrics_server *ms, ssize_t u, const char *pass)
{
	const char *hash = ms->web->users[u < 0 ? 0 : u].hash;
	struct crypt_data *data;
	bool ok = false;
	char *out;

	/* bcrypt costs tens of ms a try: a scraper's password is checked once. */
	pthread_mutex_lock(&ms->lock);
	if (u >= 0 && ms->verified[u])
		ok = same(ms->verified[u], pass);
	pthread_mutex_unlock(&ms->lock);
	if (ok)
		return true;
	data = calloc(1, sizeof(*data));
	out = data ? crypt_r(pass, hash, data) : NULL;
	ok = u >= 0 && out && same(out, hash);
	free(data);
	if (ok) {
		char *copy = strdup(pass);

		pthread_mutex_lock(&ms->lock);
		free(ms->verified[u]);
		ms->verified[u] = copy;
		pthread_mutex_unlock(&ms->lock);
	}
	return ok;
}

static bool authorized(struct metrics_server *ms, struct MHD_Connection *c)
{
	char *pass = NULL, *user;
	ssize_t u = -1;
	bool ok = false;

	if (!ms->web || !ms->web->nr_users)
		return true;
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (user && pass) {
		for (size_t i = 0; i < ms->web->nr_users; i++) {
			if (!strcmp(ms->web->users[i].name, user))
				u = (ssize_t)i;
		}
		ok = password_ok(ms, u, pass);
	}
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

/* Answer @status, with @d's text for 200; every answer closes the connection. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, struct doc *d)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp =
	    d ? MHD_create_response_from_buffer_with_free_callback_cls(d->len, d->text, doc_put, d)
	      : MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		doc_put(d);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (d)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/plain; version=0.0.4; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	if (status == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(c, "alloctrace", resp);
	else
		ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* libmicrohttpd's request callback, in its threads: reads the published document only. */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **req)
{
	struct metrics_server *ms = cls;
	struct doc *d;

	if (!authorized(ms, c))
		return reply(c, MHD_HTTP_UNAUTHORIZED, NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, NULL);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, NULL);
	pthread_mutex_lock(&ms->lock);
	d = ms->doc;
	if (d)
		atomic_fetch_add(&d->refs, 1);
	pthread_mutex_unlock(&ms->lock);
	return d ? reply(c, MHD_HTTP_OK, d) : reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, NULL);
}

/* libmicrohttpd's messages: a failed start's reason, else only with --verbose. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics_server *ms = cls;
	char msg[sizeof(ms->why)];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	if (atomic_load(&ms->starting))
		memcpy(ms->why, msg, sizeof(msg));
	else
		pr_debug("metrics server: %s", msg);
}

/* Serve from threads of libmicrohttpd's, which own the listening socket from then on. */
static int start(struct metrics_server *ms, const struct listen_addr *la)
{
	bool tls = ms->web && ms->web->cert_pem;
	size_t n;
	sigset_t all, old;

	/* The loop takes its signals from a signalfd: no server thread may take one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&ms->starting, true);
	/* Without TLS the option list ends before the key. */
	ms->daemon = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
		(tls ? MHD_USE_TLS : 0),
	    0, NULL, NULL, answer, ms, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, ms,
	    MHD_OPTION_LISTEN_SOCKET, ms->fd, MHD_OPTION_THREAD_POOL_SIZE, METRICS_THREADS,
	    MHD_OPTION_CONNECTION_LIMIT, METRICS_CLIENTS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    METRICS_PER_ADDRESS, MHD_OPTION_CONNECTION_TIMEOUT, METRICS_TIMEOUT,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_MEMORY,
	    tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, tls ? ms->web->key_pem : NULL,
	    MHD_OPTION_HTTPS_MEM_CERT, tls ? ms->web->cert_pem : NULL, MHD_OPTION_END);
	atomic_store(&ms->starting, false);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ms->daemon) {
		ms->fd = -1;
		return 0;
	}
	n = strlen(ms->why);
	if (n && ms->why[n - 1] == '.')
		ms->why[n - 1] = '\0';
	pr_err("cannot serve on %s%s%s: %s", la->text,
	       tls ? " with the certificate and key of " : "", tls ? la->web_config : "",
	       *ms->why ? ms->why : "libmicrohttpd failed");
	return -EINVAL;
}

static void metrics_server__check(struct metrics_server *ms, int err)
{
	if (err && !ms->failed)
		pr_err("cannot serve the metrics of %s: %s", ms->addr, strerror(-err));
	ms->failed |= !!err;
}

/* @text as the document scrapes get from now on; the one before goes with its last reader. */
static int publish(struct metrics_server *ms, const char *text, size_t len)
{
	struct doc *d = malloc(sizeof(*d) + len), *old;

	if (!d)
		return -ENOMEM;
	atomic_init(&d->refs, 1);
	d->len = len;
	memcpy(d->text, text, len);
	pthread_mutex_lock(&ms->lock);
	old = ms->doc;
	ms->doc = d;
	pthread_mutex_unlock(&ms->lock);
	doc_put(old);
	return 0;
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
		err = publish(ms, text, len);
	free(text);
	metrics_server__check(ms, err);
}

void metrics_server__big_alloc(struct metrics_server *ms, int pid)
{
	if (ms)
		metrics_server__check(ms, metrics__big_alloc(ms->metrics, pid));
}
