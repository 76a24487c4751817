// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include "leakcheck/keeper.h"

/* The descriptor the keeper keeps its socket at: every one above it is closed. */
#define KEEPER_FD 3

/* Signals a terminal, a shell or a service manager's stop sends: none of them ends a keeper. */
static const int ignored[] = {SIGINT,  SIGTERM, SIGHUP,	 SIGQUIT, SIGPIPE, SIGTSTP,
			      SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM};

/*
 * -1000: the OOM killer never picks the keeper, neither for the whole
 * machine nor for a cgroup's memory.oom.group kill. It needs
 * CAP_SYS_RESOURCE; without it the keeper is still small.
 */
static void out_of_oom_choice(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "-1000", 5) != 5) {
		/* Not privileged to: it stays a candidate, as alloctrace was. */
	}
	close(fd);
}

static int settle(int fd)
{
	size_t i;

	setsid();
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	/* alloctrace's handler, if any, is not the keeper's: waits need the default. */
	signal(SIGCHLD, SIG_DFL);
	out_of_oom_choice();
	/* Probes' link descriptors among them: a keeper must not keep a probe attached. */
	if (fd != KEEPER_FD && dup2(fd, KEEPER_FD) == KEEPER_FD)
		fd = KEEPER_FD;
	close_range(fd + 1, ~0U, 0);
	prctl(PR_SET_NAME, "alloctrace-keep");
	return fd;
}

pid_t keeper__fork(int *fd)
{
	int sv[2], err;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid > 0) {
		close(sv[1]);
		*fd = sv[0];
		return pid;
	}
	close(sv[0]);
	*fd = settle(sv[1]);
	return 0;
}

int keeper__send(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

int keeper__recv(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

bool keeper__peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}
