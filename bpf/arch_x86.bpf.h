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

#endif
