// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include "proc/exec_fsm.h"

/* Its new program goes untraced: with one process, so does the session. */
static struct exec_step no_allocator(const struct exec_event *ev, int err, bool tell)
{
	struct exec_step st = {.trace = PROC_NO_ALLOCATOR, .err = err};

	if (tell)
		st.acts |= EXEC_ACT_TELL_NONE;
	if (!ev->multi)
		st.acts |= EXEC_ACT_GIVE_UP;
	return st;
}

/* Pending until its deadline, then probed or without an allocator. */
static struct exec_step looked(enum proc_trace trace, const struct exec_event *ev)
{
	int err = ev->err;

	/* Gone: its end is told by its pidfd or its last report, not as a failure. */
	if (err == -EAGAIN && ev->gone)
		return (struct exec_step){.trace = PROC_NO_ALLOCATOR};
	if (err == -EAGAIN && !ev->late)
		return (struct exec_step){.trace = PROC_ALLOC_PENDING};
	/* None mapped in time is none. */
	if (err == -EAGAIN)
		err = -ENOENT;
	if (err)
		return no_allocator(ev, err, ev->named);
	return (struct exec_step){.trace = trace, .acts = EXEC_ACT_PROBE};
}

struct exec_step exec_fsm__step(enum proc_trace trace, const struct exec_event *ev)
{
	switch (ev->kind) {
	case EXEC_EV_EXECVE:
		if (ev->err)
			return (struct exec_step){
			    .trace = trace,
			    .acts = ev->multi ? 0 : EXEC_ACT_GIVE_UP,
			    .err = ev->err,
			};
		return (struct exec_step){.trace = PROC_EXEC_SEEN, .acts = EXEC_ACT_LOOK};
	case EXEC_EV_LOOKED:
		return looked(trace, ev);
	case EXEC_EV_PROBED:
		if (ev->err)
			return no_allocator(ev, ev->err, false);
		return (struct exec_step){.trace = PROC_REPROBED, .acts = EXEC_ACT_DESCRIBE};
	}
	return (struct exec_step){.trace = trace};
}
