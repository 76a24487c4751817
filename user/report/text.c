// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "lib/util.h"
#include "report/format.h"

/* Text: for a person at a terminal. */

/* Formatted numbers, returned by value so that they can be printf arguments. */
struct count_buf {
	char s[28]; /* "18,446,744,073,709,551,615" */
};

struct size_buf {
	char s[64];
};

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "1,048,576": easier to read than 1048576, and locale-independent. */
static struct count_buf text_count(uint64_t n)
{
	struct count_buf b;
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, n);
	int i, j = 0;

	for (i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			b.s[j++] = ',';
		b.s[j++] = digits[i];
	}
	b.s[j] = '\0';
	return b;
}

/* "3.2 MiB (3,355,443 bytes)", or "512 bytes" when rounding adds nothing. */
static struct size_buf text_size(uint64_t bytes)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	struct size_buf b;
	double v = bytes / 1024.0;
	size_t i = 0;

	if (bytes < 1024) {
		snprintf(b.s, sizeof(b.s), "%" PRIu64 " byte%s", bytes, plural(bytes));
		return b;
	}
	/* From 1023.95 on, "%.1f" would print 1024.0 of the smaller unit. */
	while (v >= 1023.95 && i + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		i++;
	}
	snprintf(b.s, sizeof(b.s), "%.1f %s (%s bytes)", v, units[i], text_count(bytes).s);
	return b;
}

