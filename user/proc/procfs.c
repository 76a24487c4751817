// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "proc/procfs.h"

void proc_thread_name(pid_t pid, uint32_t tid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

pid_t proc_ns_pid(pid_t pid)
{
	char path[64], line[256], *last;
	pid_t ns_pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One pid per namespace, outermost first: more than one is a namespace of its own.
		 */
		last = strrchr(line, '\t');
		if (last && last != line + 6)
			ns_pid = atoi(last + 1);
		break;
	}
	fclose(f);
	return ns_pid;
}

uint64_t proc_rss(pid_t pid)
{
	unsigned long long pages = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%*u %llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return pages * sysconf(_SC_PAGESIZE);
}

long proc_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : n;
}

bool proc_gone(pid_t pid)
{
	char path[64], state = 'X';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (f) {
		/* The state follows the command's closing parenthesis. */
		if (fscanf(f, "%*[^)]) %c", &state) != 1)
			state = 'X';
		fclose(f);
	}
	return state == 'Z' || state == 'X';
}
