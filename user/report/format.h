/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside report/: the two formats a report_writer walks reports and
 * alerts with (text.c, json.c), and what they share.
 */
#ifndef ALLOCTRACE_REPORT_FORMAT_H
#define ALLOCTRACE_REPORT_FORMAT_H

#include <stdio.h>
#include "report/report.h"

/*
 * Both formats walk reports and alerts the same way, in
 * report_writer__report() and report_writer__big_alloc(); the ops only
 * format. The walker ends every object with a newline: the end of the line
 * in JSON, the blank line between objects in text.
 */
struct report_ops {
	const char *separator; /* between stacks, between frames */
	void (*report_begin)(FILE *f, const struct report *r);
	/* One process of a report on several, before and after its stacks and lists. */
	void (*proc_begin)(FILE *f, const struct report *p);
	void (*proc_end)(FILE *f, const struct report *p);
	void (*stack_begin)(FILE *f, const struct report_stack *s, bool resident);
	/* After the report's own stacks, before the lists that follow them. */
	void (*stacks_end)(FILE *f, const struct report *r);
	void (*report_end)(FILE *f, const struct report *r);
	void (*big_alloc_begin)(FILE *f, const struct big_alloc *a);
	void (*frame)(FILE *f, const struct frame_info *fr, size_t idx);
	/* Closes the frames of a stack or of a big allocation. */
	void (*frames_end)(FILE *f, size_t nr_frames, uint32_t stack_flags);
	/* Lists after the stacks: growing stacks, threads, the peak. */
	void (*list_begin)(FILE *f, const char *name, size_t n);
	void (*list_end)(FILE *f);
	void (*thread_begin)(FILE *f, const struct report_thread *th);
	/* @resident: --growth's pages, not blocks. */
	void (*peak_begin)(FILE *f, const struct report_peak *pk, bool resident);
	void (*object_end)(FILE *f);
	/* A stack in one of those lists: text shows one line for it. */
	void (*brief_stack)(FILE *f, const struct report_stack *s);
};

extern const struct report_ops report_text_ops, report_json_ops;

/* Valgrind's order of the leak classes: the worst first. */
extern const enum leak_class report_class_order[LEAK_CLASSES];

#endif
