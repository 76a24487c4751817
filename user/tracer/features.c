// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel feature probes, as retsnoop and bpftrace make them: libbpf's own
 * probes for map types and helpers (a program that calls the helper,
 * which the verifier knows or not), a two-instruction program loaded
 * sleepable, and the uprobe_multi links tried for real (uprobe_multi.c).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracer/features.h"
#include "tracer/uprobe_multi.h"

static const struct {
	const char *name;
	const char *since;
	enum kf_need need;
	const char *without;
} features[KF_MAX] = {
#define KFEATURE(id, name_, since_, need_, without_)                                               \
	[KF_##id] = {.name = name_, .since = since_, .need = KF_NEED_##need_, .without = without_},
#include "tracer/features.def"
#undef KFEATURE
};

static bool has_helper(enum bpf_func_id helper)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, helper, NULL) == 1;
}

/* Before 6.0 the verifier refuses a sleepable program of the kprobe type. */
static bool has_sleepable_uprobe(void)
{
	const struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void kernel_features__probe(struct kernel_features *f)
{
	bool *has = f->has;

	has[KF_BTF] = !access("/sys/kernel/btf/vmlinux", R_OK);
	has[KF_UPROBES] = !access("/sys/bus/event_source/devices/uprobe/type", R_OK);
	has[KF_RINGBUF] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	has[KF_TASK_STORAGE] = has_helper(BPF_FUNC_task_storage_get);
	has[KF_COOKIE] = has_helper(BPF_FUNC_get_attach_cookie);
	has[KF_BPF_LOOP] = has_helper(BPF_FUNC_loop);
	has[KF_SLEEPABLE_UPROBE] = has_sleepable_uprobe();
	has[KF_FIND_VMA] = has_helper(BPF_FUNC_find_vma);
	has[KF_UPROBE_MULTI] = uprobe_multi__supported();
	has[KF_UPROBE_SESSION] = has[KF_UPROBE_MULTI] && uprobe_session__supported();
}

int kernel_features__missing(const struct kernel_features *f, bool growth, char *buf, size_t size)
{
	size_t used = 0;
	int nr = 0;

	if (size)
		buf[0] = '\0';
	for (int i = 0; i < KF_MAX; i++) {
		enum kf_need need = features[i].need;

		if (f->has[i] || need == KF_NEED_NONE || (need == KF_NEED_GROWTH && !growth))
			continue;
		if (used < size)
			used += snprintf(buf + used, size - used, "%s%s (Linux %s)", nr ? ", " : "",
					 features[i].name, features[i].since);
		nr++;
	}
	return nr;
}

void kernel_features__print(const struct kernel_features *f, FILE *out)
{
	static const char *const needs[] = {
	    [KF_NEED_ALL] = "needed",
	    [KF_NEED_GROWTH] = "needed by --growth",
	};

	fprintf(out, "kernel features (this kernel):\n");
	for (int i = 0; i < KF_MAX; i++) {
		fprintf(out, "  %-3s %s (Linux %s)", f->has[i] ? "yes" : "no", features[i].name,
			features[i].since);
		if (!f->has[i] && features[i].need == KF_NEED_NONE)
			fprintf(out, ": without it, %s", features[i].without);
		else if (!f->has[i])
			fprintf(out, ": %s", needs[features[i].need]);
		fputc('\n', out);
	}
}
