// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include "lib/httpd.h"

struct client {
	int fd; /* -1: a free slot */
	time_t since;
	size_t req_len;
	char req[HTTPD_MAX_REQUEST];
	char *resp; /* NULL until the request is whole */
	size_t resp_len, sent;
};

struct httpd {
	int fd;
	int epfd;
	const char *path;
	const char *type;
	char *body; /* NULL before the first document */
	size_t body_len;
	struct client clients[HTTPD_MAX_CLIENTS];
};

static time_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

struct httpd *httpd__new(const struct sockaddr *addr, socklen_t len, const char *path,
			 const char *type)
{
	struct httpd *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return NULL;
	h->epfd = -1;
	h->path = path;
	h->type = type;
	for (int i = 0; i < HTTPD_MAX_CLIENTS; i++)
		h->clients[i].fd = -1;
	h->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd >= 0 && !setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int)) &&
	    !bind(h->fd, addr, len) && !listen(h->fd, HTTPD_MAX_CLIENTS))
		return h;
	err = errno;
	httpd__free(h);
	errno = err;
	return NULL;
}

static void client_close(struct httpd *h, struct client *c)
{
	if (c->fd < 0)
		return;
	/* Closing the fd takes it out of the epoll set. */
	close(c->fd);
	free(c->resp);
	c->fd = -1;
	c->resp = NULL;
}

void httpd__free(struct httpd *h)
{
	if (!h)
		return;
	for (int i = 0; i < HTTPD_MAX_CLIENTS; i++)
		client_close(h, &h->clients[i]);
	if (h->fd >= 0)
		close(h->fd);
	free(h->body);
	free(h);
}

int httpd__watch(struct httpd *h, int epfd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = h->fd};

	h->epfd = epfd;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, h->fd, &ev) ? -errno : 0;
}

/* A free slot, or the oldest client's, which goes. */
static struct client *client_slot(struct httpd *h)
{
	struct client *oldest = &h->clients[0];

	for (int i = 0; i < HTTPD_MAX_CLIENTS; i++) {
		if (h->clients[i].fd < 0)
			return &h->clients[i];
		if (h->clients[i].since < oldest->since)
			oldest = &h->clients[i];
	}
	client_close(h, oldest);
	return oldest;
}

static void accept_clients(struct httpd *h)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct client *c;
	int fd;

	while ((fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		c = client_slot(h);
		c->fd = fd;
		c->since = now();
		c->req_len = c->sent = 0;
		ev.data.fd = fd;
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev))
			client_close(h, c);
	}
}

/* The answer to a whole request (or to one too long to be). */
static int respond(struct httpd *h, struct client *c, bool whole)
{
	char method[8] = "", path[256] = "";
	const char *status = "200 OK", *extra = "";
	bool head, body;
	FILE *f;

	if (whole)
		sscanf(c->req, "%7s %255[^? ]", method, path);
	head = !strcmp(method, "HEAD");
	if (!whole)
		status = "431 Request Header Fields Too Large";
	else if (!head && strcmp(method, "GET"))
		status = "405 Method Not Allowed", extra = "Allow: GET, HEAD\r\n";
	else if (strcmp(path, h->path))
		status = "404 Not Found";
	else if (!h->body)
		status = "503 Service Unavailable", extra = "Retry-After: 1\r\n";
	body = *status == '2';
	f = open_memstream(&c->resp, &c->resp_len);
	if (!f)
		return -errno;
	fprintf(f, "HTTP/1.1 %s\r\nConnection: close\r\n%sContent-Length: %zu\r\n", status, extra,
		body ? h->body_len : 0);
	if (body)
		fprintf(f, "Content-Type: %s\r\n", h->type);
	fputs("\r\n", f);
	if (body && !head)
		fwrite(h->body, 1, h->body_len, f);
	return fclose(f) ? -errno : 0;
}

/* Read what the client sent; 1 once it has a response, 0 to wait, -errno to drop it. */
static int read_request(struct httpd *h, struct client *c)
{
	size_t room = sizeof(c->req) - 1 - c->req_len;
	ssize_t n = recv(c->fd, c->req + c->req_len, room, 0);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	c->req_len += n;
	c->req[c->req_len] = '\0';
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		return respond(h, c, true) ?: 1;
	if (c->req_len == sizeof(c->req) - 1)
		return respond(h, c, false) ?: 1;
	return 0;
}

/* Send what the socket takes now; the rest when it says it has room. */
static void serve(struct httpd *h, struct client *c)
{
	struct epoll_event ev = {.events = EPOLLOUT, .data.fd = c->fd};
	int ret = c->resp ? 1 : read_request(h, c);
	ssize_t n;

	if (ret <= 0) {
		if (ret < 0)
			client_close(h, c);
		return;
	}
	while (c->sent < c->resp_len) {
		n = send(c->fd, c->resp + c->sent, c->resp_len - c->sent, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		if (n < 0)
			break;
		c->sent += n;
	}
	client_close(h, c);
}

bool httpd__handle(struct httpd *h, int fd)
{
	if (!h)
		return false;
	if (fd == h->fd) {
		accept_clients(h);
		return true;
	}
	for (int i = 0; i < HTTPD_MAX_CLIENTS; i++) {
		if (h->clients[i].fd == fd) {
			serve(h, &h->clients[i]);
			return true;
		}
	}
	return false;
}

int httpd__set_body(struct httpd *h, const char *body, size_t len)
{
	char *copy = malloc(len + 1);
	time_t t = now();

	if (!copy)
		return -ENOMEM;
	memcpy(copy, body, len);
	free(h->body);
	h->body = copy;
	h->body_len = len;
	for (int i = 0; i < HTTPD_MAX_CLIENTS; i++) {
		if (h->clients[i].fd >= 0 && t - h->clients[i].since >= HTTPD_TIMEOUT)
			client_close(h, &h->clients[i]);
	}
	return 0;
}
