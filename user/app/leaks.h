/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_LEAKS_H
#define ALLOCTRACE_APP_LEAKS_H

#include <stdbool.h>
#include "app/state.h"
#include "report/assemble.h"

/*
 * --leak-check: the verdicts of the session's processes, taken by the
 * leakcheck/ room from the blocks of the BPF live table. A running
 * process is scanned for each report (a launched command held in a stop
 * of the session's for it), and a launched command once more at its exit
 * stop, for the final report. A process another tracer holds is
 * said once and has no verdicts from then on.
 */

/* Scan @p now; @ours: the session holds it in its exit stop. The result is kept. */
void leaks__check(struct session *s, struct proc *p, bool ours);

/* The verdicts for the report on @p: kept ones, else a scan now. NULL: none at all. */
const struct assemble_leaks *leaks__for_report(struct session *s, struct proc *p);

/* After a report: drop the verdicts of running processes (@all: every one). */
void leaks__forget(struct session *s, bool all);

#endif
