// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stale pointer below the stack pointer of a thread blocked in a system
 * call (LSan's exit_atexit_stale_stack): leave_below() allocates a block
 * of 64 bytes, stores its only pointer 64 bytes below its own stack
 * pointer, drops it and returns; main then blocks in read(0). The word is
 * still there, less than 128 bytes below main's stack pointer; but no
 * function is running to use it: the block is definitely lost. On x86-64
 * that is within the red zone of the read, which a thread stopped in user
 * code could be using; arm64's AAPCS64 has no red zone, so there the word
 * is just below the stack pointer, never a root. It reads one byte before
 * it allocates, so that a tracer attached by pid sees the block, then
 * prints "block ADDR" and "ready" with write(2), which, single-threaded,
 * goes no deeper than 48 bytes (glibc 2.36 on either architecture): stdio's
 * deeper frames would overwrite the word.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#define STORE_BELOW_SP(p) __asm__ volatile("movq %0, -64(%%rsp)" : : "r"(p) : "memory")
/* memset's leftovers: the caller-saved registers it may use. */
#define CLEAR_SCRATCH()                                                                            \
	__asm__ volatile("xor %%ecx, %%ecx\n\txor %%r8d, %%r8d\n\txor %%r9d, %%r9d\n\t"            \
			 "xor %%r10d, %%r10d\n\txor %%r11d, %%r11d"                                \
			 :                                                                         \
			 :                                                                         \
			 : "rcx", "r8", "r9", "r10", "r11")
#elif defined(__aarch64__)
#define STORE_BELOW_SP(p) __asm__ volatile("stur %0, [sp, #-64]" : : "r"(p) : "memory")
#define CLEAR_SCRATCH()                                                                            \
	__asm__ volatile("mov x1, xzr\n\tmov x2, xzr\n\tmov x3, xzr\n\tmov x4, xzr\n\t"            \
			 "mov x5, xzr\n\tmov x6, xzr\n\tmov x7, xzr\n\tmov x8, xzr\n\t"            \
			 "mov x9, xzr\n\tmov x10, xzr\n\tmov x11, xzr\n\tmov x12, xzr\n\t"         \
			 "mov x13, xzr\n\tmov x14, xzr\n\tmov x15, xzr\n\tmov x16, xzr\n\t"        \
			 "mov x17, xzr"                                                            \
			 :                                                                         \
			 :                                                                         \
			 : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",     \
			   "x12", "x13", "x14", "x15", "x16", "x17")
#else
#error "stalezone: no store below the stack pointer for this architecture"
#endif

static char line[] = "block 0x0000000000000000\nready\n";

/* Stores the block's pointer 64 bytes below sp and forgets it; returns its complement. */
static __attribute__((noinline)) uintptr_t leave_below(void)
{
	void *volatile p = malloc(64);
	uintptr_t hidden;

	memset(p, 0, 64);
	STORE_BELOW_SP(p);
	hidden = (uintptr_t)p ^ UINTPTR_MAX;
	/*
	 * Our own copy is just below main's stack pointer, where arm64's read()
	 * has its frame: 48 bytes, not all of them written, so live stack there.
	 */
	p = NULL;
	return hidden;
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
	/* No register of ours may point into the block. */
	CLEAR_SCRATCH();
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
