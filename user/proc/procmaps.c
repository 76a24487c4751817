// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procmaps.h"

#define DELETED_SUFFIX " (deleted)"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* strtoull would accept signs, spaces and "0x", which the kernel never writes. */
static bool parse_hex(const char **p, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	int digit;

	for (; (digit = hex_digit(*s)) >= 0; s++) {
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)digit;
	}
	if (s == *p)
		return false;
	*p = s;
	*val = v;
	return true;
}

static bool parse_dec(const char **p, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned int digit;

	for (; *s >= '0' && *s <= '9'; s++) {
		digit = (unsigned int)(*s - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return false;
		v = v * 10 + digit;
	}
	if (s == *p)
		return false;
	*p = s;
	*val = v;
	return true;
}

static bool skip_char(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

static bool parse_flag(const char **p, char set, bool *flag)
{
	*flag = **p == set;
	if (!*flag && **p != '-')
		return false;
	(*p)++;
	return true;
}

static bool parse_perms(const char **p, struct mapping *map)
{
	if (!parse_flag(p, 'r', &map->read) || !parse_flag(p, 'w', &map->write) ||
	    !parse_flag(p, 'x', &map->exec))
		return false;
	return skip_char(p, 'p') || skip_char(p, 's');
}

static bool parse_dev(const char **p, struct mapping *map)
{
	uint64_t major, minor;

	if (!parse_hex(p, &major) || !skip_char(p, ':') || !parse_hex(p, &minor))
		return false;
	if (major > UINT_MAX || minor > UINT_MAX)
		return false;
	map->dev_major = (unsigned int)major;
	map->dev_minor = (unsigned int)minor;
	return true;
}

/* @p is what follows the inode: padding, then the name if there is one. */
static int mapping__set_path(struct mapping *map, const char *p)
{
	size_t len, suffix = strlen(DELETED_SUFFIX);

	while (*p == ' ')
		p++;
	len = strlen(p);
	if (len > suffix && !strcmp(p + len - suffix, DELETED_SUFFIX)) {
		map->deleted = true;
		len -= suffix;
	}
	if (!len)
		return 0;
	map->path = strndup(p, len);
	return map->path ? 0 : -ENOMEM;
}

/* Returns 0, -EINVAL for a line that is not a mapping, or -ENOMEM. */
static int mapping__parse(struct mapping *map, const char *line)
{
	const char *p = line;

	*map = (struct mapping){0};
	if (!parse_hex(&p, &map->start) || !skip_char(&p, '-') || !parse_hex(&p, &map->end) ||
	    !skip_char(&p, ' ') || !parse_perms(&p, map) || !skip_char(&p, ' ') ||
	    !parse_hex(&p, &map->pgoff) || !skip_char(&p, ' ') || !parse_dev(&p, map) ||
	    !skip_char(&p, ' ') || !parse_dec(&p, &map->inode))
		return -EINVAL;
	if (map->end <= map->start || (*p != ' ' && *p != '\0'))
		return -EINVAL;
	return mapping__set_path(map, p);
}

static int proc_maps__push(struct proc_maps *m, size_t *cap, const struct mapping *map)
{
	struct mapping *grown;
	size_t new_cap;

	if (m->nr == *cap) {
		new_cap = *cap ? *cap * 2 : 64;
		grown = reallocarray(m->maps, new_cap, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		m->maps = grown;
		*cap = new_cap;
	}
	m->maps[m->nr++] = *map;
	return 0;
}

static int mapping__cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The kernel lists mappings in order; only corrupt input needs sorting. */
static void proc_maps__sort(struct proc_maps *m)
{
	size_t i;

	for (i = 1; i < m->nr; i++) {
		if (m->maps[i].start < m->maps[i - 1].start) {
			qsort(m->maps, m->nr, sizeof(*m->maps), mapping__cmp);
			return;
		}
	}
}

static int proc_maps__parse_lines(FILE *f, struct proc_maps *out)
{
	struct mapping map;
	char *line = NULL;
	size_t line_cap = 0, cap = 0;
	ssize_t len;
	int err = 0;

	errno = 0;
	while (!err && (len = getline(&line, &line_cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		err = mapping__parse(&map, line);
		if (err == -EINVAL) {
			err = 0;
			continue;
		}
		if (!err)
			err = proc_maps__push(out, &cap, &map);
		if (err)
			free(map.path);
	}
	/* getline() says -1 both at the end and on a read or memory error. */
	if (!err && !feof(f))
		err = errno ? -errno : -EIO;
	free(line);
	return err;
}

int proc_maps__parse(FILE *f, struct proc_maps *out)
{
	int err;

	*out = (struct proc_maps){0};
	err = proc_maps__parse_lines(f, out);
	if (err) {
		proc_maps__release(out);
		return err;
	}
	proc_maps__sort(out);
	return 0;
}

int proc_maps__read(pid_t pid, struct proc_maps *out)
{
	char path[64];
	FILE *f;
	int err;

	*out = (struct proc_maps){0};
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = proc_maps__parse(f, out);
	fclose(f);
	return err;
}

void proc_maps__release(struct proc_maps *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		free(m->maps[i].path);
	free(m->maps);
	*m = (struct proc_maps){0};
}

const struct mapping *proc_maps__find(const struct proc_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr, mid;

	/* Find the first mapping that starts above @addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->maps[lo - 1].end)
		return NULL;
	return &m->maps[lo - 1];
}

bool mapping__is_file(const struct mapping *map)
{
	return map->path && map->path[0] == '/' && map->inode != 0;
}

bool mapping__is_anonymous(const struct mapping *map)
{
	return !map->path || !strcmp(map->path, "[heap]") || !strncmp(map->path, "[anon:", 6);
}
