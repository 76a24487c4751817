/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_EXIT_H
#define ALLOCTRACE_EXIT_H

#include <stdbool.h>

/* How a traced process ended, as the reports tell it. */
struct target_exit {
	bool exited;	 /* the target is gone */
	int status;	 /* exit status, or -1 if unknown or killed */
	int signal;	 /* killing signal, or 0 */
	bool oom_killed; /* the kernel's OOM killer chose it */
};

#endif
