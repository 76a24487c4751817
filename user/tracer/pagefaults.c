// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --growth's hook where the kernel has no page_fault_user tracepoint (it
 * is x86's alone): the page-fault software event on every CPU, sampled at
 * each fault, with page_fault_event (bpf/alloctrace.bpf.c) as its
 * overflow handler. The event sees no fault flags; the program tells a
 * page not present by a read that may not fault (bpf/faults.bpf.h).
 * CPUs offline now are skipped: one brought up later goes unwatched.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "config.h" /* before the skeleton, whose rodata holds a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "lib/log.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"

/* The page-fault event of @cpu, every fault a sample: its fd, or -errno. */
static int open_fault_event(int cpu)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_PAGE_FAULTS,
	    .sample_period = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int pagefaults__attach(struct tracer *t)
{
	struct bpf_program *prog = t->skel->progs.page_fault_event;
	int nr = libbpf_num_possible_cpus(), attached = 0, fd, err;
	struct bpf_link *link;

	for (int cpu = 0; cpu < nr; cpu++) {
		err = tracer__reserve_link(t);
		if (err)
			return err;
		fd = open_fault_event(cpu);
		if (fd == -ENODEV)
			continue; /* offline */
		if (fd < 0) {
			pr_err("cannot open the page-fault event of CPU %d: %s", cpu,
			       strerror(-fd));
			return fd;
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link) {
			err = -errno;
			close(fd);
			pr_err("cannot attach to the page-fault event of CPU %d: %s", cpu,
			       strerror(-err));
			return err;
		}
		t->links[t->nr_links++] = link;
		attached++;
	}
	pr_debug("page-fault events on %d CPUs", attached);
	return 0;
}
