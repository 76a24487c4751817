/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arm64's part of the stack walk (bpf/arch.bpf.h says what each name is).
 *
 * The signal frame: arch/arm64/kernel/signal.c's struct rt_sigframe
 * { struct siginfo info; struct ucontext uc; }. The handler returns to
 * the vDSO's __kernel_rt_sigreturn (glibc sets no restorer on arm64) with
 * sp at the frame: 128 bytes of siginfo, then the ucontext's uc_flags,
 * uc_link, a 24-byte stack_t, an 8-byte sigset_t and 120 bytes of padding
 * to 1024 bits, then uc_mcontext aligned to 16, a struct sigcontext:
 * fault_address, regs[31], sp, pc (vmlinux/arm64/vmlinux.h).
 */
#ifndef ALLOCTRACE_ARCH_ARM64_BPF_H
#define ALLOCTRACE_ARCH_ARM64_BPF_H

#define SIGFRAME_MCONTEXT 304
#define SIGFRAME_REG(n)	  (SIGFRAME_MCONTEXT + 8 + (n)*8)
/* x29, with x30 in the word after it: read as one pair. */
#define SIGFRAME_BP SIGFRAME_REG(29)
#define SIGFRAME_LR SIGFRAME_REG(30)
#define SIGFRAME_SP SIGFRAME_REG(31)

/*
 * __kernel_rt_sigreturn's two instructions, mov x8, #139 (rt_sigreturn)
 * and svc #0, read as one little-endian word: the vDSO has given the
 * trampoline no CFI since Linux 5.9 (its rules misled unwinders), so it
 * is known by its code, as gdb and libgcc know it.
 */
#define SIGRETURN_INSNS 0xd4000001d2801168ULL

/*
 * Pointer authentication (pac-ret: paciasp in the prologue, autiasp before
 * ret) signs x30 before it is saved, the signature in the address's unused
 * top bits; DW_CFA_AARCH64_negate_ra_state marks where. Every return
 * address the walk reads, from x30 or the stack, has them cleared: a
 * user address is below 2^48 (VA_BITS 48, Debian's and Android's
 * kernels; with 52-bit VA the kernel maps above 2^48 only where mmap is
 * given a hint there, never a stack or a library), and the top bits of an
 * unsigned one are 0 anyway.
 */
#define USER_VA_BITS   48
#define STRIP_RA(addr) ((addr) & ((1ULL << USER_VA_BITS) - 1))

/* The link register: a frame's return address until its prologue saves it. */
#define HAS_LINK_REGISTER  1
#define PT_REGS_LR(regs)   PT_REGS_RET(regs)
#define PT_REGS_LR_CORE(r) PT_REGS_RET_CORE(r)

/* The tables give arm64 no PLT rows (UNWIND_CFA_PLT): its stubs keep sp. */
#define PLT_CFA(sp, ip, cut) (sp)

/*
 * The general registers as the probes' cookies number them
 * (COOKIE_ARG_SHIFT: x0-x30), each REG(number, pt_regs field).
 */
#define ARCH_REGS4(REG, n)                                                                         \
	REG(n, regs[n]);                                                                           \
	REG(n + 1, regs[n + 1]);                                                                   \
	REG(n + 2, regs[n + 2]);                                                                   \
	REG(n + 3, regs[n + 3])
#define ARCH_REGS(REG)                                                                             \
	ARCH_REGS4(REG, 0);                                                                        \
	ARCH_REGS4(REG, 4);                                                                        \
	ARCH_REGS4(REG, 8);                                                                        \
	ARCH_REGS4(REG, 12);                                                                       \
	ARCH_REGS4(REG, 16);                                                                       \
	ARCH_REGS4(REG, 20);                                                                       \
	ARCH_REGS4(REG, 24);                                                                       \
	REG(28, regs[28]);                                                                         \
	REG(29, regs[29]);                                                                         \
	REG(30, regs[30])

/* The syscall a task is in, and its sixth argument, which libbpf 1.1 has no macro for. */
#define SYSCALL_NR(regs)   BPF_CORE_READ(regs, syscallno)
#define SYSCALL_ARG6(regs) BPF_CORE_READ(regs, regs[5])

/* The system calls --big-only follows (the generic table, include/uapi/asm-generic/unistd.h). */
#define NR_MMAP	  222
#define NR_MUNMAP 215
#define NR_BRK	  214
#define NR_MREMAP 216

/* Fault registers from the user's mode (PSR_MODE_EL0t), not the kernel's own. */
#define USER_MODE(regs) (((regs)->pstate & 0xf) == 0)

#endif
