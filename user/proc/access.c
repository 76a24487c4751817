// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a caller that is not root may trace. A binary with file
 * capabilities (setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep) lets every
 * user who may run it load BPF programs and read other users' /proc files:
 * the capabilities are the binary's, not the caller's, so alloctrace keeps
 * to what the caller could do with ptrace itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "proc/access.h"
#include "lib/log.h"

int access__check_ids(void)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;

	if (getresuid(&ruid, &euid, &suid) || getresgid(&rgid, &egid, &sgid))
		return -errno;
	if (ruid == euid && euid == suid && rgid == egid && egid == sgid)
		return 0;
	pr_err("refusing to run setuid or setgid (real uid %u, effective %u; real gid %u, "
	       "effective %u): run it as root, or give a user capabilities (alloctrace(8), "
	       "PRIVILEGES)",
	       ruid, euid, rgid, egid);
	return -EPERM;
}

bool access__limited(void)
{
	return geteuid() != 0;
}

/* The first three ids of @line ("Uid:\t1000\t1000\t1000\t1000") all @id. */
static bool ids_all(const char *line, unsigned int id)
{
	unsigned int r, e, s;

	return sscanf(line, "%*s %u %u %u", &r, &e, &s) == 3 && r == id && e == id && s == id;
}

bool access__may_trace(pid_t pid)
{
	char path[64], line[256];
	bool uid_ok = false, gid_ok = false;
	struct stat st;
	FILE *f;

	if (!access__limited())
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4))
			uid_ok = ids_all(line, getuid());
		else if (!strncmp(line, "Gid:", 4))
			gid_ok = ids_all(line, getgid());
	}
	fclose(f);
	/*
	 * The kernel gives a process that is not dumpable (it ran a setuid
	 * program, or said so with prctl) a /proc directory owned by root.
	 */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return uid_ok && gid_ok && !stat(path, &st) && st.st_uid == getuid();
}
