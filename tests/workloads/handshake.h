/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How a test drives a target it attaches to with -p: the target creates
 * DIR/ready, waits for SIGUSR1, does its work, creates DIR/done. Nothing
 * here allocates (no stdio streams), so that a tracer sees only the work.
 */
#ifndef HANDSHAKE_H
#define HANDSHAKE_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Create DIR/NAME; snprintf into a stack buffer does not allocate. */
static void touch(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(2);
	close(fd);
}

/* SIGUSR1 stays blocked so that one sent early is not missed. */
static void block_usr1(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Wait for SIGUSR1 or the deadline: -1 when the deadline passed. */
static int wait_usr1(time_t deadline)
{
	sigset_t set;
	struct timespec left = {0, 0};

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		left.tv_sec = deadline - time(NULL);
		if (left.tv_sec <= 0)
			return -1;
		if (sigtimedwait(&set, NULL, &left) == SIGUSR1)
			return 0;
	}
}

/*
 * The start of a workload whose only argument is DIR: DIR/ready, then
 * SIGUSR1. 0 once told to go, else the exit code (2: usage, 1: no signal).
 */
static int handshake_start(int argc, char **argv, time_t deadline)
{
	if (argc != 2)
		return 2;
	block_usr1();
	touch(argv[1], "ready");
	return wait_usr1(deadline) ? 1 : 0;
}

#endif
