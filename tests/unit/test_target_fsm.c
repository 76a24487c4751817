// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A launched target's lifecycle (proc/target_fsm.c) without a process:
 * each case is a sequence of rows, each row one event or one call of the
 * session's, the actions it must ask, in order, and the states after it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "proc/target_fsm.h"

#define HOLD 23 /* LINKMAP_HOLD_SIGNAL */

/*
 * .in: an event, "SIGNAL tid sig", "GROUP tid sig", "TRAP tid",
 * "CLONE tid new", "FORK tid child", "EXEC tid from", "EXIT tid how"
 * (how: group, alone or noregs), "OTHER tid", "GONE tid"; or a call:
 * "resume", "release deliver", "interrupt", "continue", "pending" (the
 * layer handing back a stop kept for later), "forked" (.ret the child),
 * "failed CONT tid" (the layer's PTRACE_CONT of it failed).
 * .acts: "KIND tid [sig]" separated by ", ". .threads: each "tid STATE"
 * and " r" when its registers are kept, separated by ", ".
 */
struct row {
	const char *in;
	const char *acts;
	const char *threads;
	enum target_state state;
	int ret;
};

static const char *const state_names[] = {
    [TS_RUN] = "RUN",	     [TS_LISTEN] = "LISTEN",   [TS_HELD] = "HELD",
    [TS_INTR_SENT] = "SENT", [TS_INTR] = "INTR",       [TS_PENDING] = "PENDING",
    [TS_EXIT_HELD] = "EXIT", [TS_STOPPED] = "STOPPED", [TS_EARLY] = "EARLY",
    [TS_GONE] = "GONE",
};

static const char *const act_names[] = {
    [TACT_NONE] = "NONE",	    [TACT_CONT] = "CONT", [TACT_LISTEN] = "LISTEN",
    [TACT_INTERRUPT] = "INTERRUPT", [TACT_REGS] = "REGS", [TACT_DETACH] = "DETACH",
};

static int event_of(const char *in, struct tfsm_event *ev, struct arch_regs *regs)
{
	static const char *const kinds[] = {
	    [TEV_SIGNAL] = "SIGNAL", [TEV_GROUP_STOP] = "GROUP", [TEV_TRAP] = "TRAP",
	    [TEV_CLONE] = "CLONE",   [TEV_FORK] = "FORK",	 [TEV_EXEC] = "EXEC",
	    [TEV_EXIT] = "EXIT",     [TEV_OTHER] = "OTHER",	 [TEV_GONE] = "GONE",
	};
	char kind[16], arg[16] = "";
	int tid;

	if (sscanf(in, "%15s %d %15s", kind, &tid, arg) < 2)
		return -1;
	*ev = (struct tfsm_event){.tid = tid};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			ev->kind = i;
	if (ev->kind == TEV_SIGNAL || ev->kind == TEV_GROUP_STOP)
		ev->sig = atoi(arg);
	else
		ev->msg = atol(arg);
	if (ev->kind == TEV_EXIT && strcmp(arg, "noregs")) {
		memset(regs, 0, sizeof(*regs));
		regs->syscall = strcmp(arg, "alone") ? SYS_exit_group : SYS_exit;
		ev->regs = regs;
	}
	return 0;
}

/* The session's calls; .ret the value of the one that returns one. */
static int call(struct tfsm *f, const char *in, struct arch_regs *regs)
{
	struct tfsm_event ev;
	int ret = 0;

	if (!strcmp(in, "resume"))
		tfsm_resume(f);
	else if (!strncmp(in, "release ", 8))
		tfsm_release(f, atoi(in + 8));
	else if (!strcmp(in, "interrupt"))
		ret = tfsm_interrupt(f);
	else if (!strcmp(in, "result"))
		ret = tfsm_interrupt_result(f);
	else if (!strcmp(in, "continue"))
		tfsm_continue(f);
	else if (!strcmp(in, "forked"))
		ret = tfsm_take_forked(f);
	else if (!strncmp(in, "failed CONT ", 12))
		tfsm_failed(f, &(struct tfsm_action){.kind = TACT_CONT, .tid = atoi(in + 12)});
	else if (!strcmp(in, "pending"))
		ret = tfsm_take_pending(f, &ev) ? (tfsm_step(f, &ev), 0) : -ENOENT;
	else if (!event_of(in, &ev, regs))
		tfsm_step(f, &ev);
	else
		fail_msg("row '%s' unknown", in);
	return ret;
}

