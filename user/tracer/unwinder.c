// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "unwind/cfi.h"
#include "arch/arch.h"
#include "lib/log.h"
#include "symbolize/objfile.h"
#include "proc/procmaps.h"
#include "tracer/unwinder.h"
#include "lib/util.h"

/* An object whose rows are in the BPF arrays (or that has none). */
struct unwind_object {
	char *key;     /* build id in hex, else device, inode, size and mtime */
	uint64_t base; /* ELF address the rows count from */
	uint32_t page_first;
	uint32_t nr_pages; /* 0: no rows, frames here use frame pointers */
};

/* What a process's executable mappings were when its table was last written. */
struct unwind_seen {
	pid_t pid;
	uint64_t layout; /* hash of their ranges, offsets and inodes */
};

/*
 * One of the BPF side's chunked arrays (unwind_rows, unwind_pages): values
 * are only ever appended, so only the last chunk is still written, through
 * its memory mapping (BPF_F_MMAPABLE: plain stores, where a batch update
 * costs about a microsecond a value); the outer map holds every chunk.
 */
struct chunked {
	const char *name;
	int outer_fd;
	char *tail; /* the last chunk, mapped; NULL before the first */
	uint32_t value_size;
	uint32_t used;	    /* values appended */
	uint32_t nr_chunks; /* chunks made, in the outer map */
	uint32_t max;	    /* most values it may hold */
};

struct unwinder {
	struct unwinder_opts opts;
	struct unwind_object *objs;
	size_t nr_objs, cap_objs;
	struct unwind_seen *seen;
	size_t nr_seen, cap_seen;
	struct chunked rows;
	struct chunked pages;
	uint32_t nr_full;	 /* objects left without rows: no room */
	uint32_t nr_unopened;	 /* mappings left without rows: not the file mapped */
	struct unwind_proc proc; /* scratch: one process's mappings */
};

static void chunked__init(struct chunked *c, const char *name, int outer_fd, uint32_t value_size,
			  uint32_t max)
{
	*c = (struct chunked){
	    .name = name, .outer_fd = outer_fd, .value_size = value_size, .max = max};
}

struct unwinder *unwinder__new(const struct unwinder_opts *opts)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	memcpy(&u->opts, opts, opts->sz < sizeof(u->opts) ? opts->sz : sizeof(u->opts));
	chunked__init(&u->rows, "unwind_rows_c", u->opts.rows_fd, sizeof(struct unwind_row),
		      u->opts.max_rows);
	chunked__init(&u->pages, "unwind_pages_c", u->opts.pages_fd, sizeof(__u32),
		      u->opts.max_pages);
	return u;
}

/* An array map keeps each value in 8-byte steps, in its mapping too. */
static size_t chunked__stride(const struct chunked *c)
{
	return (c->value_size + 7) & ~(size_t)7;
}

static size_t chunked__chunk_bytes(const struct chunked *c)
{
	return UNWIND_CHUNK_ENTRIES * chunked__stride(c);
}

static void chunked__unmap(struct chunked *c, char *chunk)
{
	if (chunk)
		munmap(chunk, chunked__chunk_bytes(c));
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_objs; i++)
		free(u->objs[i].key);
	chunked__unmap(&u->rows, u->rows.tail);
	chunked__unmap(&u->pages, u->pages.tail);
	free(u->objs);
	free(u->seen);
	free(u);
}

/* Same object, whatever path or process it is mapped through. */
static char *object_key(Elf *elf, int fd)
{
	const unsigned char *id;
	ssize_t len = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	struct stat st;
	char *key;

	if (len > 0 && len <= 64) {
		key = malloc(2 * (size_t)len + 1);
		for (ssize_t i = 0; key && i < len; i++)
			sprintf(key + 2 * i, "%02x", id[i]);
		return key;
	}
	if (fstat(fd, &st) ||
	    asprintf(&key, "%lx:%lx:%lx:%lx", (unsigned long)st.st_dev, (unsigned long)st.st_ino,
		     (unsigned long)st.st_size, (unsigned long)st.st_mtime) < 0)
		return NULL;
	return key;
}

static struct unwind_object *find_object(struct unwinder *u, const char *key)
{
	for (size_t i = 0; i < u->nr_objs; i++)
		if (!strcmp(u->objs[i].key, key))
			return &u->objs[i];
	return NULL;
}

