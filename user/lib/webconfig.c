// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/log.h"
#include "lib/webconfig.h"

/* A web configuration is a few lines, a PEM file a few KiB: anything bigger is not one. */
#define WEB_FILE_MAX (1024 * 1024)

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

struct parser {
	const char *path;
	unsigned int line;
	enum section section;
	int child_indent; /* of the section's lines, -1 before the first */
	bool seen_tls, seen_users;
	struct web_config *wc;
};

static int bad(const struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(const struct parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("%s:%u: %s", p->path, p->line, msg);
	return -EINVAL;
}

/* Cut a comment (a '#' at the start or after a blank, outside quotes) and trailing blanks. */
static void strip(char *s)
{
	char quote = 0;
	size_t n;

	for (char *c = s; *c; c++) {
		if (quote) {
			quote = *c == quote ? 0 : quote;
		} else if (*c == '"' || *c == '\'') {
			quote = *c;
		} else if (*c == '#' && (c == s || c[-1] == ' ')) {
			*c = '\0';
			break;
		}
	}
	n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
}

/* @v without its quotes, in place; NULL (after the message) for YAML we do not read. */
static char *scalar(const struct parser *p, char *v)
{
	size_t n = strlen(v);

	if (*v == '"' || *v == '\'') {
		if (n < 2 || v[n - 1] != *v || memchr(v + 1, *v, n - 2) || memchr(v, '\\', n)) {
			bad(p, "a quoted value must be one plain string, without escapes");
			return NULL;
		}
		v[n - 1] = '\0';
		return v + 1;
	}
	if (*v && strchr("{[|>&*!%@`", *v)) {
		bad(p, "'%c': only block style with plain or quoted values is supported", *v);
		return NULL;
	}
	return v;
}

/* bcrypt's modular format: $2b$NN$ then 53 characters of its base64. */
static bool is_bcrypt(const char *h)
{
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	return strspn(h + 7, "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") ==
	       53;
}

/* @file as the toolkit reads it: relative to the configuration's directory. */
static char *file_path(const struct parser *p, const char *file)
{
	const char *slash = strrchr(p->path, '/');
	char *out;

	if (*file == '/' || !slash)
		return strdup(file);
	if (asprintf(&out, "%.*s/%s", (int)(slash - p->path), p->path, file) < 0)
		return NULL;
	return out;
}

static int tls_key(struct parser *p, const char *key, const char *val)
{
	char **slot;

	if (!strcmp(key, "cert_file"))
		slot = &p->wc->cert_file;
	else if (!strcmp(key, "key_file"))
		slot = &p->wc->key_file;
	else
		return bad(p,
			   "tls_server_config: '%s' is not supported (only cert_file and key_file)",
			   key);
	if (*slot)
		return bad(p, "tls_server_config: '%s' given twice", key);
	if (!*val)
		return bad(p, "tls_server_config: '%s' needs a file name", key);
	*slot = file_path(p, val);
	return *slot ? 0 : -ENOMEM;
}

static int user_key(struct parser *p, const char *name, const char *hash)
{
	struct web_config *wc = p->wc;
	struct web_user *users;

	for (size_t i = 0; i < wc->nr_users; i++) {
		if (!strcmp(wc->users[i].name, name))
			return bad(p, "basic_auth_users: '%s' given twice", name);
	}
	if (!is_bcrypt(hash))
		return bad(p,
			   "basic_auth_users: the hash of '%s' is not bcrypt ($2y$, $2b$ or $2a$, "
			   "60 characters: htpasswd -nbB)",
			   name);
	users = realloc(wc->users, (wc->nr_users + 1) * sizeof(*users));
	if (!users)
		return -ENOMEM;
	wc->users = users;
	users[wc->nr_users].name = strdup(name);
	users[wc->nr_users].hash = strdup(hash);
	wc->nr_users++;
	return users[wc->nr_users - 1].name && users[wc->nr_users - 1].hash ? 0 : -ENOMEM;
}

static int top_key(struct parser *p, const char *key, const char *val)
{
	bool *seen;

	if (!strcmp(key, "tls_server_config"))
		p->section = SEC_TLS, seen = &p->seen_tls;
	else if (!strcmp(key, "basic_auth_users"))
		p->section = SEC_USERS, seen = &p->seen_users;
	else if (!strcmp(key, "http_server_config") || !strcmp(key, "rate_limit"))
		return bad(p, "'%s' is not supported (only tls_server_config and basic_auth_users)",
			   key);
	else
		return bad(p, "unknown key '%s' (expected tls_server_config or basic_auth_users)",
			   key);
	if (*seen)
		return bad(p, "'%s' given twice", key);
	if (*val)
		return bad(p, "'%s' takes indented 'key: value' lines below it", key);
	*seen = true;
	p->child_indent = -1;
	return 0;
}

static int parse_line(struct parser *p, char *s)
{
	int indent = (int)strspn(s, " ");
	char *key = s + indent, *val, *colon;

	if (key[0] == '\t')
		return bad(p, "a tab: YAML indents with spaces");
	strip(key);
	if (!*key || !strcmp(key, "---"))
		return 0;
	colon = strstr(key, ": ");
	if (!colon && key[strlen(key) - 1] == ':')
		colon = key + strlen(key) - 1;
	if (!colon || colon == key)
		return bad(p, "expected 'key: value'");
	*colon = '\0';
	key = scalar(p, key);
	val = key ? scalar(p, colon[1] ? colon + 2 + strspn(colon + 2, " ") : colon + 1) : NULL;
	if (!val)
		return -EINVAL;
	if (!indent)
		return top_key(p, key, val);
	if (p->section == SEC_NONE)
		return bad(p, "an indented line outside tls_server_config and basic_auth_users");
	if (p->child_indent < 0)
		p->child_indent = indent;
	if (indent != p->child_indent)
		return bad(p, "indented unlike the line above: nested values are not supported");
	return p->section == SEC_TLS ? tls_key(p, key, val) : user_key(p, key, val);
}

int web_config__parse(const char *path, const char *text, struct web_config **out)
{
	struct parser p = {.path = path};
	char *copy = strdup(text), *line, *next;
	int err = 0;

	*out = NULL;
	p.wc = calloc(1, sizeof(*p.wc));
	if (!copy || !p.wc)
		err = -ENOMEM;
	for (line = copy; !err && line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line[strcspn(line, "\r")] = '\0';
		p.line++;
		err = parse_line(&p, line);
	}
	free(copy);
	if (!err && !p.wc->cert_file != !p.wc->key_file) {
		pr_err("%s: tls_server_config needs both cert_file and key_file", path);
		err = -EINVAL;
	}
	if (err) {
		web_config__free(p.wc);
		return err;
	}
	*out = p.wc;
	return 0;
}

/* @path's text into *@out, NUL-terminated. 0, or -errno after one line naming @what and @path. */
static int read_text(const char *what, const char *path, char **out)
{
	/* O_NONBLOCK: a FIFO put there must not hang the start. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err = 0;
	struct stat st;
	ssize_t n = 0;

	*out = NULL;
	if (fd < 0 || fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (st.st_size > WEB_FILE_MAX)
		err = -EFBIG;
	else if (!(*out = calloc(1, st.st_size + 1)))
		err = -ENOMEM;
	else if ((n = read(fd, *out, st.st_size)) < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	if (!err)
		return 0;
	pr_err("cannot read %s %s: %s", what, path,
	       err == -EINVAL ? "not a regular file" : strerror(-err));
	free(*out);
	*out = NULL;
	return err;
}

int web_config__load(const char *path, struct web_config **out)
{
	struct web_config *wc = NULL;
	char *text;
	int err = read_text("the web configuration", path, &text);

	*out = NULL;
	if (!err)
		err = web_config__parse(path, text, &wc);
	free(text);
	if (!err && wc->cert_file)
		err = read_text("the certificate", wc->cert_file, &wc->cert_pem);
	if (!err && wc->key_file)
		err = read_text("the key", wc->key_file, &wc->key_pem);
	if (err) {
		web_config__free(wc);
		return err;
	}
	*out = wc;
	return 0;
}

void web_config__free(struct web_config *wc)
{
	if (!wc)
		return;
	free(wc->cert_file);
	free(wc->key_file);
	free(wc->cert_pem);
	free(wc->key_pem);
	for (size_t i = 0; i < wc->nr_users; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	free(wc);
}
