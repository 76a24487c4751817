/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread whose block's only pointer is in a register, for the leak
 * checks' workloads: hold_register(fd) calls alloc_for_register(fd), which
 * the workload defines, and keeps what it returned in a callee-saved
 * register. The workload defines "holding" too, counted once the block is
 * held there.
 */
#ifndef HOLDREG_H
#define HOLDREG_H

void *alloc_for_register(long fd);
extern int holding;

/*
 * hold_register(fd): the block's only pointer in a callee-saved register,
 * the stack below wiped so that no dead frame keeps a copy, "holding"
 * counted; then a spin in user code (fd < 0) or read(fd) forever.
 */
void *hold_register(void *fd);
#if defined(__x86_64__)
asm(".text\n"
    ".globl hold_register\n"
    "hold_register:\n"
    "	push %rbx\n"
    "	mov %rdi, %rbx\n"
    "	call alloc_for_register\n"
    "	mov %rax, %r15\n"
    "	lea -8192(%rsp), %rdi\n"
    "	mov $1024, %ecx\n"
    "	xor %eax, %eax\n"
    "	rep stosq\n"
    "	lock incl holding(%rip)\n"
    "	test %rbx, %rbx\n"
    "	js 2f\n"
    "1:	xor %eax, %eax\n"
    "	mov %ebx, %edi\n"
    "	lea -64(%rsp), %rsi\n"
    "	mov $1, %edx\n"
    "	syscall\n"
    "	jmp 1b\n"
    "2:	pause\n"
    "	jmp 2b\n");
#elif defined(__aarch64__)
/* The same; read is system call 63. */
asm(".text\n"
    ".globl hold_register\n"
    "hold_register:\n"
    "	stp x29, x30, [sp, #-16]!\n"
    "	mov x19, x0\n"
    "	bl alloc_for_register\n"
    "	mov x28, x0\n"
    "	sub x1, sp, #8192\n"
    "	mov x2, #1024\n"
    "3:	str xzr, [x1], #8\n"
    "	subs x2, x2, #1\n"
    "	b.ne 3b\n"
    "	adrp x1, holding\n"
    "	add x1, x1, :lo12:holding\n"
    "4:	ldaxr w2, [x1]\n"
    "	add w2, w2, #1\n"
    "	stlxr w3, w2, [x1]\n"
    "	cbnz w3, 4b\n"
    "	tbnz x19, #63, 2f\n"
    "1:	mov w0, w19\n"
    "	sub x1, sp, #64\n"
    "	mov x2, #1\n"
    "	mov x8, #63\n"
    "	svc #0\n"
    "	b 1b\n"
    "2:	yield\n"
    "	b 2b\n");
#else
#error "hold_register: no assembly for this architecture"
#endif

#endif
