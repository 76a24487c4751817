/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * x86-64's part of the stack walk (bpf/arch.bpf.h says what each name is).
 *
 * The signal frame (arch/x86/include/asm/sigframe.h): the handler
 * returns to the trampoline with its stack pointer at the frame's
 * struct ucontext (uc_flags, uc_link, a 24-byte stack_t, then
 * uc_mcontext, a struct sigcontext: r8-r15, rdi, rsi, rbp, rbx, rdx,
 * rax, rcx, rsp, rip). The same offsets glibc's __restore_rt CFI gives.
 */
#ifndef ALLOCTRACE_ARCH_X86_BPF_H
#define ALLOCTRACE_ARCH_X86_BPF_H

#define SIGFRAME_MCONTEXT 40
#define SIGFRAME_BP	  (SIGFRAME_MCONTEXT + 10 * 8)
#define SIGFRAME_SP	  (SIGFRAME_MCONTEXT + 15 * 8)

/* A call pushes the return address: no link register, nothing signs it. */
#define STRIP_RA(addr) (addr)

/*
 * binutils' and lld's .plt: CFA = rsp + 8, + 16 once the lazy stub's push
 * has run, that is where (rip & 15) >= @cut (unwind_row.cfa_off).
 */
#define PLT_CFA(sp, ip, cut) ((sp) + 8 + (((ip)&15) >= (__u64)(cut) ? 8 : 0))

/*
 * The general registers as the probes' cookies number them
 * (COOKIE_ARG_SHIFT: by their encoding), each REG(number, pt_regs field).
 */
#define ARCH_REGS(REG)                                                                             \
	REG(0, ax);                                                                                \
	REG(1, cx);                                                                                \
	REG(2, dx);                                                                                \
	REG(3, bx);                                                                                \
	REG(4, sp);                                                                                \
	REG(5, bp);                                                                                \
	REG(6, si);                                                                                \
	REG(7, di);                                                                                \
	REG(8, r8);                                                                                \
	REG(9, r9);                                                                                \
	REG(10, r10);                                                                              \
	REG(11, r11);                                                                              \
	REG(12, r12);                                                                              \
	REG(13, r13);                                                                              \
	REG(14, r14);                                                                              \
	REG(15, r15)

/* The syscall a task is in, and its sixth argument, which libbpf 1.1 has no macro for. */
#define SYSCALL_NR(regs)   BPF_CORE_READ(regs, orig_ax)
#define SYSCALL_ARG6(regs) BPF_CORE_READ(regs, r9)

/* The system calls --big-only follows (arch/x86/entry/syscalls/syscall_64.tbl). */
#define NR_MMAP	  9
#define NR_MUNMAP 11
#define NR_BRK	  12
#define NR_MREMAP 25

/*
 * Fault registers from the user's mode, not the kernel's own: a perf
 * event's context is read in whole words, cs with the padding after it.
 */
#define USER_MODE(regs) ((*(volatile const __u64 *)&(regs)->cs & 3) == 3)

#endif
