// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loads libctorleak.so (beside this program) with dlopen, whose
 * constructor leaks as dlopen runs, and at once calls lib_alloc_now(),
 * which leaks 3 x 444 bytes from the library's code. Where it does so:
 *
 *   ctordlopen             in the main thread
 *   ctordlopen thread      in a second thread, the main one waiting for it
 *   ctordlopen fork        in a child, which exits 0 after it; the parent waits
 *   ctordlopen wait DIR    in the main thread, on SIGUSR1 (handshake.h):
 *                          DIR/ready first, for a tracer to attach, and
 *                          DIR/done after
 *   ctordlopen urg         in the main thread, with a SIGURG handler of its
 *                          own installed first; exits 7 if it ever ran
 *
 * Exits 0 when the library was loaded and called.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "handshake.h"

static char lib_path[PATH_MAX + 32];

static int load_and_call(void)
{
	void (*alloc_now)(void);
	void *lib = dlopen(lib_path, RTLD_NOW);

	if (!lib)
		return 2;
	alloc_now = (void (*)(void))dlsym(lib, "lib_alloc_now");
	if (!alloc_now)
		return 3;
	alloc_now();
	return 0;
}

static void *thread_main(void *ret)
{
	*(int *)ret = load_and_call();
	return NULL;
}

static int in_thread(void)
{
	pthread_t thread;
	int ret = 4;

	if (pthread_create(&thread, NULL, thread_main, &ret) || pthread_join(thread, NULL))
		return 4;
	return ret;
}

static int in_child(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 5;
	if (!pid)
		_exit(load_and_call());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 5;
	return WEXITSTATUS(status);
}

static int when_told(const char *dir)
{
	int ret;

	block_usr1();
	touch(dir, "ready");
	if (wait_usr1(time(NULL) + 60))
		return 6;
	ret = load_and_call();
	touch(dir, "done");
	return ret;
}

static volatile sig_atomic_t urgs;

static void on_urg(int sig)
{
	urgs++;
}

/* Nobody sends it SIGURG: a handler run would be a signal it never got. */
static int with_urg_handler(void)
{
	int ret;

	signal(SIGURG, on_urg);
	ret = load_and_call();
	return ret ?: urgs ? 7 : 0;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", argv[0]);
	snprintf(lib_path, sizeof(lib_path), "%s/libctorleak.so", dirname(dir));
	if (argc > 1 && !strcmp(argv[1], "thread"))
		return in_thread();
	if (argc > 1 && !strcmp(argv[1], "fork"))
		return in_child();
	if (argc > 1 && !strcmp(argv[1], "urg"))
		return with_urg_handler();
	if (argc > 2 && !strcmp(argv[1], "wait"))
		return when_told(argv[2]);
	return load_and_call();
}
