// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Records an unwind case (tests/unit/unwind_case.h) of a stopped process:
 * builds the unwind rows of its executable mappings as the loader does
 * (user/unwind/cfi.c, laid out as user/tracer/unwinder.c stores them), walks
 * its stack from the registers given with the BPF walker over
 * /proc/PID/mem, and writes to stdout the memory, rows and page index
 * entries the walk read, and the frames read from stdin ("frame IP NOTE"
 * lines; "#" lines are kept as notes). Fails, writing nothing, when the
 * walk finds other frames. scripts/record_unwind_case.sh stops the
 * process in gdb and gives this the registers and gdb's frames. Usage:
 * unwind_record [--depth N] ARCH PID REG...: ARCH as a case's "arch" line,
 * its registers in the order of the "regs" line (x86_64: ip sp bp; arm64:
 * pc sp x29 x30), in hex.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc/procmaps.h"
#include "symbolize/objfile.h"
#include "unwind/cfi.h"
#include "../unit/unwind_case.h"

/* Every object's rows and page index, concatenated as the loader stores them. */
struct tables {
	struct unwind_row *rows;
	__u32 *pages;
	__u32 nr_rows;
	__u32 nr_pages;
};

static int tables_append(struct tables *all, struct cfi_table *t, struct unwind_mapping *out,
			 uint64_t bias)
{
	__u32 nr_pages = (__u32)t->nr_pages + 1;
	struct unwind_row *rows = realloc(all->rows, (all->nr_rows + t->nr_rows) * sizeof(*rows));
	__u32 *pages = realloc(all->pages, (all->nr_pages + nr_pages) * sizeof(*pages));

	if (rows)
		all->rows = rows;
	if (pages)
		all->pages = pages;
	if (!rows || !pages)
		return -ENOMEM;
	for (__u32 i = 0; i < nr_pages; i++)
		pages[all->nr_pages + i] = t->pages[i] + all->nr_rows;
	memcpy(rows + all->nr_rows, t->rows, t->nr_rows * sizeof(*rows));
	out->table_base = t->base + bias;
	out->page_first = all->nr_pages;
	out->nr_pages = (__u32)t->nr_pages;
	all->nr_rows += (__u32)t->nr_rows;
	all->nr_pages += nr_pages;
	return 0;
}

/* The rows of the file @map maps, into @all and @out; its name for the case. */
static char *load_mapping(pid_t pid, const struct mapping *map, struct tables *all,
			  struct unwind_mapping *out)
{
	const unsigned char *id;
	char build_id[129] = "-", *name = NULL;
	struct cfi_table t;
	uint64_t bias;
	Elf *elf = NULL;
	ssize_t len;
	int fd = mapping__open(pid, map);

	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf__load_bias(elf, map, &bias) && !cfi_table__build(elf, &t)) {
		if (tables_append(all, &t, out, bias))
			fprintf(stderr, "unwind_record: no memory for the rows of %s\n", map->path);
		cfi_table__release(&t);
	}
	len = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : 0;
	for (ssize_t i = 0; i < len && i < 64; i++)
		sprintf(build_id + 2 * i, "%02x", id[i]);
	if (asprintf(&name, "%#llx %s %s", (unsigned long long)map->pgoff, build_id, map->path) < 0)
		name = NULL;
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return name;
}

/* @c's mappings and all their rows, as the loader would give process @pid. */
static int load_process(struct unwind_case *c, pid_t pid)
{
	struct tables all = {0};
	struct proc_maps pm;
	int err = proc_maps__read(pid, &pm);

	if (err)
		return err;
	for (size_t i = 0; i < pm.nr && c->proc.nr < UNWIND_MAX_MAPPINGS; i++) {
		const struct mapping *map = &pm.maps[i];
		struct unwind_mapping *out = &c->proc.maps[c->proc.nr];

		if (!map->exec)
			continue;
		*out = (struct unwind_mapping){.start = map->start, .end = map->end};
		c->map_names[c->proc.nr++] = mapping__is_file(map)
						 ? load_mapping(pid, map, &all, out)
						 : strdup(map->path ? map->path : "-");
	}
	proc_maps__release(&pm);
	err = unwind_case__size(c, all.nr_rows, all.nr_pages);
	if (!err) {
		memcpy(c->rows, all.rows, all.nr_rows * sizeof(*all.rows));
		memcpy(c->pages, all.pages, all.nr_pages * sizeof(*all.pages));
		memset(c->row_state, ENTRY_HELD, all.nr_rows);
		memset(c->page_state, ENTRY_HELD, all.nr_pages);
	}
	free(all.rows);
	free(all.pages);
	return err;
}

