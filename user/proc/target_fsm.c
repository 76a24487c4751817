// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A launched target's lifecycle, decided without a system call: each
 * event moves one thread's state (and the process's), and leaves at most
 * one action on each thread for the layer to perform (tfsm_next()). The
 * rules:
 *  - a signal for the program is passed on, unless it is the hold signal:
 *    that one holds its thread for the session, one thread at a time (a
 *    signal stop of another thread waits behind it, kept pending);
 *  - a group stop is kept with PTRACE_LISTEN; the trap that ends it
 *    (SIGCONT), a new thread's first stop and a stale interrupt run on;
 *  - a thread made is followed, a child made is kept for the session to
 *    adopt; a new thread's first stop met before its parent's clone event
 *    waits for that event;
 *  - a thread's exit registers are kept as roots when exit_group or a
 *    fatal signal ended it, not when it ended alone (SYS_exit); the first
 *    thread's exit stop, and its exec stop, hold it until tfsm_resume();
 *    an exec forgets the threads that ended, and the thread that ran it
 *    takes the first thread's id;
 *  - an interrupt holds the first thread, then every other one, each
 *    one's registers read; a stop met meanwhile is kept pending (the
 *    first thread's ends the interrupt, -EAGAIN), and a signal the first
 *    thread meets first is passed on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "lib/util.h"
#include "proc/target_fsm.h"

int tfsm_init(struct tfsm *f, pid_t pid, bool stopped)
{
	memset(f, 0, sizeof(*f));
	f->threads = array__grow(NULL, &f->cap, 0, sizeof(*f->threads));
	if (!f->threads)
		return -ENOMEM;
	f->threads[0] = (struct tfsm_thread){.tid = pid, .state = stopped ? TS_STOPPED : TS_RUN};
	f->nr_threads = 1;
	return 0;
}

void tfsm_free(struct tfsm *f)
{
	free(f->threads);
	free(f->forked);
	memset(f, 0, sizeof(*f));
}

/* A thread that has not ended (an ended one's id may be reused). */
struct tfsm_thread *tfsm_thread(struct tfsm *f, pid_t tid)
{
	for (size_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].tid == tid && f->threads[i].state != TS_GONE)
			return &f->threads[i];
	return NULL;
}

static void act(struct tfsm_thread *k, enum tfsm_act_kind kind, int sig)
{
	k->next_act = (struct tfsm_action){.kind = kind, .tid = k->tid, .sig = sig};
}

static void run(struct tfsm_thread *k, int sig)
{
	k->state = TS_RUN;
	act(k, TACT_CONT, sig);
}

static struct tfsm_thread *add_thread(struct tfsm *f, pid_t tid)
{
	struct tfsm_thread *a = array__grow(f->threads, &f->cap, f->nr_threads, sizeof(*a));

	if (!a) {
		f->detach = (struct tfsm_action){.kind = TACT_DETACH, .tid = tid};
		return NULL;
	}
	f->threads = a;
	a[f->nr_threads] = (struct tfsm_thread){.tid = tid};
	return &a[f->nr_threads++];
}

static void remove_thread(struct tfsm *f, struct tfsm_thread *k)
{
	if (f->held_tid == k->tid)
		f->held_tid = 0;
	*k = f->threads[--f->nr_threads];
}

static bool is_first(const struct tfsm *f, const struct tfsm_thread *k)
{
	return k == &f->threads[0];
}

/* A thread made: followed from its first stop, which may have come already. */
static void note_thread(struct tfsm *f, pid_t tid)
{
	struct tfsm_thread *k = tfsm_thread(f, tid);

	if (k && k->state == TS_EARLY)
		run(k, 0);
	else if (!k)
		add_thread(f, tid);
}

static void note_forked(struct tfsm *f, pid_t pid)
{
	pid_t *a = array__grow(f->forked, &f->forked_cap, f->nr_forked, sizeof(*a));

	if (!a) {
		f->detach = (struct tfsm_action){.kind = TACT_DETACH, .tid = pid};
		return;
	}
	f->forked = a;
	a[f->nr_forked++] = pid;
}

/* A new image: the thread that ran it is the first one now, the ended ones held no root of it. */
static void exec(struct tfsm *f, struct tfsm_thread *first, pid_t from)
{
	struct tfsm_thread *k;

	first->state = TS_STOPPED;
	f->execed = true;
	for (size_t i = f->nr_threads; i-- > 1;) {
		k = &f->threads[i];
		if (k->tid == from || k->state == TS_GONE)
			remove_thread(f, k);
		else
			k->has_regs = k->exited = false;
	}
}

