/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_HTTPD_H
#define ALLOCTRACE_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/*
 * A one-document HTTP/1.1 server inside the caller's epoll loop: no thread,
 * no blocking call. GET or HEAD of its path gets the document last set;
 * any other path 404, any other method 405, and every answer closes the
 * connection. At most HTTPD_MAX_CLIENTS connections of at most
 * HTTPD_MAX_REQUEST bytes of request each: a new client takes the place
 * of the oldest, and one still there HTTPD_TIMEOUT seconds later is
 * dropped at the next httpd__set_body(), so no client can hold the loop
 * or the server.
 */
#define HTTPD_MAX_CLIENTS 16
#define HTTPD_MAX_REQUEST 4096
#define HTTPD_TIMEOUT	  10

struct httpd;

/* Listen on @addr. NULL with errno set. @path and @type are kept, not copied. */
struct httpd *httpd__new(const struct sockaddr *addr, socklen_t len, const char *path,
			 const char *type);
void httpd__free(struct httpd *h);

/* Serve in @epfd's loop: its events carry the fd (data.fd). 0 or -errno. */
int httpd__watch(struct httpd *h, int epfd);

/* Serve what @fd's event asks, if @fd is the server's. True if it was. */
bool httpd__handle(struct httpd *h, int fd);

/* The document from now on (copied). 0 or -ENOMEM. */
int httpd__set_body(struct httpd *h, const char *body, size_t len);

#endif