/* Array maps take a batch of consecutive keys in one call where the kernel can. */
static int write_array(int fd, uint32_t first, const void *values, size_t size, uint32_t n)
{
	uint32_t *keys, count = n;
	int err = 0;

	if (!n)
		return 0;
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		keys[i] = first + i;
	if (bpf_map_update_batch(fd, keys, values, &count, NULL)) {
		for (uint32_t i = 0; i < n && !err; i++)
			if (bpf_map_update_elem(fd, &keys[i], (const char *)values + i * size,
						BPF_ANY))
				err = -errno;
	}
	free(keys);
	return err;
}

/* Copy @n values into @chunk from entry @slot on. */
static void chunked__copy(const struct chunked *c, char *chunk, uint32_t slot, const char *values,
			  uint32_t n)
{
	size_t stride = chunked__stride(c);

	for (uint32_t i = 0; i < n; i++)
		memcpy(chunk + (slot + i) * stride, values + (size_t)i * c->value_size,
		       c->value_size);
}

/* A new chunk, mapped, holding @n values; not in the outer map yet. */
static int chunked__new_chunk(struct chunked *c, const char *values, uint32_t n, char **chunk)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, c->name, sizeof(__u32), c->value_size,
			    UNWIND_CHUNK_ENTRIES, &opts);
	if (fd < 0)
		return -errno;
	*chunk = mmap(NULL, chunked__chunk_bytes(c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*chunk == MAP_FAILED) {
		err = -errno;
		*chunk = NULL;
		close(fd);
		return err;
	}
	chunked__copy(c, *chunk, 0, values, n);
	return fd;
}

/*
 * Make @nr chunks holding @n values and put them in the outer map in one
 * batch: BPF never sees a chunk half written, and the kernel waits an RCU
 * grace period at each update of a map of maps, once for a batch. The
 * last one stays mapped, the new tail.
 */
static int chunked__add_chunks(struct chunked *c, const char *values, uint32_t n, uint32_t nr)
{
	int *fds = calloc(nr, sizeof(*fds));
	char *chunk = NULL;
	uint32_t i, take;
	int err = 0;

	if (!fds)
		return -ENOMEM;
	for (i = 0; i < nr && !err; i++, n -= take) {
		take = n < UNWIND_CHUNK_ENTRIES ? n : UNWIND_CHUNK_ENTRIES;
		chunked__unmap(c, chunk);
		fds[i] = chunked__new_chunk(
		    c, values + (size_t)i * UNWIND_CHUNK_ENTRIES * c->value_size, take, &chunk);
		err = fds[i] < 0 ? fds[i] : 0;
	}
	if (!err)
		err = write_array(c->outer_fd, c->nr_chunks, fds, sizeof(*fds), nr);
	if (err) {
		chunked__unmap(c, chunk);
	} else {
		chunked__unmap(c, c->tail);
		c->tail = chunk;
		c->nr_chunks += nr;
	}
	/* The outer map and the tail's mapping hold the chunks now. */
	while (i--)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return err;
}

/*
 * Append @n values: what fits into the last chunk, the rest into new ones.
 * The caller made sure of c->max.
 */
static int chunked__append(struct chunked *c, const void *values, uint32_t n)
{
	uint32_t room = c->nr_chunks * UNWIND_CHUNK_ENTRIES - c->used;
	uint32_t head = n < room ? n : room;
	uint32_t nr = (n - head + UNWIND_CHUNK_ENTRIES - 1) / UNWIND_CHUNK_ENTRIES;
	int err = 0;

	if (head)
		chunked__copy(c, c->tail, c->used & (UNWIND_CHUNK_ENTRIES - 1), values, head);
	if (nr)
		err = chunked__add_chunks(c, (const char *)values + (size_t)head * c->value_size,
					  n - head, nr);
	if (!err)
		c->used += n;
	return err;
}

/* Kernel memory of the chunks made: an array map keeps each value in 8-byte steps. */
static uint64_t chunked__bytes(const struct chunked *c)
{
	return (uint64_t)c->nr_chunks * chunked__chunk_bytes(c);
}

/* Append @t's rows and page index, the index made to point at the global rows. */
static int store_table(struct unwinder *u, struct cfi_table *t, struct unwind_object *obj)
{
	uint32_t nr_pages = (uint32_t)t->nr_pages + 1;
	uint32_t first_row = u->rows.used, first_page = u->pages.used;
	int err;

	if (t->nr_rows > u->rows.max - u->rows.used || nr_pages > u->pages.max - u->pages.used)
		return -ENOSPC;
	for (uint32_t i = 0; i < nr_pages; i++)
		t->pages[i] += first_row;
	err = chunked__append(&u->rows, t->rows, (uint32_t)t->nr_rows);
	if (!err)
		err = chunked__append(&u->pages, t->pages, nr_pages);
	if (err)
		return err;
	obj->base = t->base;
	obj->page_first = first_page;
	obj->nr_pages = (uint32_t)t->nr_pages;
	return 0;
}

