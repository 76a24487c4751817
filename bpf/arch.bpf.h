/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF side must know of the architecture: for the stack walker,
 * what its unwind rows do not say; for the probes, the registers, system
 * calls and modes. One file per architecture, chosen here and nowhere
 * else; the walker (cfi.bpf.h) and the programs read only the names they
 * define:
 *
 * SIGFRAME_BP: the interrupted frame pointer's offset from the CFA the
 *              handler returned to (the sigreturn trampoline's stack pointer);
 * SIGFRAME_SP: the interrupted stack pointer's, with the interrupted
 *              program counter in the word after it (read as one pair);
 * SIGFRAME_LR: where there is a link register, its offset: the word
 *              after SIGFRAME_BP (read as one pair with it);
 * STRIP_RA(a): return address @a as an address, without what signs it;
 * PLT_CFA(sp, ip, cut): the CFA in a PLT stub (UNWIND_CFA_PLT rows);
 * HAS_LINK_REGISTER, PT_REGS_LR(regs), PT_REGS_LR_CORE(regs): where a
 *              call leaves the return address in a register (arm64's
 *              x30), the walk starts with it (struct user_regs.lr);
 * ARCH_REGS(REG): REG(number, pt_regs field) for each general register a
 *              probe's cookie may name (COOKIE_ARG_SHIFT), ";" between;
 * SYSCALL_NR(regs), SYSCALL_ARG6(regs): the system call a task is in and
 *              its sixth argument; NR_MMAP, NR_MUNMAP, NR_BRK, NR_MREMAP:
 *              the numbers of those --big-only follows;
 * USER_MODE(regs): a perf event's registers are of user mode.
 *
 * A new architecture is a new arch_<name>.bpf.h here (docs/ARCHITECTURE.md
 * lists the rest); nothing outside these files takes an architecture #if.
 */
#ifndef ALLOCTRACE_ARCH_BPF_H
#define ALLOCTRACE_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "arch_x86.bpf.h"
#elif defined(__TARGET_ARCH_arm64)
#include "arch_arm64.bpf.h"
#else
#error "no bpf/arch_<name>.bpf.h for this __TARGET_ARCH_ (the Makefile's ARCH)"
#endif

#if defined(SIGFRAME_BP)
#define ARCH_WALKS_CFI 1
#endif
#if !defined(HAS_LINK_REGISTER)
#define HAS_LINK_REGISTER     0
#define PT_REGS_LR(regs)      0
#define PT_REGS_LR_CORE(regs) 0
#endif

#endif
