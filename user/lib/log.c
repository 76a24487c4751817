// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "lib/log.h"

/* The one piece of process-wide state: how chatty to be. */
static int verbose;

void log_set_verbose(int level)
{
	verbose = level;
}

int log_verbose(void)
{
	return verbose;
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "alloctrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define DEFINE_LOG(name, prefix, cond)                                                             \
	void name(const char *fmt, ...)                                                            \
	{                                                                                          \
		va_list ap;                                                                        \
		if (!(cond))                                                                       \
			return;                                                                    \
		va_start(ap, fmt);                                                                 \
		vlog(prefix, fmt, ap);                                                             \
		va_end(ap);                                                                        \
	}

DEFINE_LOG(pr_err, "", 1)
DEFINE_LOG(pr_warn, "warning: ", 1)
DEFINE_LOG(pr_info, "", 1)
DEFINE_LOG(pr_debug, "", verbose)
