// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * forkleaks: children that leak known amounts and exit, for the leak
 * check of every process a --follow-forks run traces. The parent forks
 * two children, one after the other, each allocating only after the
 * fork (nothing it inherits is tracked in it):
 *
 *   the first  leaks 10 x 32 bytes (first_child_leak) and exits 0;
 *   the second leaks 4 x 200 bytes (second_child_leak), keeps 2 x 64
 *              bytes in a global (second_child_keep) and exits 0.
 *
 * Once both are reaped, the parent leaks 3 x 16 bytes (parent_leak) and
 * returns from main (status 0; 2 if a child failed). Each loses its
 * pointers in a function that returns, and nothing else allocates: no
 * stdio.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *kept[2];

/* @n blocks of @size, each written and its pointer dropped. */
static NOINLINE void drop(int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(size);

		memset(p, 0x5a, size);
	}
}

NOINLINE void first_child_leak(void)
{
	drop(10, 32);
}

NOINLINE void second_child_leak(void)
{
	drop(4, 200);
}

NOINLINE void second_child_keep(void)
{
	for (int i = 0; i < 2; i++)
		kept[i] = malloc(64);
}

NOINLINE void parent_leak(void)
{
	drop(3, 16);
}

/*
 * The stack where drop() and malloc ran, zeroed: a pointer they left
 * there in a slot the exit path's frames do not write would otherwise
 * keep a lost block reachable, for any conservative scan.
 */
static NOINLINE void scrub_stack(void)
{
	char buf[8192];

	explicit_bzero(buf, sizeof(buf));
}

/* Run @fn in a child and reap it: 0 if it exited 0. */
static int in_child(void (*fn)(void), void (*also)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		fn();
		if (also)
			also();
		scrub_stack();
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

int main(void)
{
	if (in_child(first_child_leak, NULL) || in_child(second_child_leak, second_child_keep))
		return 2;
	parent_leak();
	scrub_stack();
	return 0;
}
