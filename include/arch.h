/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the BPF programs and the loader must agree on of the architecture,
 * one file each, chosen here and nowhere else in include/:
 *
 * ABI_ARG_REG(i): the register the C ABI passes integer argument @i (from
 *                 0) in, by the numbers of a probe's cookie
 *                 (COOKIE_ARG_SHIFT in alloctrace.h);
 * RET_SP_DELTA:   the stack pointer at a return probe less the one at the
 *                 call's entry probe (inflight_rules.h).
 */
#ifndef ALLOCTRACE_ARCH_SHARED_H
#define ALLOCTRACE_ARCH_SHARED_H

#if defined(__bpf__) || defined(UNWIND_REPLAY)
/* The BPF object and the walker's replay: the Makefile's ARCH, whatever the host. */
#if defined(__TARGET_ARCH_x86)
#include "arch_x86.h"
#elif defined(__TARGET_ARCH_arm64)
#include "arch_arm64.h"
#else
#error "no include/arch_<name>.h for this __TARGET_ARCH_ (the Makefile's ARCH)"
#endif
/* The loader: its compiler's target, which the Makefile's ARCH chose. */
#elif defined(__x86_64__)
#include "arch_x86.h"
#elif defined(__aarch64__)
#include "arch_arm64.h"
#else
#error "no include/arch_<name>.h for the compiler's target"
#endif

#endif
