// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* x86-64: struct user_regs_struct; `syscall`, its number in rax. */
#include <elf.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include "arch/arch.h"

#if !defined(__x86_64__)
#error "arch_x86.c is x86-64's: ARCH does not name the compiler's target"
#endif

#define REG(name) (offsetof(struct user_regs_struct, name) / sizeof(uint64_t))

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(((struct arch_regs *)0)->w),
	       "ARCH_REGS_MAX holds x86-64's registers");

const struct arch_syscall_insn arch_syscall_insn = {{0x0f, 0x05}, 2, 1};
const unsigned int arch_red_zone = 128;
const unsigned int arch_elf_machine = EM_X86_64;
const bool arch_growth_tracepoint = true;

/* The psABI's DWARF numbering (its figure 3.36): 16 is the return address, rip. */
unsigned int arch_regs_dwarf(const struct arch_regs *r, uint64_t out[ARCH_DWARF_REGS])
{
	static const unsigned char order[] = {
	    REG(rax), REG(rdx), REG(rcx), REG(rbx), REG(rsi), REG(rdi), REG(rbp), REG(rsp), REG(r8),
	    REG(r9),  REG(r10), REG(r11), REG(r12), REG(r13), REG(r14), REG(r15), REG(rip),
	};

	_Static_assert(sizeof(order) <= ARCH_DWARF_REGS, "ARCH_DWARF_REGS holds x86-64's");
	for (unsigned int i = 0; i < sizeof(order); i++)
		out[i] = r->w[order[i]];
	return sizeof(order);
}

/* The call a thread is in is orig_rax, -1 in user code. */
int arch_regs_get(pid_t tid, struct arch_regs *r)
{
	int err = arch__getregset(tid, r, sizeof(struct user_regs_struct));

	if (!err)
		r->syscall = (int64_t)r->w[REG(orig_rax)];
	return err;
}

int arch_regs_set(pid_t tid, const struct arch_regs *r)
{
	struct arch_regs o = *r;

	o.w[REG(orig_rax)] = (uint64_t)r->syscall;
	return arch__setregset(tid, &o);
}

uint64_t arch_regs_sp(const struct arch_regs *r)
{
	return r->w[REG(rsp)];
}

uint64_t arch_regs_pc(const struct arch_regs *r)
{
	return r->w[REG(rip)];
}

void arch_regs_call(struct arch_regs *r, uint64_t insn, long nr, const uint64_t args[3])
{
	r->w[REG(rip)] = insn;
	r->w[REG(rax)] = nr;
	r->syscall = -1;
	r->w[REG(rdi)] = args[0];
	r->w[REG(rsi)] = args[1];
	r->w[REG(rdx)] = args[2];
	r->w[REG(r10)] = r->w[REG(r8)] = r->w[REG(r9)] = 0;
}

long arch_regs_ret(const struct arch_regs *r)
{
	return (long)r->w[REG(rax)];
}

/*
 * x86-64 restarts an interrupted call on the way out of the stop, from
 * rax's error: the same done here, rip back over the 2-byte `syscall`.
 */
struct arch_regs arch_regs_resume(const struct arch_regs *r)
{
	struct arch_regs o = *r;

	if (r->syscall < 0)
		return o;
	switch ((int)r->w[REG(rax)]) {
	case -512:
	case -513:
	case -514: /* ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND */
		o.w[REG(rax)] = r->syscall;
		o.w[REG(rip)] -= 2;
		break;
	case -516: /* ERESTART_RESTARTBLOCK */
		o.w[REG(rax)] = SYS_restart_syscall;
		o.w[REG(rip)] -= 2;
		break;
	}
	o.syscall = -1;
	return o;
}
