/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_EXEC_FSM_H
#define ALLOCTRACE_EXEC_FSM_H

#include <stdbool.h>

/*
 * Where a traced process is in following its execs: attached -> exec seen
 * -> allocator pending (looked at again until its deadline) -> re-probed
 * or no allocator; another execve makes it exec seen again. A process
 * attached or adopted at its fork starts at PROC_ATTACHED.
 */
enum proc_trace {
	PROC_ATTACHED,	    /* its first program's allocator is probed */
	PROC_EXEC_SEEN,	    /* ran execve: the new program not looked at yet */
	PROC_ALLOC_PENDING, /* the new program has mapped no allocator yet */
	PROC_REPROBED,	    /* the new program's allocator is probed */
	PROC_NO_ALLOCATOR,  /* none found in time, or probing it failed */
};

/*
 * What moves a process on, as a pure function of (state, event) ->
 * (state, actions): app/execs.c makes the system calls, looks and probes,
 * and hands back what they gave as the next event.
 */
enum exec_event_kind {
	EXEC_EV_EXECVE, /* it ran execve: .err 0 its record kept for the new image, else why not */
	EXEC_EV_LOOKED, /* its allocator looked for: .err 0 found, -EAGAIN none mapped yet, else why
			   none */
	EXEC_EV_PROBED, /* the allocator found probed: .err 0, else why not */
};

struct exec_event {
	enum exec_event_kind kind;
	int err;
	bool gone;  /* EXEC_EV_LOOKED with -EAGAIN: the process has ended */
	bool late;  /* EXEC_EV_LOOKED with -EAGAIN: its deadline has passed */
	bool named; /* on the command line: why it has no allocator is said */
	bool multi; /* one of several: the others are traced on without it */
};

/* What to do, in this order; LOOK and PROBE give the next event. */
enum exec_act {
	EXEC_ACT_TELL_NONE = 1 << 0, /* say why it has no allocator (.err) */
	EXEC_ACT_GIVE_UP = 1 << 1,   /* the session fails (.err): it was the one traced */
	EXEC_ACT_DESCRIBE = 1 << 2,  /* say what is probed, read its new mappings */
	EXEC_ACT_LOOK = 1 << 3,	     /* look for its new program's allocator: EXEC_EV_LOOKED */
	EXEC_ACT_PROBE = 1 << 4,     /* probe the allocator found: EXEC_EV_PROBED */
};

struct exec_step {
	enum proc_trace trace; /* its state after the event */
	unsigned int acts;     /* enum exec_act */
	int err;	       /* why, for EXEC_ACT_TELL_NONE and EXEC_ACT_GIVE_UP */
};

/*
 * The step of a process in state @trace at @ev. An EXEC_EV_EXECVE whose
 * record could not be kept leaves @trace as it was: there is no record
 * to hold a state.
 */
struct exec_step exec_fsm__step(enum proc_trace trace, const struct exec_event *ev);

#endif
