// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stale pointer below the stack pointer of a thread blocked in a system
 * call (LSan's exit_atexit_stale_stack): leave_below() allocates a block
 * of 64 bytes, stores its only pointer 64 bytes below its own stack
 * pointer (the x86-64 red zone), drops it and returns; main then blocks in
 * read(0). The word is still there, less than 128 bytes below main's stack pointer,
 * within the red zone of the read; but no function is running to use it:
 * the block is definitely lost. It reads one byte before it allocates, so
 * that a tracer attached by pid sees the block, then prints
 * "block ADDR" and "ready" with write(2), which, single-threaded, uses no
 * stack below the call: stdio's deeper frames would overwrite the word.
 * x86-64 only: other architectures have no red zone (arm64's AAPCS64
 * forbids using memory below sp), and the rule has nothing to show there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
static char line[] = "block 0x0000000000000000\nready\n";

/* Stores the block's pointer at -64(%rsp) and forgets it; returns its complement. */
static __attribute__((noinline)) uintptr_t leave_below(void)
{
	void *p = malloc(64);

	memset(p, 0, 64);
	__asm__ volatile("movq %0, -64(%%rsp)" : : "r"(p) : "memory");
	return (uintptr_t)p ^ UINTPTR_MAX;
}

int main(void)
{
	uintptr_t hidden;
	char c;

	/*
	 * write's first call binds its PLT slot (lazy binding): the dynamic
	 * linker's resolver, deep below, would overwrite the word. Bound now.
	 */
	if (write(1, line, 0) || read(0, &c, 1) != 1)
		return 1;
	/* From here to the read below, no call but write's, which goes no deeper. */
	hidden = leave_below();
	/* No register of ours may point into the block: memset's leftovers cleared. */
	__asm__ volatile("xor %%ecx, %%ecx\n\txor %%r8d, %%r8d\n\txor %%r9d, %%r9d\n\t"
			 "xor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 :
			 :
			 : "rcx", "r8", "r9", "r10", "r11");
	/* The address in hex, written by hand: stdio's frames would overwrite the word. */
	for (int i = 0; i < 16; i++)
		line[8 + i] = "0123456789abcdef"[((hidden ^ UINTPTR_MAX) >> (60 - 4 * i)) & 15];
	hidden = 0;
	if (write(1, line, sizeof(line) - 1) != (ssize_t)sizeof(line) - 1)
		return 1;
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
#else
/* arm64's AAPCS64 has no red zone: no stale word there to show. */
int main(void)
{
	fputs("stalezone: x86-64 only\n", stderr);
	return 1;
}
#endif
