// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Blocks held only in other threads' registers while main returns: one
 * thread spins in user code with its block's only pointer in a
 * callee-saved register (r15, x28), another blocks in read(2) with its
 * own there. exit_group kills both as main's thread exits; valgrind's
 * check at exit scans every thread's registers and calls both blocks
 * reachable. leak_control's block is lost, so that a check that finds no
 * leak at all shows. It prints "pid PID" and "ready" once both threads
 * hold their blocks; with the argument "wait" it returns only when stdin
 * closes, for checks while the threads run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "holdreg.h"

static int never[2]; /* a pipe nobody writes: a thread blocks on it */
int holding;	     /* threads holding their block, set by hold_register */

static void *__attribute__((noinline)) spin_register(void)
{
	return memset(malloc(96), 0, 96);
}

static void *__attribute__((noinline)) block_register(void)
{
	return memset(malloc(80), 0, 80);
}

static void __attribute__((noinline)) leak_control(void)
{
	void *volatile p = malloc(40);

	p = NULL;
}

void *alloc_for_register(long fd)
{
	return fd < 0 ? spin_register() : block_register();
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(never))
		return 1;
	leak_control();
	if (pthread_create(&t, NULL, hold_register, (void *)-1L) ||
	    pthread_create(&t, NULL, hold_register, (void *)(long)never[0]))
		return 1;
	while (__atomic_load_n(&holding, __ATOMIC_ACQUIRE) < 2)
		usleep(1000);
	printf("pid %d\nready\n", getpid());
	while (argc > 1 && !strcmp(argv[1], "wait") && read(0, &c, 1) > 0)
		;
	return 0;
}