/* Names come from the target: keep their bytes from driving the terminal. */
static void text_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void text_clock(FILE *f, double t)
{
	time_t secs = (time_t)t;
	struct tm tm;

	if (localtime_r(&secs, &tm))
		fprintf(f, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* The stamp that starts a report or an alert. */
static void text_time(FILE *f, double t)
{
	fputc('[', f);
	text_clock(f, t);
	fputs("] ", f);
}

static void text_exit(FILE *f, const struct target_exit *e)
{
	const char *name = e->signal > 0 ? sigabbrev_np(e->signal) : NULL;

	if (e->signal > 0)
		fprintf(f, " killed by signal %d", e->signal);
	else if (e->status >= 0)
		fprintf(f, " exited with status %d", e->status);
	else
		fputs(" exited", f);
	if (name)
		fprintf(f, " (SIG%s)", name);
	if (e->oom_killed)
		fputs(" from the kernel's OOM killer", f);
}

/* One line naming each counter of kind @kind or @or_kind that is not 0, or nothing. */
static void text_counters_line(FILE *f, const struct profile_totals *t, const char *title,
			       enum counter_kind kind, enum counter_kind or_kind)
{
	const char *sep = title;
	bool any = false;
	int c;

	for (c = 0; c < CNT_MAX; c++) {
		if ((counter_kind(c) != kind && counter_kind(c) != or_kind) || !t->counters[c])
			continue;
		fprintf(f, "%s%s=%s (%s)", sep, counter_name(c), text_count(t->counters[c]).s,
			counter_reason(c));
		sep = ", ";
		any = true;
	}
	if (any)
		fputc('\n', f);
}

static void text_warning(FILE *f, const struct profile_totals *t)
{
	text_counters_line(f, t, "  warning: numbers incomplete: ", CNT_KIND_LOST,
			   CNT_KIND_UNKNOWN_STACK);
	text_counters_line(f, t, "  warning: stacks incomplete: ", CNT_KIND_STACK, CNT_KIND_STACK);
}

/*
 * ": SIZE outstanding in N blocks; N allocs, N frees, N untracked frees[; stacks incomplete]",
 * or with --growth ": SIZE resident in N pages; N first touches[; ...]"
 * ("about SIZE ... recorded; sampled estimate, N faults sampled out" once
 * the fault rate passed the budget: a page then stands for several). With
 * --sample the outstanding numbers and allocs are estimates, and the frees
 * are those of sampled blocks only, a count that would read as a leak
 * beside the allocs' estimate if it were not said.
 */
static void text_totals(FILE *f, const struct profile_totals *t, const struct report *r)
{
	if (r->sample_rate) {
		fprintf(f,
			": about %s outstanding in %s block%s; about %s alloc%s; %s free%s of "
			"sampled blocks",
			text_size(t->outstanding_bytes).s, text_count(t->outstanding_allocs).s,
			plural(t->outstanding_allocs), text_count(t->allocs).s, plural(t->allocs),
			text_count(t->frees).s, plural(t->frees));
	} else if (r->growth) {
		fprintf(f, ": %s%s resident in %s page%s; %s first touch%s",
			report__sampled(r) ? "about " : "", text_size(t->outstanding_bytes).s,
			text_count(t->outstanding_allocs).s, plural(t->outstanding_allocs),
			text_count(t->allocs).s, t->allocs == 1 ? "" : "es");
		if (report__sampled(r))
			fprintf(f,
				" recorded; sampled estimate, standard error %s, %s faults sampled "
				"out",
				text_size(report__stderr_bytes(r)).s,
				text_count(t->counters[CNT_PAGES_SAMPLED_OUT]).s);
	} else {
		fprintf(f, ": %s outstanding in %s block%s; ", text_size(t->outstanding_bytes).s,
			text_count(t->outstanding_allocs).s, plural(t->outstanding_allocs));
		fprintf(f, "%s alloc%s, %s free%s, %s untracked free%s", text_count(t->allocs).s,
			plural(t->allocs), text_count(t->frees).s, plural(t->frees),
			text_count(t->untracked_frees).s, plural(t->untracked_frees));
	}
	fprintf(f, "%s\n", t->stacks_incomplete ? "; stacks incomplete" : "");
}

/* "definitely lost 128 bytes in 2 blocks, indirectly lost ..." */
static void text_classes(FILE *f, const char *indent, const char *sep, const uint64_t *bytes,
			 const uint64_t *allocs)
{
	for (int i = 0; i < LEAK_CLASSES; i++) {
		enum leak_class c = report_class_order[i];

		fprintf(f, "%s%s%s %s bytes in %s block%s", i ? sep : indent,
			c == LEAK_REACHABLE ? "still " : "", leak_class__name(c),
			text_count(bytes[c]).s, text_count(allocs[c]).s, plural(allocs[c]));
	}
	fputc('\n', f);
}

/* valgrind's "of which reachable via heuristic" lines, each heuristic on. */
static void text_heuristics(FILE *f, const struct report_leak_check *lc)
{
	if (!lc->heuristics)
		return;
	fputs("      of which reachable via heuristic:\n", f);
	for (int h = LEAK_HEUR_NONE + 1; h < LEAK_HEURISTICS; h++) {
		if (lc->heuristics & (1u << h))
			fprintf(f, "        %-19s: %s bytes in %s block%s\n",
				leak_heuristic__name(h), text_count(lc->heur_bytes[h]).s,
				text_count(lc->heur_allocs[h]).s, plural(lc->heur_allocs[h]));
	}
}

/* Like valgrind's LEAK SUMMARY, and what the verdicts rest on. */
static void text_leak_summary(FILE *f, const struct report_leak_check *lc)
{
	if (!lc)
		return;
	if (lc->error) {
		fprintf(f, "  leak check: no verdicts: %s\n", lc->error);
		return;
	}
	if (lc->processes)
		fprintf(f,
			"  leak summary of %u process%s (paused %.3f ms in all, %s of roots "
			"scanned):\n",
			lc->processes, lc->processes == 1 ? "" : "es", lc->pause_ms,
			text_size(lc->bytes_scanned).s);
	else
		fprintf(f, "  leak summary (target paused %.3f ms, %s of roots scanned):\n",
			lc->pause_ms, text_size(lc->bytes_scanned).s);
	text_classes(f, "    ", "\n    ", lc->class_bytes, lc->class_allocs);
	text_heuristics(f, lc);
	for (size_t i = 0; i < lc->nr_learned; i++)
		fprintf(f, "    learned: %s returns its block + %u (%zu blocks held there)\n",
			lc->learned[i].function, lc->learned[i].offset, lc->learned[i].evidence);
	for (unsigned int bit = 1; bit <= LEAK_ASSUME_LAST; bit <<= 1) {
		if (lc->assumptions & bit)
			fprintf(f, "    assumed: %s\n", leak_assumption__describe(bit));
	}
	if (lc->assumptions & LEAK_ASSUME_EXIT_REGISTERS)
		fprintf(f, "    registers of %u thread%s, read at each thread's exit, were roots\n",
			lc->threads, plural(lc->threads));
}

static void text_proc_header(FILE *f, const struct report *p)
{
	fprintf(f, "pid %d (", p->pid);
	if (p->ns_pid)
		fprintf(f, "ns pid %d) (", p->ns_pid);
	text_name(f, p->comm ? p->comm : "?");
	fputc(')', f);
	if (p->exit.exited)
		text_exit(f, &p->exit);
	text_totals(f, p->totals, p);
}

/* Processes reported at their ends and gone since, with what they held then. */
static void text_exited(FILE *f, const struct exited_procs *e)
{
	if (!e || !e->nr)
		return;
	fprintf(f, "  and %zu process%s ended earlier, holding %s in %s block%s at their ends\n",
		e->nr, e->nr == 1 ? "" : "es", text_size(e->bytes).s, text_count(e->allocs).s,
		plural(e->allocs));
}

static void text_report_begin(FILE *f, const struct report *r)
{
	const struct profile_totals *t = r->totals;

	text_time(f, r->time);
	fputs(r->final ? "final report, " : "", f);
	if (r->per_process) {
		fprintf(f, "%zu process%s", r->nr_procs_total, r->nr_procs_total == 1 ? "" : "es");
		text_totals(f, t, r);
		text_exited(f, r->exited);
		text_leak_summary(f, r->leak_check);
	} else {
		text_proc_header(f, r);
		text_leak_summary(f, r->leak_check);
	}
	if (r->filter) {
		fputs("  counting only ", f);
		text_name(f, r->filter);
		fputc('\n', f);
	}
	if (r->sample_rate)
		fprintf(f,
			"  estimates from allocations sampled every %s on average; the frees "
			"are counted only of sampled blocks\n",
			text_size(r->sample_rate).s);
	if (r->big_only)
		fprintf(f,
			"  only blocks of %s or more that reached the kernel (mmap, mremap, brk)\n",
			text_size(r->big_only).s);
	if (r->growth)
		fputs("  resident growth, not allocations: pages still resident, by the stack that "
		      "touched each first\n",
		      f);
	text_warning(f, t);
}

static void text_trend(FILE *f, const struct report_stack *s)
{
	if (!s->trend)
		return;
	/* Too few reports to name a trend: the growth alone says something. */
	if (!strcmp(s->trend, "new")) {
		if (s->growth_bytes > 0)
			fprintf(f, ", +%s since the last report", text_size(s->growth_bytes).s);
		return;
	}
	fprintf(f, ", %s", s->trend);
	if (s->growth_bytes > 0)
		fprintf(f, " +%s", text_size(s->growth_bytes).s);
	else if (s->growth_bytes < 0)
		fprintf(f, " -%s", text_size(-(uint64_t)s->growth_bytes).s);
}

/* --show-data: hex and printable text, 16 bytes a line, like hexdump -C. */
static void text_data(FILE *f, const struct report_stack *s)
{
	for (size_t i = 0; i < s->data_len; i += 16) {
		size_t n = s->data_len - i < 16 ? s->data_len - i : 16;

		fprintf(f, "    %s0x%" PRIx64 ": ", i ? "     " : "data ", s->data_addr + i);
		for (size_t j = 0; j < 16; j++)
			fprintf(f, j < n ? "%02x " : "   ", s->data[i + (j < n ? j : 0)]);
		fputc('|', f);
		for (size_t j = 0; j < n; j++)
			fputc(isprint(s->data[i + j]) ? s->data[i + j] : '.', f);
		fputs("|\n", f);
	}
}

/*
 * --leak-check's classes of a stack's blocks, and how many it holds that
 * the check did not see: allocated after its snapshot, they have no
 * verdict yet, and a line of zeros alone would read as nothing held.
 */
static void text_unclassified(FILE *f, const struct report_stack *s)
{
	uint64_t seen = 0, newer;

	for (int c = 0; c < LEAK_CLASSES; c++)
		seen += s->class_allocs[c];
	newer = s->outstanding_allocs > seen ? s->outstanding_allocs - seen : 0;
	if (seen)
		text_classes(f, "    ", ", ", s->class_bytes, s->class_allocs);
	if (newer)
		fprintf(f,
			"    %s block%s newer than the leak check's snapshot, not classified yet\n",
			text_count(newer).s, plural(newer));
}

static void text_stack_begin(FILE *f, const struct report_stack *s, bool resident)
{
	fprintf(f, "  %s%s %sin %s %s%s, %s %s%s", s->stderr_bytes ? "about " : "",
		text_size(s->outstanding_bytes).s, resident ? "resident " : "",
		text_count(s->outstanding_allocs).s, resident ? "page" : "block",
		plural(s->outstanding_allocs), text_count(s->allocs).s,
		resident ? "first touch" : "alloc",
		resident && s->allocs != 1 ? "es" : plural(s->allocs));
	text_trend(f, s);
	if (s->stderr_bytes)
		fprintf(f, ", standard error %s", text_size(s->stderr_bytes).s);
	fputc('\n', f);
	if (s->classified)
		text_unclassified(f, s);
	text_data(f, s);
}

static void text_stacks_end(FILE *f, const struct report *r)
{
	size_t more = r->nr_holding - r->nr_stacks;

	if (r->nr_holding > r->nr_stacks)
		fprintf(f, "  ... %zu more stack%s holding memory (use -T 0 to show all)\n", more,
			plural(more));
}

static void text_list_begin(FILE *f, const char *name, size_t n)
{
	static const struct {
		const char *name, *title;
		int indent;
	} titles[] = {
	    {"growing", "Growing steadily (since the last report)", 2},
	    {"threads", "Threads holding memory", 2},
	    {"stacks", "held by", 6},
	};

	for (size_t i = 0; i < ARRAY_SIZE(titles); i++) {
		if (!strcmp(name, titles[i].name))
			fprintf(f, "%*s%s:\n", titles[i].indent, "", titles[i].title);
	}
}

static void text_nothing(FILE *f)
{
}

static void text_proc_begin(FILE *f, const struct report *p)
{
	text_proc_header(f, p);
	text_leak_summary(f, p->leak_check);
	text_warning(f, p->totals);
}

static void text_proc_end(FILE *f, const struct report *p)
{
}

static void text_report_done(FILE *f, const struct report *r)
{
	size_t more = r->nr_procs_total - r->nr_procs;

	if (more)
		fprintf(f, "... %zu more process%s (use --top-processes 0 to show all)\n", more,
			more == 1 ? "" : "es");
}

static void text_thread_begin(FILE *f, const struct report_thread *th)
{
	fprintf(f, "    tid %u (", th->tid);
	text_name(f, th->comm ? th->comm : "exited");
	fprintf(f, "): %s in %s block%s\n", text_size(th->outstanding_bytes).s,
		text_count(th->outstanding_allocs).s, plural(th->outstanding_allocs));
}

static void text_peak_begin(FILE *f, const struct report_peak *pk, bool resident)
{
	fputs("  Peak: ", f);
	fprintf(f, "%s %s %s %s%s at ", text_size(pk->outstanding_bytes).s,
		resident ? "resident in" : "in", text_count(pk->outstanding_allocs).s,
		resident ? "page" : "block", plural(pk->outstanding_allocs));
	text_clock(f, pk->time);
	fputc('\n', f);
}

static void text_big_alloc_begin(FILE *f, const struct big_alloc *a)
{
	text_time(f, a->time);
	fprintf(f, "BIG ALLOC pid %d ", a->pid);
	if (a->ns_pid)
		fprintf(f, "(ns pid %d) ", a->ns_pid);
	fprintf(f, "tid %d: %s %s = 0x%" PRIx64 "\n", a->tid, a->func, text_size(a->size).s,
		a->addr);
}

/* "leak_a+0x1d", "[inlined] helper", "??" or, unmapped, the address. */
static void text_frame_function(FILE *f, const struct frame_info *fr)
{
	if (fr->inlined)
		fputs("[inlined] ", f);
	if (!fr->function) {
		if (fr->module)
			fputs("??", f);
		else
			fprintf(f, "0x%" PRIx64, fr->addr);
		return;
	}
	text_name(f, fr->function);
	/* An inlined call has no offset of its own: it lies in the next frame. */
	if (!fr->inlined)
		fprintf(f, "+0x%" PRIx64, fr->function_offset);
}

/*
 * A stack on one line: its first BRIEF_FRAMES frames, callee first. Frame
 * #0 alone is often an allocator's wrapper (MariaDB's my_malloc), the
 * same for most stacks; its callers tell them apart.
 */
#define BRIEF_FRAMES 3

static void text_brief_stack(FILE *f, const struct report_stack *s)
{
	fprintf(f, "        %s%s", s->stderr_bytes ? "about " : "",
		text_size(s->outstanding_bytes).s);
	text_trend(f, s);
	fputs(" in ", f);
	for (size_t i = 0; i < s->nr_frames && i < BRIEF_FRAMES; i++) {
		fputs(i ? " < " : "", f);
		text_frame_function(f, &s->frames[i]);
	}
	if (!s->nr_frames)
		fputs("(stack unknown)", f);
	fputc('\n', f);
}

static void text_frame(FILE *f, const struct frame_info *fr, size_t idx)
{
	fprintf(f, "    #%zu ", idx);
	text_frame_function(f, fr);
	if (fr->module) {
		fputs(" (", f);
		text_name(f, fr->module);
		fprintf(f, "+0x%" PRIx64 ")", fr->offset);
	} else {
		fputs(" (unknown)", f);
	}
	if (fr->file) {
		fputs(" at ", f);
		text_name(f, fr->file);
		if (fr->line)
			fprintf(f, ":%u", fr->line);
	}
	fputc('\n', f);
}

static void text_frames_end(FILE *f, size_t nr_frames, uint32_t stack_flags)
{
	/* Allocations whose stack was lost gather under a stack without frames. */
	if (!nr_frames)
		fputs("    (stack unknown)\n", f);
	else if (stack_flags & STACK_CUT)
		fputs("    (stack cut short: the walk stopped before the outermost frame)\n", f);
	else if (stack_flags & STACK_TRUNCATED)
		fputs("    (more frames beyond --max-depth)\n", f);
	if (nr_frames && (stack_flags & STACK_FP))
		fputs("    (some frames from frame pointers: callers may be missing)\n", f);
}

const struct report_ops report_text_ops = {
    .separator = "",
    .list_begin = text_list_begin,
    .list_end = text_nothing,
    .thread_begin = text_thread_begin,
    .peak_begin = text_peak_begin,
    .object_end = text_nothing,
    .brief_stack = text_brief_stack,
    .report_begin = text_report_begin,
    .proc_begin = text_proc_begin,
    .proc_end = text_proc_end,
    .stack_begin = text_stack_begin,
    .stacks_end = text_stacks_end,
    .report_end = text_report_done,
    .big_alloc_begin = text_big_alloc_begin,
    .frame = text_frame,
    .frames_end = text_frames_end,
};

/* JSON: one object per line; the field names are a contract with readers. */
