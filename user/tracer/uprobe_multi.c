// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uprobe_multi links through the raw bpf() syscall: see uprobe_multi.h for
 * why and for how to load the programs with libbpf 1.1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include "tracer/uprobe_multi.h"

/* link_create.uprobe_multi.flags: return probes instead of entry probes. */
#define UPROBE_MULTI_RETURN_FLAG 1U

/* The kernel's own limit (MAX_UPROBE_MULTI_CNT). */
#define UPROBE_MULTI_MAX_CNT (1U << 20)

/*
 * The head of union bpf_attr's link_create and its uprobe_multi member,
 * which the Linux 6.1 uapi headers we build against do not have. The
 * kernel zero-fills an attr shorter than its own, so this is all it needs.
 */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 link_flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 flags;
	__u32 pid;
};

_Static_assert(offsetof(struct link_create_uprobe_multi, path) ==
		   offsetof(union bpf_attr, link_create.kprobe_multi),
	       "link_create's per-type members start after its four words");

static long sys_bpf(int cmd, void *attr, unsigned int size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

static __u32 attach_type_of(enum uprobe_multi_mode mode)
{
	return mode == UPROBE_MULTI_SESSION ? UPROBE_SESSION_ATTACH_TYPE : UPROBE_MULTI_ATTACH_TYPE;
}

static int link_create(int prog_fd, const char *path, const uint64_t *offsets,
		       const uint64_t *cookies, uint32_t cnt, int pid, enum uprobe_multi_mode mode)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = attach_type_of(mode);
	attr.path = (uintptr_t)path;
	attr.offsets = (uintptr_t)offsets;
	attr.cookies = (uintptr_t)cookies;
	attr.cnt = cnt;
	attr.flags = mode == UPROBE_MULTI_RETURN ? UPROBE_MULTI_RETURN_FLAG : 0;
	attr.pid = pid;
	fd = sys_bpf(BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, size_t cnt, pid_t pid,
			 enum uprobe_multi_mode mode)
{
	if (!path || !offsets || !cnt)
		return -EINVAL;
	if (cnt > UPROBE_MULTI_MAX_CNT)
		return -E2BIG;
	/* The kernel reads pid 0 as "any process"; a negative one is an error. */
	return link_create(prog_fd, path, offsets, cookies, cnt, pid > 0 ? pid : 0, mode);
}

/* "r0 = 0; exit" as a kprobe-type program that only @attach_type may attach. */
static int load_probe_prog(__u32 attach_type)
{
	static const struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.expected_attach_type = attach_type;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t) "GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/*
 * Where the code of this very function lies in its file, from the mapping
 * that holds it: needs no symbol table (the binary may be stripped), and a
 * function's first byte is an instruction boundary, the only safe place
 * for a breakpoint in our own text. A hit would run the empty program.
 */
static int own_code_offset(char *path, size_t size, uint64_t *offset)
{
	uintptr_t addr = (uintptr_t)own_code_offset;
	unsigned long long start, end, pgoff, ino;
	struct stat exe;
	char line[4352];
	int err = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int name = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %llu %n", &start, &end, &pgoff, &ino,
			   &name) < 4 ||
		    !name)
			continue;
		if (addr < start || addr >= end)
			continue;
		*offset = addr - start + pgoff;
		line[strcspn(line, "\n")] = '\0';
		/*
		 * The executable by a name that survives its file being
		 * renamed or replaced; a library by its mapped name.
		 */
		if (!stat("/proc/self/exe", &exe) && exe.st_ino == ino)
			snprintf(path, size, "/proc/self/exe");
		else if (line[name] == '/')
			snprintf(path, size, "%s", line + name);
		else
			break;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/*
 * A link in @mode of an empty program at our own code, for this process:
 * its fd, or -errno. *@prog_fd is the program, open when the link is.
 */
static int own_link(enum uprobe_multi_mode mode, int *prog_fd, uint64_t *offset)
{
	char path[4096];
	int err, fd;

	err = own_code_offset(path, sizeof(path), offset);
	if (err)
		return err;
	/* Kernels that know neither take the attach type but refuse the link. */
	*prog_fd = load_probe_prog(attach_type_of(mode));
	if (*prog_fd < 0)
		return *prog_fd;
	fd = link_create(*prog_fd, path, offset, NULL, 1, getpid(), mode);
	if (fd < 0)
		close(*prog_fd);
	return fd;
}

bool uprobe_multi__supported(void)
{
	int prog_fd, link_fd;
	uint64_t offset = 0;
	bool ok;

	link_fd = own_link(UPROBE_MULTI_ENTRY, &prog_fd, &offset);
	if (link_fd < 0)
		return false;
	close(link_fd);
	/*
	 * 6.6 to 6.9 matched the pid against the thread, not the process, and
	 * looked it up only after the path. Kernels that filter by process
	 * check the pid first: a negative one with a path that cannot be
	 * probed gives EINVAL there, EBADF before.
	 */
	link_fd = link_create(prog_fd, "/", &offset, NULL, 1, -1, UPROBE_MULTI_ENTRY);
	ok = link_fd == -EINVAL;
	if (link_fd >= 0)
		close(link_fd);
	close(prog_fd);
	return ok;
}

bool uprobe_session__supported(void)
{
	uint64_t offset = 0;
	int prog_fd, link_fd;

	/* Before 6.13 the kernel refuses the attach type at load or at the link. */
	link_fd = own_link(UPROBE_MULTI_SESSION, &prog_fd, &offset);
	if (link_fd < 0)
		return false;
	close(link_fd);
	close(prog_fd);
	return true;
}
