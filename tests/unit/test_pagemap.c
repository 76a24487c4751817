// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pagemap__states() on a child of ours: the page it touched is resident
 * while it lives, and once it has exited the answer is -ESRCH, reaped or
 * not. A zombie's pagemap opens and reads empty, which passed for pages
 * given back: --growth's report at a launched command's end then held
 * nothing when it came between the exit and the reaping (6.1 guest,
 * test_growth_sampled, 2026-11-29).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <unistd.h>
#include <sys/wait.h>
#include "proc/pagemap.h"

static char page[4096] __attribute__((aligned(4096)));

static void test_alive_then_zombie(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)page;
	int ready[2], go[2];
	enum page_state st;
	siginfo_t si;
	pid_t pid;
	char c = 0;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		page[0] = 1;
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(pagemap__states(pid, &addr, 1, &st), 0);
	assert_int_equal(st, PAGE_RESIDENT);

	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(pagemap__states(pid, &addr, 1, &st), -ESRCH);

	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(pagemap__states(pid, &addr, 1, &st), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_alive_then_zombie),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
