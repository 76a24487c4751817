// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The loader's half of bpf/linkmap.bpf.h: the probe on each traced
 * process's dynamic loader (r_debug.r_brk), and the holds and waits it
 * answers.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h" /* before the skeleton, whose rodata holds a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "lib/log.h"
#include "lib/util.h"
#include "probe/linkmap.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"
#include "tracer/uprobe_multi.h"

/*
 * Is the loader in @st watched already for the filter @pid? Else it is
 * from now on, if there is room.
 */
static bool watched(struct tracer *t, const struct stat *st, pid_t pid, bool *no_room)
{
	struct probed_file *w;

	for (size_t i = 0; i < t->nr_watched; i++) {
		if (t->watched[i].dev == st->st_dev && t->watched[i].ino == st->st_ino &&
		    t->watched[i].pid == pid)
			return true;
	}
	w = array__grow(t->watched, &t->watched_cap, t->nr_watched, sizeof(*w));
	*no_room = !w;
	if (w)
		t->watched = w;
	return false;
}

/* @prog at @offset of @path for the process filter @pid, its cookie @cookie. 0 or -errno. */
static int attach_hold(struct tracer *t, struct bpf_program *prog, const char *path,
		       uint64_t offset, uint64_t cookie, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie);
	struct bpf_link *link;
	int fd, err;

	err = t->multi ? tracer__reserve_link_fd(t) : tracer__reserve_link(t);
	if (err)
		return err;
	if (t->multi) {
		fd = uprobe_multi__attach(bpf_program__fd(prog), path, &offset, &cookie, 1, pid,
					  UPROBE_MULTI_ENTRY);
		if (fd < 0)
			return fd;
		t->link_fds[t->nr_link_fds++] = fd;
		return 0;
	}
	link = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &opts);
	if (!link)
		return -errno;
	t->links[t->nr_links++] = link;
	return 0;
}

void tracer__watch_linkmap(struct tracer *t, pid_t pid)
{
	pid_t filter = tracer__probe_filter(t, pid);
	size_t nr_links = t->nr_links, nr_link_fds = t->nr_link_fds;
	struct link_watch w;
	bool no_room = false;
	struct stat st;
	int err;

	/* --big-only and --growth promise no uprobe: their objects' tables come on a miss. */
	if (!t->unwinder || t->no_probes || t->syscalls)
		return;
	err = link_watch__find(pid, &w);
	if (!err && stat(w.path, &st))
		err = -errno;
	if (err) {
		/* Static, gone, or not ours to read: tables come on a miss, as without the probe.
		 */
		pr_debug("process %d: no dynamic loader to watch: %s", (int)pid, strerror(-err));
		return;
	}
	if (watched(t, &st, filter, &no_room))
		return;
	err = no_room ? -ENOMEM
		      : attach_hold(t, t->skel->progs.linkmap_change, w.path, w.offset,
				    (uint64_t)w.to_state, filter);
	if (!err && t->own_links && filter > 0)
		err = tracer__own_links(t, pid, nr_links, nr_link_fds);
	if (err) {
		pr_warn("cannot probe the dynamic loader %s of process %d (%s): the libraries "
			"it maps later get their unwind tables only once a stack needs them",
			w.name, (int)pid, strerror(-err));
		return;
	}
	t->watched[t->nr_watched++] =
	    (struct probed_file){.dev = st.st_dev, .ino = st.st_ino, .pid = filter};
	pr_debug("uprobe on %s+%#llx, the dynamic loader's r_brk", w.name,
		 (unsigned long long)w.offset);
}

void tracer__hold_launched(struct tracer *t, pid_t pid)
{
	t->skel->bss->linkmap_hold_tgid = (__u32)pid;
}

/*
 * The loader of process @tgid mapped objects: their tables, the session's
 * look at them, then the answer a thread waiting in the probe waits for.
 * The count of changes is read first: each of those happened before this
 * reading of the mappings.
 */
static void answer(struct tracer *t, __u32 tgid)
{
	int asked_fd = bpf_map__fd(t->skel->maps.linkmap_asked);
	int answered_fd = bpf_map__fd(t->skel->maps.linkmap_answered);
	struct task_event ev = {.type = EVENT_LINKMAP, .tgid = tgid};
	__u64 asked = 0;

	bpf_map_lookup_elem(asked_fd, &tgid, &asked);
	tracer__reread_mappings(t, (pid_t)tgid);
	if (t->on_linkmap)
		t->on_linkmap(t->ctx, &ev);
	if (asked)
		bpf_map_update_elem(answered_fd, &tgid, &asked, BPF_ANY);
}

bool tracer__release_hold(struct tracer *t, pid_t tid)
{
	int fd = bpf_map__fd(t->skel->maps.linkmap_holds);
	__u32 key = (__u32)tid, tgid;

	if (bpf_map_lookup_elem(fd, &key, &tgid))
		return false;
	pr_debug("process %u: its dynamic loader mapped objects: their unwind tables now", tgid);
	answer(t, tgid);
	bpf_map_delete_elem(fd, &key);
	return true;
}

void linkwatch__changed(struct tracer *t, const struct task_event *ev)
{
	pr_debug("process %u: its dynamic loader mapped objects: reading its mappings again",
		 ev->tgid);
	answer(t, ev->tgid);
}