/* gdb's frames and notes, from stdin. */
static int read_expected(struct unwind_case *c)
{
	char *line = NULL, *notes;
	size_t cap = 0, len = 0, n;
	int err = 0;

	while (!err && getline(&line, &cap, stdin) > 0) {
		if (line[0] != '#') {
			err = unwind_case__add_frame(c, line);
			continue;
		}
		n = strlen(line);
		notes = realloc(c->notes, len + n + 1);
		if (!notes) {
			err = -ENOMEM;
			break;
		}
		memcpy(notes + len, line, n + 1);
		c->notes = notes;
		len += n;
	}
	free(line);
	return err;
}

static bool same_frames(const struct unwind_case *c, const struct case_walk *w)
{
	bool same = w->st.nr == c->nr_frames;

	for (__u32 i = 0; i < w->st.nr || i < c->nr_frames; i++) {
		bool ok = i < w->st.nr && i < c->nr_frames && w->st.ips[i] == c->frames[i];

		same &= ok;
		fprintf(stderr, "%s #%u walk %#llx, gdb %#llx %s\n", ok ? "  " : "!=", i,
			i < w->st.nr ? (unsigned long long)w->st.ips[i] : 0ULL,
			i < c->nr_frames ? (unsigned long long)c->frames[i] : 0ULL,
			i < c->nr_frames && c->frame_notes[i] ? c->frame_notes[i] : "");
	}
	return same;
}

static int record(struct unwind_case *c, pid_t pid)
{
	struct case_walk walk;
	char path[64];
	int err;

	err = read_expected(c);
	if (err)
		return fprintf(stderr, "unwind_record: stdin: bad frame line\n"), err;
	err = load_process(c, pid);
	if (err)
		return fprintf(stderr, "unwind_record: process %d: %s\n", (int)pid, strerror(-err)),
		       err;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	c->mem_fd = open(path, O_RDONLY);
	if (c->mem_fd < 0)
		return fprintf(stderr, "unwind_record: %s: %s\n", path, strerror(errno)), -errno;
	err = unwind_case__replay(c, &walk);
	close(c->mem_fd);
	c->mem_fd = -1;
	if (err)
		return err;
	if (!same_frames(c, &walk)) {
		fprintf(stderr, "unwind_record: process %d: the walk differs from gdb\n", (int)pid);
		return -EINVAL;
	}
	c->flags = walk.st.flags;
	c->memo_recall = walk.recalled;
	unwind_case__trim(c);
	return unwind_case__save(c, stdout);
}

/* The registers of @arch's "regs" line, from @argv: true if there are as many. */
static bool parse_regs(const struct case_arch *arch, int argc, char **argv, struct case_regs *r)
{
	unsigned long long v[4] = {0};
	int n = 0;

	while (n < 4 && arch->regs[n])
		n++;
	if (argc != n)
		return false;
	for (int i = 0; i < n; i++)
		if (sscanf(argv[i], "%llx", &v[i]) != 1)
			return false;
	*r = (struct case_regs){.ip = v[0], .sp = v[1], .bp = v[2], .lr = v[3]};
	return true;
}

int main(int argc, char **argv)
{
	const struct case_arch *arch = NULL;
	struct unwind_case c;
	int depth = MAX_STACK_DEPTH, err;

	if (argc > 2 && !strcmp(argv[1], "--depth")) {
		depth = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	unwind_case__init(&c);
	if (argc > 2)
		arch = case_arch__find(argv[1]);
	if (!arch || depth < 1 || depth > MAX_STACK_DEPTH ||
	    !parse_regs(arch, argc - 3, argv + 3, &c.regs)) {
		fprintf(stderr, "usage: unwind_record [--depth 1-%d] x86_64|arm64 PID REG... < frames\n",
			MAX_STACK_DEPTH);
		return 2;
	}
	elf_version(EV_CURRENT);
	c.arch = arch;
	c.depth = (__u32)depth;
	err = record(&c, atoi(argv[2]));
	unwind_case__release(&c);
	return err ? 1 : 0;
}
