/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * clobber_fp(saved): leave the frame-pointer register pointing nowhere,
 * as code that uses it as a general register may, so that a frame-pointer
 * walk from below stops at once; restore_fp(saved) puts it back before
 * the function returns. For code built with -fomit-frame-pointer. Both
 * by hand: aarch64 gcc does not save x29 for a clobber, and its caller's
 * frame would be lost.
 */
#ifndef CLOBBER_FP_H
#define CLOBBER_FP_H

#if defined(__x86_64__)
#define clobber_fp(saved) asm volatile("mov %%rbp, %0\n\txor %%ebp, %%ebp" : "=r"(saved) : : "rbp")
#define restore_fp(saved) asm volatile("mov %0, %%rbp" : : "r"(saved) : "rbp")
#elif defined(__aarch64__)
#define clobber_fp(saved) asm volatile("mov %0, x29\n\tmov x29, xzr" : "=r"(saved) : : "x29")
#define restore_fp(saved) asm volatile("mov x29, %0" : : "r"(saved) : "x29")
#else
#error "clobber_fp(): no frame-pointer register known for this architecture"
#endif

#endif
