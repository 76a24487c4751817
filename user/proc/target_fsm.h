/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_TARGET_FSM_H
#define ALLOCTRACE_TARGET_FSM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "arch/arch.h"
#include "proc/target.h"

/*
 * What to do at each ptrace stop of a launched target's threads, as a
 * pure function of (state, event) -> (state, actions): no system call is
 * made here. proc/target.c is the thin layer that turns waitpid()
 * statuses into events and performs the actions.
 */

/* One stop or end of one thread, as the layer read it. */
enum tfsm_kind {
	TEV_SIGNAL,	/* a signal-delivery stop of .sig */
	TEV_GROUP_STOP, /* PTRACE_EVENT_STOP of a stopping signal: job control */
	TEV_TRAP,  /* PTRACE_EVENT_STOP otherwise: an interrupt, a group stop's end, a first stop */
	TEV_CLONE, /* made thread .msg */
	TEV_FORK,  /* made child .msg (fork, vfork) */
	TEV_EXEC,  /* a new image, told on the first thread's tid; .msg the thread that ran it */
	TEV_EXIT,  /* PTRACE_EVENT_EXIT; .regs its registers, NULL when unreadable */
	TEV_OTHER, /* another event stop (vfork done): nothing to do */
	TEV_GONE,  /* ended and reaped, or no longer ours; .status its wait status */
};

struct tfsm_event {
	pid_t tid;
	enum tfsm_kind kind;
	int sig;
	long msg;
	int status;
	const struct arch_regs *regs;
};

enum tfsm_act_kind {
	TACT_NONE,
	TACT_CONT,	/* PTRACE_CONT with .sig (0: none) */
	TACT_LISTEN,	/* PTRACE_LISTEN: stay in the group stop */
	TACT_INTERRUPT, /* PTRACE_INTERRUPT; its stop is then awaited (tfsm_waiting()) */
	TACT_REGS,	/* read its registers into its tfsm_thread(), has_regs when read */
	TACT_DETACH,	/* PTRACE_DETACH: a thread or child that cannot be kept */
};

struct tfsm_action {
	enum tfsm_act_kind kind;
	pid_t tid;
	int sig;
};

enum tfsm_thread_state {
	TS_RUN,	      /* running, as far as we know */
	TS_LISTEN,    /* in a group stop, PTRACE_LISTEN */
	TS_HELD,      /* stopped by the hold signal: tfsm_release() */
	TS_INTR_SENT, /* interrupted, its stop not seen yet */
	TS_INTR,      /* stopped by our interrupt: tfsm_continue() */
	TS_PENDING,   /* stopped, its stop (.pending) handled later */
	TS_EXIT_HELD, /* the first thread at its exit stop: tfsm_resume() */
	TS_STOPPED,   /* the first thread at an exec or before it runs: tfsm_resume() */
	TS_EARLY,     /* a first stop met before its parent's clone event */
	TS_GONE,      /* ended: kept for its exit registers */
};

struct tfsm_thread {
	pid_t tid;
	enum tfsm_thread_state state;
	bool has_regs;
	bool exited;	 /* at its exit stop with the process's group exit */
	bool check_regs; /* resumed after a check, no stop seen since: .regs the check's */
	struct tfsm_action next_act; /* the next action for it, kind TACT_NONE when none */
	struct tfsm_event pending;
	struct arch_regs regs;
};

/* A launched target's threads; .threads[0] is its first thread. */
struct tfsm {
	struct tfsm_thread *threads;
	size_t nr_threads, cap;
	pid_t *forked; /* children made, traced since: tfsm_take_forked() */
	size_t nr_forked, forked_cap;
	struct tfsm_action detach; /* one that could not be kept (ENOMEM) */
	int hold_signal;
	pid_t held_tid;	  /* the thread the hold signal holds, or 0 */
	bool interrupted; /* held in stops of ours until tfsm_continue() */
	bool at_exit;	  /* the first thread in its exit stop */
	bool exit_alone;  /* ...which it reached by SYS_exit, the others running on */
	bool execed;	  /* at an exec, until tfsm_resume() */
	bool gone;	  /* the first thread ended and was reaped */
	int status;	  /* its wait status then */
	size_t stops;	  /* stops handled: the layer looks again while it grows */
};

/* A target of first thread @pid, @stopped (TS_STOPPED) or running. 0 or -ENOMEM. */
int tfsm_init(struct tfsm *f, pid_t pid, bool stopped);
void tfsm_free(struct tfsm *f);

struct tfsm_thread *tfsm_thread(struct tfsm *f, pid_t tid);

/* Handle one event; its actions are then taken with tfsm_next(). */
void tfsm_step(struct tfsm *f, const struct tfsm_event *ev);

/* The next action to perform into *@act, or false when there is none. */
bool tfsm_next(struct tfsm *f, struct tfsm_action *act);

/* An action that failed (the thread is gone or going): a stop of it will tell. */
void tfsm_failed(struct tfsm *f, const struct tfsm_action *act);

/* A stop kept for later that may be handled now, into *@ev, or false. */
bool tfsm_take_pending(struct tfsm *f, struct tfsm_event *ev);

/* A child met being made, or 0: each is told once. */
pid_t tfsm_take_forked(struct tfsm *f);

/* What target__update() tells. */
enum target_state tfsm_state(const struct tfsm *f);

/* Let the first thread go on from TS_STOPPED or TS_EXIT_HELD. */
void tfsm_resume(struct tfsm *f);

/* Let the held thread go on, the hold signal delivered or not. */
void tfsm_release(struct tfsm *f, bool deliver);

/*
 * Hold every thread in a stop of ours: the first thread first, the others
 * once it is stopped. -EAGAIN when a stop of its own is the first thread's
 * or already waits.
 */
int tfsm_interrupt(struct tfsm *f);
/* After tfsm_interrupt(), no thread waiting: 0 once held, -EAGAIN, or -ESRCH. */
int tfsm_interrupt_result(const struct tfsm *f);
void tfsm_continue(struct tfsm *f);

/* A thread whose interrupt is awaited (the layer waits for it), or 0. */
pid_t tfsm_waiting(const struct tfsm *f);

/* At a group exit's exit stop: another thread's exit stop is still to come. */
bool tfsm_awaiting_exits(const struct tfsm *f);

#endif
