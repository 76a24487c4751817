/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_WEBCONFIG_H
#define ALLOCTRACE_WEBCONFIG_H

#include <stddef.h>

/*
 * --web-config: the subset of the Prometheus exporter toolkit's web
 * configuration file (--web.config.file) that alloctrace serves with,
 * read once at the start:
 *
 *   tls_server_config:
 *     cert_file: server.crt     # PEM; relative to the file's directory
 *     key_file: server.key
 *   basic_auth_users:
 *     alice: $2y$10$...         # bcrypt
 *
 * Block style only, one key a line, values plain or quoted. Anything else
 * the toolkit knows (client_auth_type, min_version, http_server_config,
 * rate_limit, ...) is refused, not ignored, so that no setting is believed
 * in force when it is not.
 */
struct web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$, 60 characters */
};

struct web_config {
	char *cert_file, *key_file; /* both or neither */
	char *cert_pem, *key_pem;   /* their text, read by web_config__load() */
	struct web_user *users;
	size_t nr_users;
};

/*
 * Read @path, and the certificate and key it names, into *@out. 0, or
 * -errno after one line naming the file and, for what it says, the line.
 */
int web_config__load(const char *path, struct web_config **out);
/* The same from @text, @path only naming it in messages and for relative paths. */
int web_config__parse(const char *path, const char *text, struct web_config **out);
void web_config__free(struct web_config *wc);

#endif