static void exit_stop(struct tfsm *f, struct tfsm_thread *k, const struct arch_regs *regs)
{
	bool alone = regs && regs->syscall == SYS_exit;

	if (is_first(f, k)) {
		k->state = TS_EXIT_HELD;
		f->at_exit = true;
		f->exit_alone = alone;
		return;
	}
	k->has_regs = regs && !alone;
	k->exited = k->has_regs;
	if (k->has_regs && regs != &k->regs)
		k->regs = *regs;
	run(k, 0);
}

/*
 * A thread gone with no stop since a check's resume was killed as it left
 * that stop: main, resumed first, returned at once and exit_group's
 * SIGKILL met the thread there, and the kernel ends a thread so woken
 * without an exit stop. It ran no code of its own since: the registers
 * the check read are those it died with, roots of the exit's check.
 */
static void gone(struct tfsm *f, struct tfsm_thread *k, int status)
{
	if (is_first(f, k)) {
		k->state = TS_GONE;
		f->gone = true;
		f->status = status;
		f->held_tid = f->held_tid == k->tid ? 0 : f->held_tid;
	} else if (k->exited || k->check_regs) {
		k->has_regs = k->exited = true;
		k->state = TS_GONE;
	} else {
		remove_thread(f, k);
	}
}

/* An exit stop's registers are the caller's: kept with the thread. */
static void keep_pending(struct tfsm_thread *k, const struct tfsm_event *ev)
{
	k->state = TS_PENDING;
	k->pending = *ev;
	if (ev->regs) {
		k->regs = *ev->regs;
		k->pending.regs = &k->regs;
	}
}

/* The first thread stopped for our interrupt: now every other one. */
static void interrupt_others(struct tfsm *f)
{
	struct tfsm_thread *k;

	f->interrupted = true;
	for (size_t i = 1; i < f->nr_threads; i++) {
		k = &f->threads[i];
		if (k->state == TS_RUN || k->state == TS_LISTEN) {
			k->state = TS_INTR_SENT;
			act(k, TACT_INTERRUPT, 0);
		} else if (k->state == TS_PENDING) {
			act(k, TACT_REGS, 0);
		}
	}
}

static void interrupting(struct tfsm *f, struct tfsm_thread *k, const struct tfsm_event *ev)
{
	bool hold = f->hold_signal && ev->sig == f->hold_signal;

	if (!is_first(f, k)) {
		if (ev->kind == TEV_TRAP)
			k->state = TS_INTR;
		else
			keep_pending(k, ev);
		act(k, TACT_REGS, 0);
	} else if (ev->kind == TEV_TRAP) {
		k->state = TS_INTR;
		interrupt_others(f);
	} else if (ev->kind == TEV_SIGNAL && !hold) {
		act(k, TACT_CONT, ev->sig); /* still awaiting the interrupt */
	} else {
		keep_pending(k, ev); /* the interrupt fails: tfsm_interrupt_result() */
	}
}

/* A stop to keep for later: the program's signals behind a held thread, all but exits in a check.
 */
static bool later(const struct tfsm *f, const struct tfsm_thread *k, const struct tfsm_event *ev)
{
	if (f->interrupted)
		return ev->kind != TEV_EXIT;
	return ev->kind == TEV_SIGNAL && f->held_tid && f->held_tid != k->tid;
}

static void handle(struct tfsm *f, struct tfsm_thread *k, const struct tfsm_event *ev)
{
	switch (ev->kind) {
	case TEV_SIGNAL:
		if (f->hold_signal && ev->sig == f->hold_signal) {
			k->state = TS_HELD;
			f->held_tid = k->tid;
		} else {
			run(k, ev->sig);
		}
		return;
	case TEV_GROUP_STOP:
		k->state = TS_LISTEN;
		act(k, TACT_LISTEN, 0);
		return;
	case TEV_CLONE:
		/* Resumed first: a thread noted may move the array @k is in. */
		run(k, 0);
		note_thread(f, ev->msg);
		return;
	case TEV_FORK:
		note_forked(f, ev->msg);
		break;
	case TEV_EXEC:
		exec(f, k, ev->msg);
		return;
	case TEV_EXIT:
		exit_stop(f, k, ev->regs);
		return;
	case TEV_TRAP:
	case TEV_OTHER:
	case TEV_GONE:
		break;
	}
	run(k, 0);
}

