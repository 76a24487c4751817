// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind case files read and written, and replayed by the walker of the
 * case's architecture (unwind_walk.c, built once per architecture).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unwind_case.h"

/* The walkers the case files name; each is bpf/cfi.bpf.h built for its arch_<name>.bpf.h. */
static const struct case_arch arches[] = {
    {.name = "x86_64", .regs = {"ip", "sp", "bp"}, .walk = unwind_case__walk_x86},
    {.name = "arm64", .regs = {"pc", "sp", "x29", "x30"}, .walk = unwind_case__walk_arm64},
};

const struct case_arch *case_arch__find(const char *name)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (!strcmp(arches[i].name, name))
			return &arches[i];
	return NULL;
}

int unwind_case__replay(struct unwind_case *c, struct case_walk *out)
{
	return c->arch ? c->arch->walk(c, out) : -EINVAL;
}

/* A "regs" line: the arch's registers, by name, in struct case_regs' order. */
static int load_regs(struct unwind_case *c, const char *line)
{
	const char *p = line + strlen("regs");
	unsigned long long v[4] = {0};
	char format[32];
	int used;

	if (!c->arch)
		return -EINVAL;
	for (size_t i = 0; i < 4 && c->arch->regs[i]; i++) {
		used = 0;
		snprintf(format, sizeof(format), " %s=%%llx%%n", c->arch->regs[i]);
		if (sscanf(p, format, &v[i], &used) != 1 || !used)
			return -EINVAL;
		p += used;
	}
	c->regs = (struct case_regs){.ip = v[0], .sp = v[1], .bp = v[2], .lr = v[3]};
	return *p == '\n' || !*p ? 0 : -EINVAL;
}

static void save_regs(const struct unwind_case *c, FILE *f)
{
	const __u64 v[4] = {c->regs.ip, c->regs.sp, c->regs.bp, c->regs.lr};

	fprintf(f, "arch %s\nregs", c->arch->name);
	for (size_t i = 0; i < 4 && c->arch->regs[i]; i++)
		fprintf(f, " %s=%#llx", c->arch->regs[i], (unsigned long long)v[i]);
	fputc('\n', f);
}

void unwind_case__init(struct unwind_case *c)
{
	*c = (struct unwind_case){.depth = DEFAULT_STACK_DEPTH, .mem_fd = -1};
}

void unwind_case__release(struct unwind_case *c)
{
	for (size_t i = 0; i < UNWIND_MAX_MAPPINGS; i++)
		free(c->map_names[i]);
	for (size_t i = 0; i < MAX_STACK_DEPTH; i++)
		free(c->frame_notes[i]);
	for (size_t i = 0; i < c->nr_mem; i++)
		free(c->mem[i].bytes);
	free(c->mem);
	free(c->rows);
	free(c->pages);
	free(c->row_state);
	free(c->page_state);
	free(c->notes);
	unwind_case__init(c);
}

int unwind_case__size(struct unwind_case *c, __u32 nr_rows, __u32 nr_pages)
{
	c->rows = calloc(nr_rows ? nr_rows : 1, sizeof(*c->rows));
	c->row_state = calloc(nr_rows ? nr_rows : 1, 1);
	c->pages = calloc(nr_pages ? nr_pages : 1, sizeof(*c->pages));
	c->page_state = calloc(nr_pages ? nr_pages : 1, 1);
	if (!c->rows || !c->row_state || !c->pages || !c->page_state)
		return -ENOMEM;
	c->nr_rows = nr_rows;
	c->nr_pages = nr_pages;
	return 0;
}

void unwind_case__trim(struct unwind_case *c)
{
	for (__u32 i = 0; i < c->nr_rows; i++)
		if (c->row_state[i] != ENTRY_READ)
			c->row_state[i] = ENTRY_ABSENT;
	for (__u32 i = 0; i < c->nr_pages; i++)
		if (c->page_state[i] != ENTRY_READ)
			c->page_state[i] = ENTRY_ABSENT;
}

