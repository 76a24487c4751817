// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forker: a process that forks a leaking child, or runs another program.
 * It creates DIR/ready and waits for SIGUSR1, then:
 *
 *   forker DIR fork       leaks 3 x 500 bytes (parent_leak) and forks a
 *                         child that frees 2 of those 3 inherited blocks
 *                         and leaks 7 x 300 bytes (child_leak) before it
 *                         exits 5. The parent waits for it, creates
 *                         DIR/done and exits 0 on a second SIGUSR1.
 *                         A tracer attached before the signal sees: the
 *                         parent 1500 bytes in 3 blocks, 3 allocs; the
 *                         child 2100 bytes in 7 blocks, 7 allocs and 2
 *                         untracked frees (the blocks it inherited).
 *   forker DIR exec PROG [ARGS...]
 *                         leaks 4 x 100 bytes (pre_exec_leak), then
 *                         execs PROG: what the old program held is gone.
 *
 * Nothing else allocates after startup: no stdio, only raw syscalls. It
 * exits by itself (status 3) 60 s after the first wait begins.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "handshake.h"

#define NOINLINE __attribute__((noinline))

#define LIFETIME 60

static void *kept[16];

NOINLINE void parent_leak(void)
{
	for (int i = 0; i < 3; i++)
		kept[i] = malloc(500);
}

NOINLINE void child_leak(void)
{
	free(kept[0]);
	free(kept[1]);
	for (int i = 0; i < 7; i++)
		kept[i] = malloc(300);
}

NOINLINE void pre_exec_leak(void)
{
	for (int i = 0; i < 4; i++)
		kept[i] = malloc(100);
}

static int fork_child(const char *dir, time_t deadline)
{
	int status;
	pid_t pid;

	parent_leak();
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		child_leak();
		_exit(5);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 5)
		return 2;
	touch(dir, "done");
	return wait_usr1(deadline) ? 3 : 0;
}

int main(int argc, char **argv)
{
	time_t deadline = time(NULL) + LIFETIME;

	if (argc < 3)
		return 2;
	block_usr1();
	touch(argv[1], "ready");
	if (wait_usr1(deadline))
		return 3;
	if (!strcmp(argv[2], "fork"))
		return fork_child(argv[1], deadline);
	if (strcmp(argv[2], "exec") || argc < 4)
		return 2;
	pre_exec_leak();
	execv(argv[3], &argv[3]);
	return 2;
}
