/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ARCH_H
#define ALLOCTRACE_ARCH_H

/*
 * The machine a thread in a ptrace stop runs on: its general registers
 * (ptrace's NT_PRSTATUS regset, in the kernel's layout), the stack and
 * instruction pointers among them, the system-call instruction and
 * convention a call injected into it uses, the restart of a call it was
 * interrupted in, the ABI's red zone, its ELF machine and the kernel's
 * hooks it has. One file each architecture implements it (arch_x86.c,
 * arch_arm64.c): the Makefile compiles ARCH's, the loader's one choice of
 * architecture. What the loader knows of other machines too (the traced
 * objects') is machines.h's.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Words enough for any architecture's NT_PRSTATUS: x86-64 27, arm64 34, riscv64 32. */
#define ARCH_REGS_MAX 40

struct arch_regs {
	uint64_t w[ARCH_REGS_MAX]; /* user_regs_struct, user_pt_regs, ... */
	uint32_t nr;		   /* the words of @w the kernel filled */
	int64_t syscall;	   /* the call the kernel would restart, or -1 */
};

/* The system-call instruction, as its bytes lie in memory, and its alignment. */
struct arch_syscall_insn {
	uint8_t bytes[4];
	uint8_t len, align;
};
extern const struct arch_syscall_insn arch_syscall_insn;

/* Bytes below the stack pointer that a function may use without moving it. */
extern const unsigned int arch_red_zone;

/* The loader's own ELF machine (EM_X86_64, ...): its row of machines.h (ARCH_MACHINES). */
extern const unsigned int arch_elf_machine;

/*
 * --growth's hook: the kernel's page_fault_user tracepoint, where its
 * error code says whether the page was present (x86's); else the
 * page-fault software event.
 */
extern const bool arch_growth_tracepoint;

/* Registers as DWARF numbers them, as many as arch_regs_dwarf() gives at most. */
#define ARCH_DWARF_REGS 32

/*
 * @r's general registers by their DWARF numbers from 0, as a CFI
 * unwinder (libdwfl's) takes a thread's first frame: x86-64 rax, rdx,
 * rcx, rbx, rsi, rdi, rbp, rsp, r8-r15 and rip, its return address
 * column (17); arm64 x0-x30 and sp (32). How many, into @out.
 */
unsigned int arch_regs_dwarf(const struct arch_regs *r, uint64_t out[ARCH_DWARF_REGS]);

/* A stopped thread's registers; -ENOEXEC for a 32-bit (compat) thread. 0 or -errno. */
int arch_regs_get(pid_t tid, struct arch_regs *r);
int arch_regs_set(pid_t tid, const struct arch_regs *r);
uint64_t arch_regs_sp(const struct arch_regs *r);
uint64_t arch_regs_pc(const struct arch_regs *r);

/* Make @r run system call @nr(@args[0], @args[1], @args[2], 0, ...) at @insn. */
void arch_regs_call(struct arch_regs *r, uint64_t insn, long nr, const uint64_t args[3]);
/* The result of the call @r ran, read at its exit stop. */
long arch_regs_ret(const struct arch_regs *r);

/*
 * The registers a thread stopped with @r resumes with when a call is
 * injected into it first: the injected call's exit comes in between, so
 * the restart of a call @r was interrupted in is made here and the
 * kernel's forgotten.
 */
struct arch_regs arch_regs_resume(const struct arch_regs *r);

/* For the arch files: NT_PRSTATUS, which must be @size bytes (a 64-bit thread's). */
int arch__getregset(pid_t tid, struct arch_regs *r, size_t size);
int arch__setregset(pid_t tid, const struct arch_regs *r);

#endif