/* Join range @i with the ranges after it that it overlaps or touches. */
static int memory_join(struct unwind_case *c, size_t i)
{
	struct case_memory *m = &c->mem[i];

	while (i + 1 < c->nr_mem && c->mem[i + 1].addr <= m->addr + m->len) {
		struct case_memory *next = &c->mem[i + 1];
		__u64 end = next->addr + next->len;

		if (end > m->addr + m->len) {
			__u8 *bytes = realloc(m->bytes, end - m->addr);

			if (!bytes)
				return -ENOMEM;
			memcpy(bytes + (next->addr - m->addr), next->bytes, next->len);
			m->bytes = bytes;
			m->len = (__u32)(end - m->addr);
		}
		free(next->bytes);
		memmove(next, next + 1, (c->nr_mem - i - 2) * sizeof(*next));
		c->nr_mem--;
	}
	return 0;
}

int unwind_case__add_memory(struct unwind_case *c, __u64 addr, const void *bytes, __u32 len)
{
	struct case_memory *mem = realloc(c->mem, (c->nr_mem + 1) * sizeof(*mem));
	size_t i = c->nr_mem;

	if (!mem)
		return -ENOMEM;
	c->mem = mem;
	while (i > 0 && mem[i - 1].addr > addr)
		i--;
	memmove(&mem[i + 1], &mem[i], (c->nr_mem - i) * sizeof(*mem));
	mem[i] = (struct case_memory){.addr = addr, .len = len, .bytes = malloc(len ? len : 1)};
	c->nr_mem++;
	if (!mem[i].bytes)
		return -ENOMEM;
	memcpy(mem[i].bytes, bytes, len);
	for (i = 0; i < c->nr_mem; i++)
		if (memory_join(c, i))
			return -ENOMEM;
	return 0;
}

/* Bytes of memory per line of a case file. */
#define HEX_LINE 32

static void save_memory(const struct case_memory *m, FILE *f)
{
	fprintf(f, "mem %#llx %u\n", (unsigned long long)m->addr, m->len);
	for (__u32 i = 0; i < m->len; i++)
		fprintf(f, "%02x%s", m->bytes[i], (i + 1) % HEX_LINE && i + 1 < m->len ? "" : "\n");
}

int unwind_case__save(const struct unwind_case *c, FILE *f)
{
	fputs(c->notes ? c->notes : "", f);
	save_regs(c, f);
	fprintf(f, "depth %u\n", c->depth);
	for (__u32 i = 0; i < c->proc.nr; i++) {
		const struct unwind_mapping *m = &c->proc.maps[i];

		fprintf(f, "map %#llx %#llx %#llx %u %u %s\n", (unsigned long long)m->start,
			(unsigned long long)m->end, (unsigned long long)m->table_base,
			m->page_first, m->nr_pages, c->map_names[i] ? c->map_names[i] : "-");
	}
	for (__u32 i = 0; i < c->nr_pages; i++)
		if (c->page_state[i])
			fprintf(f, "page %u %u\n", i, c->pages[i]);
	for (__u32 i = 0; i < c->nr_rows; i++)
		if (c->row_state[i])
			fprintf(f, "row %u %#x %u %d %d %d\n", i, c->rows[i].pc, c->rows[i].kind,
				c->rows[i].fp_off, c->rows[i].cfa_off, c->rows[i].ra_off);
	for (size_t i = 0; i < c->nr_mem; i++)
		save_memory(&c->mem[i], f);
	for (__u32 i = 0; i < c->nr_frames; i++)
		fprintf(f, "frame %#llx %s\n", (unsigned long long)c->frames[i],
			c->frame_notes[i] ? c->frame_notes[i] : "");
	fprintf(f, "flags %u\nmemo %s\n", c->flags, c->memo_recall ? "recall" : "forget");
	return ferror(f) ? -EIO : 0;
}

/* The @len bytes after a "mem" line, in hex. */
static int load_memory(struct unwind_case *c, FILE *f, __u64 addr, __u32 len)
{
	__u8 *bytes = malloc(len ? len : 1);
	unsigned int byte;
	int err = 0;

	if (!bytes)
		return -ENOMEM;
	for (__u32 i = 0; i < len && !err; i++)
		if (fscanf(f, "%2x", &byte) != 1)
			err = -EINVAL;
		else
			bytes[i] = (__u8)byte;
	if (!err)
		err = unwind_case__add_memory(c, addr, bytes, len);
	free(bytes);
	return err;
}