void tfsm_step(struct tfsm *f, const struct tfsm_event *ev)
{
	struct tfsm_thread *k = tfsm_thread(f, ev->tid);

	if (!k) {
		/* A first stop before its parent's clone event: held until that event. */
		if (ev->kind != TEV_GONE && (k = add_thread(f, ev->tid))) {
			keep_pending(k, ev);
			k->state = TS_EARLY;
			f->stops++;
		}
		return;
	}
	f->stops++;
	if (ev->kind != TEV_GONE)
		k->check_regs = false;
	/* A thread that stops again has left the stop it was in (SIGKILL ends any). */
	if (f->held_tid == k->tid)
		f->held_tid = 0;
	if (ev->kind == TEV_GONE)
		gone(f, k, ev->status);
	else if (k->state == TS_INTR_SENT)
		interrupting(f, k, ev);
	else if (later(f, k, ev))
		keep_pending(k, ev);
	else
		handle(f, k, ev);
}

bool tfsm_next(struct tfsm *f, struct tfsm_action *act_out)
{
	if (f->detach.kind != TACT_NONE) {
		*act_out = f->detach;
		f->detach.kind = TACT_NONE;
		return true;
	}
	for (size_t i = 0; i < f->nr_threads; i++) {
		if (f->threads[i].next_act.kind != TACT_NONE) {
			*act_out = f->threads[i].next_act;
			f->threads[i].next_act.kind = TACT_NONE;
			return true;
		}
	}
	return false;
}

void tfsm_failed(struct tfsm *f, const struct tfsm_action *a)
{
	struct tfsm_thread *k = tfsm_thread(f, a->tid);

	if (k && a->kind != TACT_REGS)
		k->state = TS_RUN;
}

bool tfsm_take_pending(struct tfsm *f, struct tfsm_event *ev)
{
	struct tfsm_thread *k;

	if (f->interrupted || f->held_tid)
		return false;
	for (size_t i = 0; i < f->nr_threads; i++) {
		k = &f->threads[i];
		if (k->state == TS_PENDING) {
			k->state = TS_RUN;
			*ev = k->pending;
			return true;
		}
	}
	return false;
}

pid_t tfsm_take_forked(struct tfsm *f)
{
	return f->nr_forked ? f->forked[--f->nr_forked] : 0;
}

enum target_state tfsm_state(const struct tfsm *f)
{
	if (f->gone)
		return TARGET_GONE;
	if (f->at_exit)
		return TARGET_EXITING;
	if (f->execed)
		return TARGET_EXECED;
	return f->held_tid ? TARGET_HELD : TARGET_RUNNING;
}

void tfsm_resume(struct tfsm *f)
{
	struct tfsm_thread *first = &f->threads[0];

	if (first->state != TS_STOPPED && first->state != TS_EXIT_HELD)
		return;
	run(first, 0);
	f->at_exit = f->execed = false;
}

void tfsm_release(struct tfsm *f, bool deliver)
{
	struct tfsm_thread *k = f->held_tid ? tfsm_thread(f, f->held_tid) : NULL;

	f->held_tid = 0;
	if (k)
		run(k, deliver ? f->hold_signal : 0);
}

static bool any_pending(const struct tfsm *f)
{
	for (size_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].state == TS_PENDING)
			return true;
	return false;
}

int tfsm_interrupt(struct tfsm *f)
{
	struct tfsm_thread *first = &f->threads[0];

	if (first->state != TS_RUN || f->held_tid || f->interrupted || any_pending(f))
		return -EAGAIN;
	first->state = TS_INTR_SENT;
	act(first, TACT_INTERRUPT, 0);
	return 0;
}

int tfsm_interrupt_result(const struct tfsm *f)
{
	if (f->gone)
		return -ESRCH;
	return f->interrupted ? 0 : -EAGAIN;
}

void tfsm_continue(struct tfsm *f)
{
	struct tfsm_thread *k;

	if (!f->interrupted)
		return;
	f->interrupted = false;
	for (size_t i = 0; i < f->nr_threads; i++) {
		k = &f->threads[i];
		k->check_regs = k->state == TS_INTR && k->has_regs;
		k->has_regs &= k->exited;
		if (k->state == TS_INTR)
			run(k, 0);
	}
}

pid_t tfsm_waiting(const struct tfsm *f)
{
	for (size_t i = 0; i < f->nr_threads; i++)
		if (f->threads[i].state == TS_INTR_SENT)
			return f->threads[i].tid;
	return 0;
}

bool tfsm_awaiting_exits(const struct tfsm *f)
{
	const struct tfsm_thread *k;

	if (!f->at_exit || f->exit_alone)
		return false;
	for (size_t i = 1; i < f->nr_threads; i++) {
		k = &f->threads[i];
		if (k->state != TS_GONE && k->state != TS_EARLY && !k->exited)
			return true;
	}
	return false;
}
