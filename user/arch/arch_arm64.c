// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * arm64: struct user_pt_regs (x0-x30, sp, pc, pstate); `svc #0`, its
 * number in x8, its result in x0. The call a thread is in is not among
 * them: it is the NT_ARM_SYSTEM_CALL regset.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <asm/ptrace.h>
#include "arch/arch.h"

#if !defined(__aarch64__)
#error "arch_arm64.c is arm64's: ARCH does not name the compiler's target"
#endif

#define REG_SP	   31
#define REG_PC	   32
#define REG_PSTATE 33
/* PSTATE.BTYPE: a branch-target check pending, which a moved pc must not inherit. */
#define PSTATE_BTYPE 0xc00ULL

_Static_assert(sizeof(struct user_pt_regs) <= sizeof(((struct arch_regs *)0)->w),
	       "ARCH_REGS_MAX holds arm64's registers");
_Static_assert(offsetof(struct user_pt_regs, pstate) == REG_PSTATE * 8, "user_pt_regs' layout");

const struct arch_syscall_insn arch_syscall_insn = {{0x01, 0x00, 0x00, 0xd4}, 4, 4};
/* AAPCS64 has none: below sp is free for a signal frame at any instant. */
const unsigned int arch_red_zone = 0;
const unsigned int arch_elf_machine = EM_AARCH64;
/* No page_fault_user tracepoint: the page-fault event, its page looked at. */
const bool arch_growth_tracepoint = false;

/* x0-x30 and sp are DWARF's 0-31, in user_pt_regs' own order; the pc has no number. */
unsigned int arch_regs_dwarf(const struct arch_regs *r, uint64_t out[ARCH_DWARF_REGS])
{
	for (unsigned int i = 0; i <= REG_SP; i++)
		out[i] = r->w[i];
	return REG_SP + 1;
}

static int system_call(pid_t tid, int request, int *nr)
{
	struct iovec iov = {nr, sizeof(*nr)};

	return ptrace(request, tid, NT_ARM_SYSTEM_CALL, &iov) ? -errno : 0;
}

int arch_regs_get(pid_t tid, struct arch_regs *r)
{
	int nr, err;

	err = arch__getregset(tid, r, sizeof(struct user_pt_regs))
		  ?: system_call(tid, PTRACE_GETREGSET, &nr);
	if (!err)
		r->syscall = nr;
	return err;
}

int arch_regs_set(pid_t tid, const struct arch_regs *r)
{
	int nr = (int)r->syscall;

	return arch__setregset(tid, r) ?: system_call(tid, PTRACE_SETREGSET, &nr);
}

uint64_t arch_regs_sp(const struct arch_regs *r)
{
	return r->w[REG_SP];
}

uint64_t arch_regs_pc(const struct arch_regs *r)
{
	return r->w[REG_PC];
}

void arch_regs_call(struct arch_regs *r, uint64_t insn, long nr, const uint64_t args[3])
{
	r->w[REG_PC] = insn;
	r->w[REG_PSTATE] &= ~PSTATE_BTYPE;
	r->w[8] = nr;
	r->syscall = -1;
	r->w[0] = args[0];
	r->w[1] = args[1];
	r->w[2] = args[2];
	r->w[3] = r->w[4] = r->w[5] = 0;
}

long arch_regs_ret(const struct arch_regs *r)
{
	return (long)r->w[0];
}

/*
 * arm64 prepares an interrupted call's restart before the stop a tracer
 * sees (do_signal(): pc back on its `svc`, x0 its first argument again,
 * the call forgotten), so the registers as read restart it. Lost is only
 * what the kernel does after the stop when pc was left alone: x8 made
 * restart_syscall for an ERESTART_RESTARTBLOCK call (nanosleep, poll, a
 * futex wait with a timeout), which begins again instead, its relative
 * timeout whole. The injected call is forgotten, as the kernel would.
 */
struct arch_regs arch_regs_resume(const struct arch_regs *r)
{
	struct arch_regs o = *r;

	o.syscall = -1;
	return o;
}
