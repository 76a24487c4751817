// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rbpdata: code without frame pointers keeps data in rbp, and every
 * function that uses rbp saves the caller's on the stack. hold_in_rbp(v)
 * puts v in rbp and calls save_rbp(), which saves it (a different value
 * each call) and calls alloc_one(), which allocates 24 bytes: 200 times
 * from the same stack address. A CFI walk from malloc restores rbp from
 * that word but no frame computes anything from it, so the walk is the
 * same every time and the walk memo must answer for 199 of the 200.
 */
#include <stdlib.h>

#define CALLS 200

void hold_in_rbp(long v);
void save_rbp(void);

static void *kept[CALLS];
static int nkept;

__attribute__((noinline, used)) void alloc_one(void)
{
	kept[nkept] = malloc(24);
	nkept++;
}

#if defined(__x86_64__)
/* With their CFI: the walk steps through them by the tables, not by rbp. */
asm(".text\n"
    ".globl hold_in_rbp\n"
    ".type hold_in_rbp, @function\n"
    "hold_in_rbp:\n"
    ".cfi_startproc\n"
    "push %rbp\n"
    ".cfi_def_cfa_offset 16\n"
    ".cfi_offset %rbp, -16\n"
    "mov %rdi, %rbp\n"
    "call save_rbp\n"
    "pop %rbp\n"
    ".cfi_def_cfa_offset 8\n"
    "ret\n"
    ".cfi_endproc\n"
    ".size hold_in_rbp, .-hold_in_rbp\n"
    ".globl save_rbp\n"
    ".type save_rbp, @function\n"
    "save_rbp:\n"
    ".cfi_startproc\n"
    "push %rbp\n"
    ".cfi_def_cfa_offset 16\n"
    ".cfi_offset %rbp, -16\n"
    "call alloc_one\n"
    "pop %rbp\n"
    ".cfi_def_cfa_offset 8\n"
    "ret\n"
    ".cfi_endproc\n"
    ".size save_rbp, .-save_rbp\n");
#else
__attribute__((noinline)) void save_rbp(void)
{
	alloc_one();
}

__attribute__((noinline)) void hold_in_rbp(long v)
{
	(void)v;
	save_rbp();
}
#endif

int main(void)
{
	for (long i = 0; i < CALLS; i++)
		hold_in_rbp(0x5a5a0000 + i * 8);
	return nkept == CALLS ? 0 : 1;
}
