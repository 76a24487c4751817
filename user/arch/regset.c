// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* NT_PRSTATUS through PTRACE_GETREGSET, which every architecture has. */
#include <elf.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include "arch/arch.h"

int arch__getregset(pid_t tid, struct arch_regs *r, size_t size)
{
	struct iovec iov = {r->w, sizeof(r->w)};

	if (ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &iov))
		return -errno;
	/* A compat thread's registers are 32-bit words, in another layout. */
	if (iov.iov_len != size)
		return -ENOEXEC;
	r->nr = iov.iov_len / sizeof(r->w[0]);
	return 0;
}

int arch__setregset(pid_t tid, const struct arch_regs *r)
{
	struct iovec iov = {(void *)r->w, r->nr * sizeof(r->w[0])};

	return ptrace(PTRACE_SETREGSET, tid, NT_PRSTATUS, &iov) ? -errno : 0;
}
