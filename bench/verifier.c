// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/verifier: what the kernel's verifier makes of each of alloctrace's
 * BPF programs, so that growth of the BPF side shows in `make bench`: the
 * instructions it processed (bpf_prog_info.verified_insns, 5.16+; else the
 * "processed N insns" line of its statistics), the translated and JITed
 * sizes, and the time it took ("verification time N usec", asked for with
 * log level 4, BPF_LOG_STATS). Every program is loaded, those alloctrace
 * loads only when asked (--big-only, --growth) too, once for each way of
 * walking stacks, since the verifier drops the code a configuration does
 * not use. Needs root; loads, prints, unloads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h" /* the skeleton's rodata is a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "tracer/uprobe_multi.h"

/* The statistics are a few lines; a failed load's log is printed whole. */
#define LOG_SIZE  (1 << 20)
#define MAX_PROGS 64

struct prog_log {
	struct bpf_program *prog;
	char *buf;
};

/* A number after @key in the verifier's log, or 0 when it does not say. */
static unsigned long long log_number(const char *log, const char *key)
{
	const char *at = strstr(log, key);

	return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

/* One program's line; adds its instructions and time to @total. */
static void print_prog(const struct prog_log *p, unsigned long long total[2])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	unsigned long long insns, usec;
	int fd = bpf_program__fd(p->prog);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		printf("  %-24s cannot read its info: %s\n", bpf_program__name(p->prog),
		       strerror(errno));
		return;
	}
	insns = info.verified_insns ?: log_number(p->buf, "processed ");
	usec = log_number(p->buf, "verification time ");
	printf("  %-24s %9llu %9u %9u %11llu\n", bpf_program__name(p->prog), insns,
	       info.xlated_prog_len / 8, info.jited_prog_len, usec);
	total[0] += insns;
	total[1] += usec;
}

/* Every program loaded, with a log buffer for its statistics each. */
static int prepare(struct alloctrace_bpf *skel, struct prog_log *logs, int *n)
{
	bool session = uprobe_session__supported();
	struct bpf_program *prog;

	*n = 0;
	/* As alloctrace loads it: a session program, only where the kernel has them (6.13+). */
	bpf_program__set_expected_attach_type(skel->progs.alloc_session,
					      UPROBE_SESSION_ATTACH_TYPE);
	bpf_object__for_each_program(prog, skel->obj)
	{
		if (prog == skel->progs.alloc_session && !session) {
			bpf_program__set_autoload(prog, false);
			continue;
		}
		if (*n == MAX_PROGS)
			return -E2BIG;
		logs[*n].prog = prog;
		logs[*n].buf = calloc(1, LOG_SIZE);
		if (!logs[*n].buf)
			return -ENOMEM;
		bpf_program__set_autoload(prog, true);
		bpf_program__set_log_level(prog, 4);
		bpf_program__set_log_buf(prog, logs[(*n)++].buf, LOG_SIZE);
	}
	return 0;
}

/* measure NAME CFI: load every program, as alloctrace -p does, and print. */
static int measure(const char *name, bool cfi)
{
	struct prog_log logs[MAX_PROGS] = {};
	struct alloctrace_bpf *skel;
	int n = 0, err, i;

	skel = alloctrace_bpf__open();
	if (!skel) {
		fprintf(stderr, "verifier: cannot open alloctrace's BPF object: %s\n",
			strerror(errno));
		return -errno;
	}
	skel->rodata->cfg.targ_tgid = (__u32)getpid();
	skel->rodata->cfg.unwind_cfi = cfi;
	err = prepare(skel, logs, &n) ?: alloctrace_bpf__load(skel);
	if (err) {
		fprintf(stderr, "verifier: cannot load alloctrace's BPF programs (%s): %s\n", name,
			strerror(-err));
	} else {
		printf("# BPF programs, stacks walked by %s\n", name);
		printf("  %-24s %9s %9s %9s %11s\n", "program", "verified", "xlated", "jited",
		       "verify_usec");
		unsigned long long total[2] = {};

		for (i = 0; i < n; i++)
			print_prog(&logs[i], total);
		printf("  %-24s %9llu %31llu\n", "total", total[0], total[1]);
	}
	alloctrace_bpf__destroy(skel);
	for (i = 0; i < n; i++)
		free(logs[i].buf);
	return err;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

int main(void)
{
	libbpf_set_print(quiet);
	printf("# verified: instructions the verifier processed; xlated: instructions after "
	       "its rewrites; jited: bytes of machine code; verify_usec: the verifier's time, "
	       "which a loaded machine stretches\n");
	return measure("frame pointers", false) || measure("CFI", true) ? 1 : 0;
}
