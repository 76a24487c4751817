// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A leak at exit whose only pointer lies in a dead stack frame. Usage:
 * deadframe return|exit. leave_in_frame() allocates 48 bytes, stores the
 * only pointer in each slot of a local volatile array and returns; then
 * main returns (return: glibc's __libc_start_call_main calls exit()), or
 * calls exit_holding(), which calls exit() (exit). exit()'s frames (exit,
 * __run_exit_handlers, _exit) reach below the array but leave some of
 * its slots unwritten: the pointer is still there, above the stack
 * pointer of the exit stop and below the one exit() was entered with,
 * where no frame still running can use it. valgrind calls the block
 * definitely lost (the slots are undefined once exit()'s frames moved
 * below them). Three controls: a block held by a global, reachable
 * either way; one held by main's own local, reachable while exit() is
 * called from below main (its frame is running) and definitely lost
 * once main returned; and, in the exit form, one that exit()'s caller
 * holds only in a callee-saved register (x86-64's rbx, arm64's x19) as
 * it calls exit(): exit()'s frames saved it below where exit() was
 * entered, and it is reachable (to valgrind, a word a running frame
 * wrote). Each block's address goes to stdout, written by hand, as
 * "NAME ADDR" lines: stdio's deeper frames would overwrite the slots,
 * and so would the dynamic loader's lazy binding of exit() (the Makefile
 * links this one with -z now).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
/* Slots enough to span __run_exit_handlers' frame below leave_in_frame's caller. */
#define SLOTS 24

static void *volatile held_by_global;

/*
 * exit_holding(size): a block of @size bytes, its only pointer in a
 * callee-saved register, the caller-saved ones cleared; then exit(0).
 */
void exit_holding(size_t size) __attribute__((noreturn));
#if defined(__x86_64__)
asm(".text\n"
    ".globl exit_holding\n"
    ".type exit_holding, @function\n"
    "exit_holding:\n"
    "	.cfi_startproc\n"
    "	push %rbx\n"
    "	.cfi_def_cfa_offset 16\n"
    "	.cfi_offset %rbx, -16\n"
    "	call malloc\n"
    "	mov %rax, %rbx\n"
    "	xor %eax, %eax\n"
    "	xor %ecx, %ecx\n"
    "	xor %edx, %edx\n"
    "	xor %esi, %esi\n"
    "	xor %edi, %edi\n"
    "	xor %r8d, %r8d\n"
    "	xor %r9d, %r9d\n"
    "	xor %r10d, %r10d\n"
    "	xor %r11d, %r11d\n"
    "	call exit\n"
    "	.cfi_endproc\n"
    ".size exit_holding, .-exit_holding\n");
#elif defined(__aarch64__)
asm(".text\n"
    ".globl exit_holding\n"
    ".type exit_holding, %function\n"
    "exit_holding:\n"
    "	.cfi_startproc\n"
    "	stp x29, x30, [sp, #-32]!\n"
    "	.cfi_def_cfa_offset 32\n"
    "	.cfi_offset 29, -32\n"
    "	.cfi_offset 30, -24\n"
    "	str x19, [sp, #16]\n"
    "	.cfi_offset 19, -16\n"
    "	mov x29, sp\n"
    "	bl malloc\n"
    "	mov x19, x0\n"
    "	mov x0, xzr\n"
    "	mov x1, xzr\n"
    "	mov x2, xzr\n"
    "	mov x3, xzr\n"
    "	mov x4, xzr\n"
    "	mov x5, xzr\n"
    "	mov x6, xzr\n"
    "	mov x7, xzr\n"
    "	mov x8, xzr\n"
    "	mov x9, xzr\n"
    "	mov x10, xzr\n"
    "	mov x11, xzr\n"
    "	mov x12, xzr\n"
    "	mov x13, xzr\n"
    "	mov x14, xzr\n"
    "	mov x15, xzr\n"
    "	mov x16, xzr\n"
    "	mov x17, xzr\n"
    "	bl exit\n"
    "	.cfi_endproc\n"
    ".size exit_holding, .-exit_holding\n");
#else
#error "deadframe: no exit_holding() for this architecture"
#endif

static void say(const char *name, const void *p)
{
	char line[64];
	size_t n = strlen(name);

	memcpy(line, name, n);
	line[n++] = ' ';
	for (int i = 0; i < 16; i++)
		line[n++] = "0123456789abcdef"[((uintptr_t)p >> (60 - 4 * i)) & 15];
	line[n++] = '\n';
	if (write(1, line, n) != (ssize_t)n)
		abort();
}

/* The block's only pointer, in every slot of this frame's array: then forgotten. */
static NOINLINE int leave_in_frame(void)
{
	void *volatile slots[SLOTS];
	void *p = malloc(48);

	if (!p)
		abort();
	memset(p, 0, 48);
	for (int i = 0; i < SLOTS; i++)
		slots[i] = p;
	say("lost", p);
	return 0;
}

int main(int argc, char **argv)
{
	void *volatile held_by_main = malloc(24);
	int by_exit = argc == 2 && !strcmp(argv[1], "exit");

	held_by_global = malloc(32);
	if (argc != 2 || (!by_exit && strcmp(argv[1], "return")) || !held_by_main ||
	    !held_by_global)
		return 2;
	say("main", held_by_main);
	say("global", held_by_global);
	/* From here on no call but exit()'s: another's frames would overwrite the slots. */
	if (leave_in_frame())
		return 1;
	if (by_exit)
		exit_holding(40);
	return 0;
}
