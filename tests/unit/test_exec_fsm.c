// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A traced process following its execs (proc/exec_fsm.c, enum proc_trace)
 * without a process: each case is a sequence of rows, each row one event
 * as app/execs.c hands it over, the actions it must ask and the state
 * after it; the next row starts from that state.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include "proc/exec_fsm.h"

#define TELL	 EXEC_ACT_TELL_NONE
#define GIVE_UP	 EXEC_ACT_GIVE_UP
#define DESCRIBE EXEC_ACT_DESCRIBE
#define LOOK	 EXEC_ACT_LOOK
#define PROBE	 EXEC_ACT_PROBE

/* Events, as execs.c makes them: named on the command line or not, one of several or not. */
#define EXECVE(e, ...)                                                                             \
	{                                                                                          \
		.kind = EXEC_EV_EXECVE, .err = (e), __VA_ARGS__                                    \
	}
#define LOOKED(e, ...)                                                                             \
	{                                                                                          \
		.kind = EXEC_EV_LOOKED, .err = (e), __VA_ARGS__                                    \
	}
#define PROBED(e, ...)                                                                             \
	{                                                                                          \
		.kind = EXEC_EV_PROBED, .err = (e), __VA_ARGS__                                    \
	}

struct row {
	struct exec_event ev;
	unsigned int acts;
	enum proc_trace after;
	int err; /* with TELL or GIVE_UP */
};

static const char *const trace_names[] = {
    [PROC_ATTACHED] = "ATTACHED",	    [PROC_EXEC_SEEN] = "EXEC_SEEN",
    [PROC_ALLOC_PENDING] = "ALLOC_PENDING", [PROC_REPROBED] = "REPROBED",
    [PROC_NO_ALLOCATOR] = "NO_ALLOCATOR",
};

/* Run @rows from @trace, each checked with its number in the message. */
static void run_rows(enum proc_trace trace, const struct row *rows, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		struct exec_step st = exec_fsm__step(trace, &rows[i].ev);

		if (st.trace != rows[i].after || st.acts != rows[i].acts ||
		    ((st.acts & (TELL | GIVE_UP)) && st.err != rows[i].err))
			fail_msg("row %zu from %s: got %s acts %#x err %d, want %s acts %#x err %d",
				 i, trace_names[trace], trace_names[st.trace], st.acts, st.err,
				 trace_names[rows[i].after], rows[i].acts, rows[i].err);
		trace = st.trace;
	}
}

#define RUN(from, ...)                                                                             \
	do {                                                                                       \
		const struct row rows[] = {__VA_ARGS__};                                           \
		run_rows(from, rows, sizeof(rows) / sizeof(rows[0]));                              \
	} while (0)

/* -p's process runs a shell that runs a dynamic program: found at once, probed. */
static void test_found_at_once(void **state)
{
	RUN(PROC_ATTACHED, {EXECVE(0, .named = true), LOOK, PROC_EXEC_SEEN, 0},
	    {LOOKED(0, .named = true), PROBE, PROC_EXEC_SEEN, 0},
	    {PROBED(0, .named = true), DESCRIBE, PROC_REPROBED, 0},
	    /* Another execve starts again, from re-probed. */
	    {EXECVE(0, .named = true), LOOK, PROC_EXEC_SEEN, 0},
	    {LOOKED(0, .named = true), PROBE, PROC_EXEC_SEEN, 0},
	    {PROBED(0, .named = true), DESCRIBE, PROC_REPROBED, 0});
}

/* Its loader has mapped no allocator yet: pending, looked at again, then found. */
static void test_pending_then_found(void **state)
{
	RUN(PROC_ATTACHED, {EXECVE(0), LOOK, PROC_EXEC_SEEN, 0},
	    {LOOKED(-EAGAIN), 0, PROC_ALLOC_PENDING, 0},
	    {LOOKED(-EAGAIN), 0, PROC_ALLOC_PENDING, 0}, {LOOKED(0), PROBE, PROC_ALLOC_PENDING, 0},
	    {PROBED(0), DESCRIBE, PROC_REPROBED, 0});
}

/* Past its deadline none mapped is none: said when named; with one process the session ends. */
static void test_deadline(void **state)
{
	RUN(PROC_EXEC_SEEN, {LOOKED(-EAGAIN, .named = true), 0, PROC_ALLOC_PENDING, 0},
	    {LOOKED(-EAGAIN, .named = true, .late = true), TELL | GIVE_UP, PROC_NO_ALLOCATOR,
	     -ENOENT});
	RUN(PROC_ALLOC_PENDING,
	    {LOOKED(-EAGAIN, .late = true, .multi = true), 0, PROC_NO_ALLOCATOR, -ENOENT});
	RUN(PROC_ALLOC_PENDING, {LOOKED(-EAGAIN, .named = true, .late = true, .multi = true), TELL,
				 PROC_NO_ALLOCATOR, -ENOENT});
}

/* Gone while pending: its end is told elsewhere, nothing is said or failed. */
static void test_gone(void **state)
{
	RUN(PROC_EXEC_SEEN,
	    {LOOKED(-EAGAIN, .named = true, .gone = true), 0, PROC_NO_ALLOCATOR, 0});
	RUN(PROC_ALLOC_PENDING,
	    {LOOKED(-EAGAIN, .gone = true, .late = true), 0, PROC_NO_ALLOCATOR, 0});
}

/* A look that fails (a bad --allocator, another user's objects) is not waited on. */
static void test_look_fails(void **state)
{
	RUN(PROC_EXEC_SEEN,
	    {LOOKED(-EINVAL, .named = true), TELL | GIVE_UP, PROC_NO_ALLOCATOR, -EINVAL});
	RUN(PROC_EXEC_SEEN, {LOOKED(-ENOENT), GIVE_UP, PROC_NO_ALLOCATOR, -ENOENT});
	/* With several, the others are traced on; one not named is not talked about. */
	RUN(PROC_EXEC_SEEN, {LOOKED(-ESRCH, .multi = true), 0, PROC_NO_ALLOCATOR, 0});
}

/* Probing the allocator found fails: no allocator, never told as none found. */
static void test_probe_fails(void **state)
{
	RUN(PROC_EXEC_SEEN, {LOOKED(0, .named = true), PROBE, PROC_EXEC_SEEN, 0},
	    {PROBED(-ESRCH, .named = true), GIVE_UP, PROC_NO_ALLOCATOR, -ESRCH});
	RUN(PROC_ALLOC_PENDING, {PROBED(-ENOMEM, .multi = true), 0, PROC_NO_ALLOCATOR, 0});
	/* A later execve of the same process is followed again. */
	RUN(PROC_NO_ALLOCATOR, {EXECVE(0, .multi = true), LOOK, PROC_EXEC_SEEN, 0});
}

/* Its record could not be kept for the new image: no state to move, the session may end. */
static void test_record_lost(void **state)
{
	RUN(PROC_REPROBED, {EXECVE(-ENOMEM), GIVE_UP, PROC_REPROBED, -ENOMEM});
	RUN(PROC_ATTACHED, {EXECVE(-ENOENT, .multi = true), 0, PROC_ATTACHED, 0});
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_found_at_once), cmocka_unit_test(test_pending_then_found),
	    cmocka_unit_test(test_deadline),	  cmocka_unit_test(test_gone),
	    cmocka_unit_test(test_look_fails),	  cmocka_unit_test(test_probe_fails),
	    cmocka_unit_test(test_record_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
