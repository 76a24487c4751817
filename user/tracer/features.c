// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel feature probes, as retsnoop and bpftrace make them: libbpf's own
 * probes for map types and helpers (a program that calls the helper,
 * which the verifier knows or not), a two-instruction program loaded
 * sleepable, the uprobe_multi links tried for real (uprobe_multi.c), and
 * the kernel's own types as its BTF describes them.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
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

/* @name is a member of struct @id, or of an unnamed struct or union in it. */
static bool btf_has_member(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;

	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return false;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *member = btf__name_by_offset(btf, m->name_off);

		if (member && *member ? !strcmp(member, name) : btf_has_member(btf, m->type, name))
			return true;
	}
	return false;
}

/*
 * What faults.bpf.h's mapping memo reads: the count of changes to an
 * address space's mappings that per-VMA locks brought (6.4), and the
 * mmap_lock's count, which a PREEMPT_RT kernel's rwsem has not.
 */
static bool has_mm_lock_seq(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool has = false;
	int mm, rwsem;

	if (!btf)
		return false;
	mm = btf__find_by_name_kind(btf, "mm_struct", BTF_KIND_STRUCT);
	rwsem = btf__find_by_name_kind(btf, "rw_semaphore", BTF_KIND_STRUCT);
	if (mm > 0 && rwsem > 0)
		has = btf_has_member(btf, mm, "mm_lock_seq") && btf_has_member(btf, rwsem, "count");
	btf__free(btf);
	return has;
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
	has[KF_MM_LOCK_SEQ] = has_mm_lock_seq();
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