static double ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) * 1e3 +
	       (double)(now.tv_nsec - start->tv_nsec) / 1e6;
}

/* Build and store the rows of a new object; failing that, it has none. */
static void load_object(struct unwinder *u, Elf *elf, const char *path, struct unwind_object *obj)
{
	struct cfi_table t;
	struct timespec start, built;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &start);
	err = cfi_table__build_for(elf, arch_elf_machine, &t);
	if (!err) {
		clock_gettime(CLOCK_MONOTONIC, &built);
		err = store_table(u, &t, obj);
		if (!err)
			pr_debug("unwind tables for %s: %zu rows, %zu pages in %.1f ms, %.1f ms "
				 "of it to store; all objects: %u rows, %u pages in %.1f MiB of "
				 "kernel memory",
				 path, t.nr_rows, t.nr_pages, ms_since(&start), ms_since(&built),
				 u->rows.used, u->pages.used, unwinder__bytes(u) / 1048576.0);
		cfi_table__release(&t);
	}
	/*
	 * Said once, and always: the stacks through these objects are less
	 * sure. The kernel refusing a chunk is the same limit, met earlier.
	 */
	if ((err == -ENOSPC || err == -ENOMEM) && !u->nr_full++)
		pr_warn("unwind tables full at %u of %u rows (%s): frames in %s and any later "
			"object that does not fit use frame pointers",
			u->rows.used, u->rows.max,
			err == -ENOSPC ? "--max-unwind-rows" : "no kernel memory for more", path);
	else if (err && err != -ENOSPC && err != -ENOMEM)
		pr_debug("no unwind tables for %s: %s", path, strerror(-err));
}

static struct unwind_object *add_object(struct unwinder *u, char *key)
{
	struct unwind_object *objs;

	objs = array__grow(u->objs, &u->cap_objs, u->nr_objs, sizeof(*u->objs));
	if (!objs)
		return NULL;
	u->objs = objs;
	objs[u->nr_objs] = (struct unwind_object){.key = key};
	return &objs[u->nr_objs++];
}

/* Give @out the rows of object @elf mapped at @map, built once for all (@fd: its file or -1). */
static void use_object(struct unwinder *u, Elf *elf, int fd, const struct mapping *map,
		       struct unwind_mapping *out)
{
	struct unwind_object *obj = NULL;
	uint64_t bias;
	char *key = NULL;

	if (!elf__load_bias(elf, map, &bias))
		key = object_key(elf, fd);
	if (key) {
		obj = find_object(u, key);
		if (obj) {
			free(key);
		} else {
			obj = add_object(u, key);
			if (obj)
				load_object(u, elf, map->path, obj);
			else
				free(key);
		}
	}
	if (obj && obj->nr_pages) {
		out->table_base = obj->base + bias;
		out->page_first = obj->page_first;
		out->nr_pages = obj->nr_pages;
	}
}

/* Give @out the rows of the file behind @map, if it has any. */
static void map_object(struct unwinder *u, pid_t pid, const struct mapping *map,
		       struct unwind_mapping *out)
{
	Elf *elf = NULL;
	int fd;

	fd = mapping__open(pid, map);
	if (fd == -ESTALE || fd == -ENOEXEC)
		u->nr_unopened++;
	if (fd >= 0)
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		use_object(u, elf, fd, map, out);
		elf_end(elf);
	}
	if (fd >= 0)
		close(fd);
}

/* The size of our own [vdso], or 0. */
static uint64_t own_vdso_size(void)
{
	struct proc_maps pm;
	uint64_t size = 0;

	if (proc_maps__read(getpid(), &pm))
		return 0;
	for (size_t i = 0; i < pm.nr && !size; i++)
		if (pm.maps[i].path && !strcmp(pm.maps[i].path, "[vdso]"))
			size = pm.maps[i].end - pm.maps[i].start;
	proc_maps__release(&pm);
	return size;
}

/*
 * The vDSO is no file, but every 64-bit process of this kernel maps the
 * same image, ours too (AT_SYSINFO_EHDR): its .eh_frame is read from our
 * own copy, when the target's is the same size. Its build id keys it.
 */