/* The actions asked, as the layer takes them: a thread's registers read (REGS) are kept. */
static void said_acts(struct tfsm *f, char *buf, size_t len)
{
	struct tfsm_action a;
	size_t n = 0;

	buf[0] = '\0';
	while (tfsm_next(f, &a) && n < len) {
		if (a.kind == TACT_REGS)
			tfsm_thread(f, a.tid)->has_regs = true;
		n += snprintf(buf + n, len - n, "%s%s %d", n ? ", " : "", act_names[a.kind], a.tid);
		if (a.kind == TACT_CONT && n < len)
			n += snprintf(buf + n, len - n, " %d", a.sig);
	}
}

static void said_threads(const struct tfsm *f, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < f->nr_threads && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%d %s%s", i ? ", " : "", f->threads[i].tid,
			      state_names[f->threads[i].state], f->threads[i].has_regs ? " r" : "");
}

/* A target of first thread 100 let go past its loader, unless @child (a --follow-forks one). */
static void run_case(const char *name, pid_t first, bool child, const struct row *rows)
{
	char acts[512], threads[512];
	struct arch_regs regs;
	struct tfsm f;
	int ret;

	assert_int_equal(tfsm_init(&f, first, !child), 0);
	f.hold_signal = HOLD;
	if (!child) {
		tfsm_resume(&f);
		assert_true(tfsm_next(&f, &(struct tfsm_action){0}));
	}
	for (const struct row *r = rows; r->in; r++) {
		ret = call(&f, r->in, &regs);
		said_acts(&f, acts, sizeof(acts));
		said_threads(&f, threads, sizeof(threads));
		if (strcmp(acts, r->acts ? r->acts : "") || strcmp(threads, r->threads) ||
		    tfsm_state(&f) != r->state || ret != r->ret)
			fail_msg(
			    "%s, row '%s': actions '%s' (want '%s'), threads '%s' (want '%s'), "
			    "state %d (want %d), returned %d (want %d)",
			    name, r->in, acts, r->acts ? r->acts : "", threads, r->threads,
			    tfsm_state(&f), r->state, ret, r->ret);
	}
	tfsm_free(&f);
}