static int load_map(struct unwind_case *c, const char *line)
{
	unsigned long long start, end, base;
	struct unwind_mapping *m;
	unsigned int first, nr;
	int used;

	if (c->proc.nr >= UNWIND_MAX_MAPPINGS || sscanf(line, "map %llx %llx %llx %u %u %n", &start,
							&end, &base, &first, &nr, &used) < 5)
		return -EINVAL;
	m = &c->proc.maps[c->proc.nr];
	*m = (struct unwind_mapping){
	    .start = start, .end = end, .table_base = base, .page_first = first, .nr_pages = nr};
	c->map_names[c->proc.nr++] = strndup(line + used, strcspn(line + used, "\n"));
	return 0;
}

/* A "row" or "page" line, into arrays grown to hold it. */
static int load_entry(struct unwind_case *c, const char *line)
{
	unsigned int i, pc, kind, value;
	/* x86-64's return address is at CFA - 8: its cases recorded before the column have none. */
	int fp, cfa, ra = -1, n;

	if (sscanf(line, "page %u %u", &i, &value) == 2 && i < c->nr_pages) {
		c->pages[i] = value;
		c->page_state[i] = ENTRY_HELD;
		return 0;
	}
	n = sscanf(line, "row %u %x %u %d %d %d", &i, &pc, &kind, &fp, &cfa, &ra);
	if (n >= 5 && i < c->nr_rows) {
		c->rows[i] = (struct unwind_row){.pc = pc,
						 .kind = (__u8)kind,
						 .fp_off = (__s8)fp,
						 .cfa_off = (__s16)cfa,
						 .ra_off = (__s8)ra};
		c->row_state[i] = ENTRY_HELD;
		return 0;
	}
	return -EINVAL;
}

int unwind_case__add_frame(struct unwind_case *c, const char *line)
{
	unsigned long long ip;
	int used;

	if (c->nr_frames >= MAX_STACK_DEPTH || sscanf(line, "frame %llx %n", &ip, &used) < 1)
		return -EINVAL;
	c->frame_notes[c->nr_frames] = strndup(line + used, strcspn(line + used, "\n"));
	c->frames[c->nr_frames++] = ip;
	return 0;
}

static int load_line(struct unwind_case *c, FILE *f, const char *line)
{
	unsigned long long a;
	unsigned int n;
	char word[16];

	if (!strncmp(line, "map ", 4))
		return load_map(c, line);
	if (!strncmp(line, "row ", 4) || !strncmp(line, "page ", 5))
		return load_entry(c, line);
	if (!strncmp(line, "frame ", 6))
		return unwind_case__add_frame(c, line);
	if (sscanf(line, "mem %llx %u", &a, &n) == 2)
		return load_memory(c, f, a, n);
	if (!strncmp(line, "regs ", 5))
		return load_regs(c, line);
	if (sscanf(line, "arch %15s", word) == 1)
		return (c->arch = case_arch__find(word)) ? 0 : -EINVAL;
	if (sscanf(line, "depth %u", &n) == 1 && n && n <= MAX_STACK_DEPTH)
		return c->depth = n, 0;
	if (sscanf(line, "flags %u", &n) == 1)
		return c->flags = n, 0;
	if (sscanf(line, "memo %15s", word) == 1 &&
	    (!strcmp(word, "recall") || !strcmp(word, "forget")))
		return c->memo_recall = !strcmp(word, "recall"), 0;
	if (line[0] == '#' || line[0] == '\n')
		return 0;
	return -EINVAL;
}

/* The highest row and page index the file names, so the arrays are sized once. */
static int case_extent(FILE *f, __u32 *rows, __u32 *pages)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int i;

	*rows = *pages = 0;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "row %u", &i) == 1 && i >= *rows)
			*rows = i + 1;
		if (sscanf(line, "page %u", &i) == 1 && i >= *pages)
			*pages = i + 1;
	}
	free(line);
	rewind(f);
	return 0;
}

int unwind_case__load(struct unwind_case *c, const char *path)
{
	FILE *f = fopen(path, "r");
	__u32 nr_rows, nr_pages, lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	int err;

	unwind_case__init(c);
	if (!f) {
		err = -errno;
		fprintf(stderr, "unwind case %s: %s\n", path, strerror(-err));
		return err;
	}
	err = case_extent(f, &nr_rows, &nr_pages) ?: unwind_case__size(c, nr_rows, nr_pages);
	while (!err && getline(&line, &cap, f) > 0) {
		lineno++;
		err = load_line(c, f, line);
	}
	if (err)
		fprintf(stderr, "unwind case %s: line %u: %s\n", path, lineno, strerror(-err));
	free(line);
	fclose(f);
	return err;
}