static void map_vdso(struct unwinder *u, const struct mapping *map, struct unwind_mapping *out)
{
	char *image = (char *)getauxval(AT_SYSINFO_EHDR);
	uint64_t size = map->end - map->start;
	Elf *elf;

	if (!image || map->pgoff || own_vdso_size() != size)
		return;
	elf = elf_memory(image, size);
	if (elf) {
		use_object(u, elf, -1, map, out);
		elf_end(elf);
	}
}

static uint64_t exec_layout(const struct proc_maps *pm)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < pm->nr; i++) {
		const struct mapping *m = &pm->maps[i];
		uint64_t parts[] = {m->start, m->end, m->pgoff, m->inode};

		if (!m->exec)
			continue;
		for (size_t j = 0; j < sizeof(parts) / sizeof(*parts); j++)
			h = (h ^ parts[j]) * 0x100000001b3ULL;
	}
	return h;
}

/*
 * Whether @pid's table needs writing. When it does not, BPF asks again
 * only a second later (struct unwind_proc): a frame in a mapping beyond
 * the table's room must not cost a rebuild per allocation.
 */
static bool layout_changed(struct unwinder *u, pid_t pid, uint64_t layout)
{
	struct unwind_seen *seen;
	size_t i;

	for (i = 0; i < u->nr_seen && u->seen[i].pid != pid; i++)
		;
	if (i < u->nr_seen) {
		if (u->seen[i].layout == layout)
			return false;
		u->seen[i].layout = layout;
		return true;
	}
	seen = array__grow(u->seen, &u->cap_seen, u->nr_seen, sizeof(*u->seen));
	if (seen) {
		u->seen = seen;
		seen[u->nr_seen++] = (struct unwind_seen){.pid = pid, .layout = layout};
	}
	return true;
}

/* After the change is in the maps: walks remembered before it start again. */
static void tables_changed(struct unwinder *u)
{
	if (u->opts.walk_gen)
		__atomic_fetch_add(u->opts.walk_gen, 1, __ATOMIC_SEQ_CST);
}

static void forget_layout(struct unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->nr_seen; i++) {
		if (u->seen[i].pid == pid) {
			u->seen[i] = u->seen[--u->nr_seen];
			return;
		}
	}
}

int unwinder__add_process(struct unwinder *u, pid_t pid)
{
	struct unwind_proc *proc = &u->proc;
	struct proc_maps pm;
	__u32 key = (__u32)pid;
	int err;

	err = proc_maps__read(pid, &pm);
	if (err)
		return err;
	if (!layout_changed(u, pid, exec_layout(&pm))) {
		proc_maps__release(&pm);
		return 0;
	}
	memset(proc, 0, sizeof(*proc));
	for (size_t i = 0; i < pm.nr; i++) {
		const struct mapping *map = &pm.maps[i];
		struct unwind_mapping *out = &proc->maps[proc->nr];

		if (!map->exec)
			continue;
		if (proc->nr == UNWIND_MAX_MAPPINGS) {
			pr_debug("process %d has more than %d executable mappings: frames "
				 "above %#lx use frame pointers",
				 (int)pid, UNWIND_MAX_MAPPINGS, (unsigned long)map->start);
			break;
		}
		*out = (struct unwind_mapping){.start = map->start, .end = map->end};
		if (mapping__is_file(map))
			map_object(u, pid, map, out);
		else if (map->path && !strcmp(map->path, "[vdso]"))
			map_vdso(u, map, out);
		proc->nr++;
	}
	proc_maps__release(&pm);
	/* A kernel thread: no code of its own to unwind through. */
	if (!proc->nr) {
		forget_layout(u, pid);
		return -ENOENT;
	}
	if (bpf_map_update_elem(u->opts.procs_fd, &key, proc, BPF_ANY)) {
		err = -errno;
		forget_layout(u, pid);
		return err;
	}
	tables_changed(u);
	return 0;
}

uint32_t unwinder__nr_full(const struct unwinder *u)
{
	return u->nr_full;
}

uint32_t unwinder__nr_unopened(const struct unwinder *u)
{
	return u->nr_unopened;
}

uint64_t unwinder__bytes(const struct unwinder *u)
{
	return chunked__bytes(&u->rows) + chunked__bytes(&u->pages);
}

void unwinder__forget_process(struct unwinder *u, pid_t pid)
{
	__u32 key = (__u32)pid;

	forget_layout(u, pid);
	if (!bpf_map_delete_elem(u->opts.procs_fd, &key))
		tables_changed(u);
}