static void test_signals_and_job_control(void **state)
{
	const struct row rows[] = {
	    {"SIGNAL 100 10", "CONT 100 10", "100 RUN", TARGET_RUNNING, 0},
	    /* A stale interrupt's trap, or any event of no interest, runs on. */
	    {"TRAP 100", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    {"OTHER 100", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"TRAP 101", "CONT 101 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    /* SIGSTOP: each thread's group stop is kept, with PTRACE_LISTEN... */
	    {"SIGNAL 100 19", "CONT 100 19", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"GROUP 100 19", "LISTEN 100", "100 LISTEN, 101 RUN", TARGET_RUNNING, 0},
	    {"GROUP 101 19", "LISTEN 101", "100 LISTEN, 101 LISTEN", TARGET_RUNNING, 0},
	    /* ...until SIGCONT ends it with a trap, then SIGCONT itself is passed on. */
	    {"TRAP 101", "CONT 101 0", "100 LISTEN, 101 RUN", TARGET_RUNNING, 0},
	    {"TRAP 100", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"SIGNAL 101 18", "CONT 101 18", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"GONE 101", NULL, "100 RUN", TARGET_RUNNING, 0},
	    {"EXIT 100 group", NULL, "100 EXIT", TARGET_EXITING, 0},
	    /* Told again until let go. */
	    {"resume", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    {"GONE 100", NULL, "100 GONE", TARGET_GONE, 0},
	    {0},
	};

	run_case("signals", 100, false, rows);
}

static void test_hold_one_at_a_time(void **state)
{
	const struct row rows[] = {
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"TRAP 101", "CONT 101 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"SIGNAL 101 23", NULL, "100 RUN, 101 HELD", TARGET_HELD, 0},
	    /* A thread born while another is held runs... */
	    {"CLONE 100 102", "CONT 100 0", "100 RUN, 101 HELD, 102 RUN", TARGET_HELD, 0},
	    {"TRAP 102", "CONT 102 0", "100 RUN, 101 HELD, 102 RUN", TARGET_HELD, 0},
	    /* ...but signals, and a second hold, wait behind the one held. */
	    {"SIGNAL 102 10", NULL, "100 RUN, 101 HELD, 102 PENDING", TARGET_HELD, 0},
	    {"SIGNAL 100 23", NULL, "100 PENDING, 101 HELD, 102 PENDING", TARGET_HELD, 0},
	    {"pending", NULL, "100 PENDING, 101 HELD, 102 PENDING", TARGET_HELD, -ENOENT},
	    {"interrupt", NULL, "100 PENDING, 101 HELD, 102 PENDING", TARGET_HELD, -EAGAIN},
	    /* Not the loader's: delivered. */
	    {"release 1", "CONT 101 23", "100 PENDING, 101 RUN, 102 PENDING", TARGET_RUNNING, 0},
	    {"pending", NULL, "100 HELD, 101 RUN, 102 PENDING", TARGET_HELD, 0},
	    {"release 0", "CONT 100 0", "100 RUN, 101 RUN, 102 PENDING", TARGET_RUNNING, 0},
	    {"pending", "CONT 102 10", "100 RUN, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    {"pending", NULL, "100 RUN, 101 RUN, 102 RUN", TARGET_RUNNING, -ENOENT},
	    {0},
	};

	run_case("hold", 100, false, rows);
}

static void test_first_stop_before_clone(void **state)
{
	const struct row rows[] = {
	    {"TRAP 101", NULL, "100 RUN, 101 EARLY", TARGET_RUNNING, 0},
	    /* Not ours until its parent's event says so; nor handed back meanwhile. */
	    {"pending", NULL, "100 RUN, 101 EARLY", TARGET_RUNNING, -ENOENT},
	    {"CLONE 100 101", "CONT 100 0, CONT 101 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"GONE 101", NULL, "100 RUN", TARGET_RUNNING, 0},
	    {0},
	};

	run_case("early", 100, false, rows);
}

static void test_exit_during_snapshot(void **state)
{
	const struct row rows[] = {
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"CLONE 100 102", "CONT 100 0", "100 RUN, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    {"interrupt", "INTERRUPT 100", "100 SENT, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    /* A signal that reaches the first thread first is passed on, and we wait on. */
	    {"SIGNAL 100 10", "CONT 100 10", "100 SENT, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    {"TRAP 100", "INTERRUPT 101, INTERRUPT 102", "100 INTR, 101 SENT, 102 SENT",
	     TARGET_RUNNING, 0},
	    /* 102 is at its exit stop: held there, its registers read. */
	    {"EXIT 102 group", "REGS 102", "100 INTR, 101 SENT, 102 PENDING r", TARGET_RUNNING, 0},
	    {"TRAP 101", "REGS 101", "100 INTR, 101 INTR r, 102 PENDING r", TARGET_RUNNING, 0},
	    {"result", NULL, "100 INTR, 101 INTR r, 102 PENDING r", TARGET_RUNNING, 0},
	    {"interrupt", NULL, "100 INTR, 101 INTR r, 102 PENDING r", TARGET_RUNNING, -EAGAIN},
	    {"continue", "CONT 100 0, CONT 101 0", "100 RUN, 101 RUN, 102 PENDING", TARGET_RUNNING,
	     0},
	    /* Its exit stop, handled now: killed by exit_group, its registers are roots. */
	    {"pending", "CONT 102 0", "100 RUN, 101 RUN, 102 RUN r", TARGET_RUNNING, 0},
	    {"GONE 102", NULL, "100 RUN, 101 RUN, 102 GONE r", TARGET_RUNNING, 0},
	    {0},
	};

	run_case("snapshot", 100, false, rows);
}

/*
 * main, resumed first after a check, returns at once: exit_group's
 * SIGKILL meets 102 as it leaves the check's stop, and the kernel ends it
 * without an exit stop (arm64 6.1 under TCG: 2 of 16 runs). The registers
 * the check read are those it died with. 103's resume failed, killed in
 * the stop, yet it stops at its exit; 101 ran on, and its own exit stop
 * gives its registers.
 */
static void test_killed_leaving_check(void **state)
{
	const struct row rows[] = {
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"CLONE 100 102", "CONT 100 0", "100 RUN, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    {"CLONE 100 103", "CONT 100 0", "100 RUN, 101 RUN, 102 RUN, 103 RUN", TARGET_RUNNING,
	     0},
	    {"interrupt", "INTERRUPT 100", "100 SENT, 101 RUN, 102 RUN, 103 RUN", TARGET_RUNNING,
	     0},
	    {"TRAP 100", "INTERRUPT 101, INTERRUPT 102, INTERRUPT 103",
	     "100 INTR, 101 SENT, 102 SENT, 103 SENT", TARGET_RUNNING, 0},
	    {"TRAP 101", "REGS 101", "100 INTR, 101 INTR r, 102 SENT, 103 SENT", TARGET_RUNNING, 0},
	    {"TRAP 102", "REGS 102", "100 INTR, 101 INTR r, 102 INTR r, 103 SENT", TARGET_RUNNING,
	     0},
	    {"TRAP 103", "REGS 103", "100 INTR, 101 INTR r, 102 INTR r, 103 INTR r", TARGET_RUNNING,
	     0},
	    {"continue", "CONT 100 0, CONT 101 0, CONT 102 0, CONT 103 0",
	     "100 RUN, 101 RUN, 102 RUN, 103 RUN", TARGET_RUNNING, 0},
	    {"failed CONT 103", NULL, "100 RUN, 101 RUN, 102 RUN, 103 RUN", TARGET_RUNNING, 0},
	    {"SIGNAL 101 10", "CONT 101 10", "100 RUN, 101 RUN, 102 RUN, 103 RUN", TARGET_RUNNING,
	     0},
	    {"EXIT 103 group", "CONT 103 0", "100 RUN, 101 RUN, 102 RUN, 103 RUN r", TARGET_RUNNING,
	     0},
	    {"GONE 102", NULL, "100 RUN, 101 RUN, 102 GONE r, 103 RUN r", TARGET_RUNNING, 0},
	    {"EXIT 100 group", NULL, "100 EXIT, 101 RUN, 102 GONE r, 103 RUN r", TARGET_EXITING, 0},
	    {"EXIT 101 group", "CONT 101 0", "100 EXIT, 101 RUN r, 102 GONE r, 103 RUN r",
	     TARGET_EXITING, 0},
	    {0},
	};

	run_case("killed leaving a check", 100, false, rows);
}

/* A thread that stopped since the check and then ended without an exit stop gave no registers. */
static void test_gone_after_running(void **state)
{
	const struct row rows[] = {
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"interrupt", "INTERRUPT 100", "100 SENT, 101 RUN", TARGET_RUNNING, 0},
	    {"TRAP 100", "INTERRUPT 101", "100 INTR, 101 SENT", TARGET_RUNNING, 0},
	    {"TRAP 101", "REGS 101", "100 INTR, 101 INTR r", TARGET_RUNNING, 0},
	    {"continue", "CONT 100 0, CONT 101 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"SIGNAL 101 10", "CONT 101 10", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"GONE 101", NULL, "100 RUN", TARGET_RUNNING, 0},
	    {0},
	};

	run_case("gone after running", 100, false, rows);
}

static void test_interrupt_meets_other_stop(void **state)
{
	const struct row rows[] = {
	    {"interrupt", "INTERRUPT 100", "100 SENT", TARGET_RUNNING, 0},
	    {"GROUP 100 20", NULL, "100 PENDING", TARGET_RUNNING, 0},
	    {"result", NULL, "100 PENDING", TARGET_RUNNING, -EAGAIN},
	    {"interrupt", NULL, "100 PENDING", TARGET_RUNNING, -EAGAIN},
	    {"pending", "LISTEN 100", "100 LISTEN", TARGET_RUNNING, 0},
	    {"TRAP 100", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    /* The hold met first fails the interrupt too, and holds. */
	    {"interrupt", "INTERRUPT 100", "100 SENT", TARGET_RUNNING, 0},
	    {"SIGNAL 100 23", NULL, "100 PENDING", TARGET_RUNNING, 0},
	    {"pending", NULL, "100 HELD", TARGET_HELD, 0},
	    {"release 0", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    /* Our interrupt's own trap, come late: runs on. */
	    {"TRAP 100", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    {"interrupt", "INTERRUPT 100", "100 SENT", TARGET_RUNNING, 0},
	    {"GONE 100", NULL, "100 GONE", TARGET_GONE, 0},
	    {"result", NULL, "100 GONE", TARGET_GONE, -ESRCH},
	    {0},
	};

	run_case("interrupt", 100, false, rows);
}

static void test_follow_forks_child(void **state)
{
	const struct row rows[] = {
	    /* An adopted child runs from its first stop. */
	    {"TRAP 200", "CONT 200 0", "200 RUN", TARGET_RUNNING, 0},
	    {"CLONE 200 201", "CONT 200 0", "200 RUN, 201 RUN", TARGET_RUNNING, 0},
	    {"TRAP 201", "CONT 201 0", "200 RUN, 201 RUN", TARGET_RUNNING, 0},
	    {"FORK 201 300", "CONT 201 0", "200 RUN, 201 RUN", TARGET_RUNNING, 0},
	    {"FORK 200 301", "CONT 200 0", "200 RUN, 201 RUN", TARGET_RUNNING, 0},
	    {"forked", NULL, "200 RUN, 201 RUN", TARGET_RUNNING, 301},
	    {"forked", NULL, "200 RUN, 201 RUN", TARGET_RUNNING, 300},
	    {"forked", NULL, "200 RUN, 201 RUN", TARGET_RUNNING, 0},
	    /* Ended alone (its start routine returned): no roots of it. */
	    {"EXIT 201 alone", "CONT 201 0", "200 RUN, 201 RUN", TARGET_RUNNING, 0},
	    {"GONE 201", NULL, "200 RUN", TARGET_RUNNING, 0},
	    {"CLONE 200 202", "CONT 200 0", "200 RUN, 202 RUN", TARGET_RUNNING, 0},
	    {"EXIT 202 noregs", "CONT 202 0", "200 RUN, 202 RUN", TARGET_RUNNING, 0},
	    {"GONE 202", NULL, "200 RUN", TARGET_RUNNING, 0},
	    {0},
	};

	run_case("child", 200, true, rows);
}

static void test_exec_from_other_thread(void **state)
{
	const struct row rows[] = {
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"CLONE 100 102", "CONT 100 0", "100 RUN, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    {"EXIT 102 group", "CONT 102 0", "100 RUN, 101 RUN, 102 RUN r", TARGET_RUNNING, 0},
	    {"GONE 102", NULL, "100 RUN, 101 RUN, 102 GONE r", TARGET_RUNNING, 0},
	    /* 101 ran execve: told on 100, which 101 now is; 102's roots are of the old image. */
	    {"EXEC 100 101", NULL, "100 STOPPED", TARGET_EXECED, 0},
	    {"resume", "CONT 100 0", "100 RUN", TARGET_RUNNING, 0},
	    {0},
	};

	run_case("exec", 100, false, rows);
}

static void test_hold_at_exit_stop(void **state)
{
	const struct row rows[] = {
	    {"CLONE 100 101", "CONT 100 0", "100 RUN, 101 RUN", TARGET_RUNNING, 0},
	    {"CLONE 100 102", "CONT 100 0", "100 RUN, 101 RUN, 102 RUN", TARGET_RUNNING, 0},
	    {"EXIT 100 group", NULL, "100 EXIT, 101 RUN, 102 RUN", TARGET_EXITING, 0},
	    /* The hold reaches 101 while the first thread is in its exit stop: told after it. */
	    {"SIGNAL 101 23", NULL, "100 EXIT, 101 HELD, 102 RUN", TARGET_EXITING, 0},
	    {"EXIT 102 group", "CONT 102 0", "100 EXIT, 101 HELD, 102 RUN r", TARGET_EXITING, 0},
	    {"resume", "CONT 100 0", "100 RUN, 101 HELD, 102 RUN r", TARGET_HELD, 0},
	    {"release 0", "CONT 101 0", "100 RUN, 101 RUN, 102 RUN r", TARGET_RUNNING, 0},
	    {"EXIT 101 group", "CONT 101 0", "100 RUN, 101 RUN r, 102 RUN r", TARGET_RUNNING, 0},
	    {0},
	};

	run_case("exit", 100, false, rows);
}

/* Many threads at once: the one that made each runs on, whatever the array's growth. */
static void test_many_threads(void **state)
{
	char in[32], acts[64];
	struct tfsm_action a;
	struct arch_regs regs;
	struct tfsm f;

	assert_int_equal(tfsm_init(&f, 100, false), 0);
	for (int i = 1; i <= 100; i++) {
		snprintf(in, sizeof(in), "CLONE %d %d", 100 + (i > 1 ? i / 2 : 0), 100 + i);
		call(&f, in, &regs);
		said_acts(&f, acts, sizeof(acts));
		snprintf(in, sizeof(in), "CONT %d 0", 100 + (i > 1 ? i / 2 : 0));
		assert_string_equal(acts, in);
	}
	assert_int_equal(f.nr_threads, 101);
	assert_false(tfsm_next(&f, &a));
	tfsm_free(&f);
}

/* The first thread's exit stop waits for the exit stops exit_group brings, not for SYS_exit's. */
static void test_awaiting_exits(void **state)
{
	struct arch_regs regs;
	struct tfsm f;

	assert_int_equal(tfsm_init(&f, 100, false), 0);
	call(&f, "CLONE 100 101", &regs);
	call(&f, "EXIT 100 group", &regs);
	assert_true(tfsm_awaiting_exits(&f));
	call(&f, "EXIT 101 group", &regs);
	assert_false(tfsm_awaiting_exits(&f));
	tfsm_free(&f);

	assert_int_equal(tfsm_init(&f, 100, false), 0);
	call(&f, "CLONE 100 101", &regs);
	call(&f, "EXIT 100 alone", &regs);
	assert_int_equal(tfsm_state(&f), TARGET_EXITING);
	assert_false(tfsm_awaiting_exits(&f));
	tfsm_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_signals_and_job_control),
	    cmocka_unit_test(test_hold_one_at_a_time),
	    cmocka_unit_test(test_first_stop_before_clone),
	    cmocka_unit_test(test_exit_during_snapshot),
	    cmocka_unit_test(test_killed_leaving_check),
	    cmocka_unit_test(test_gone_after_running),
	    cmocka_unit_test(test_interrupt_meets_other_stop),
	    cmocka_unit_test(test_follow_forks_child),
	    cmocka_unit_test(test_exec_from_other_thread),
	    cmocka_unit_test(test_hold_at_exit_stop),
	    cmocka_unit_test(test_awaiting_exits),
	    cmocka_unit_test(test_many_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
