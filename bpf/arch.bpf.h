/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the stack walker must know of the architecture that its unwind rows
 * do not say. One file per architecture, chosen here; the walker
 * (cfi.bpf.h) and the probes read only the names they define:
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
 *              x30), the walk starts with it (struct user_regs.lr).
 *
 * A new architecture is a new arch_<name>.bpf.h here and its
 * user/unwind/cfi_<name>.c; the walker itself takes no #if.
 */
#ifndef ALLOCTRACE_ARCH_BPF_H
#define ALLOCTRACE_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "arch_x86.bpf.h"
#elif defined(__TARGET_ARCH_arm64)
#include "arch_arm64.bpf.h"
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
