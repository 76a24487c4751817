/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the stack walker must know of the architecture that its unwind rows
 * do not say: where the kernel's signal frame keeps the interrupted
 * registers. One file per architecture, chosen here; the walker
 * (cfi.bpf.h) reads only the names they define:
 *
 * SIGFRAME_BP: the interrupted frame pointer's offset from the CFA the
 *              handler returned to (the sigreturn trampoline's stack pointer);
 * SIGFRAME_SP: the interrupted stack pointer's, with the interrupted
 *              program counter in the word after it (read as one pair).
 */
#ifndef ALLOCTRACE_ARCH_BPF_H
#define ALLOCTRACE_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "arch_x86.bpf.h"
#elif defined(__TARGET_ARCH_arm64)
/*
 * arm64 (issue 24): arch_arm64.bpf.h, from arch/arm64/kernel/signal.c's
 * struct rt_sigframe { struct siginfo info; struct ucontext uc; }: the
 * trampoline's sp is the frame record's, the registers in
 * uc.uc_mcontext.regs[], sp and pc after them.
 */
#endif

#endif
