// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <inttypes.h>
#include "lib/json.h"
#include "lib/util.h"
#include "report/format.h"

static const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

static void json_int(FILE *f, long long v, bool known)
{
	if (known)
		fprintf(f, "%lld", v);
	else
		fputs("null", f);
}

static void json_hex(FILE *f, uint64_t v, bool known)
{
	if (known)
		fprintf(f, "\"0x%" PRIx64 "\"", v);
	else
		fputs("null", f);
}

/* ",\"definitely_lost_bytes\":N,\"definitely_lost_allocs\":N,..." */
static void json_classes(FILE *f, const uint64_t *bytes, const uint64_t *allocs)
{
	static const char *const keys[LEAK_CLASSES] = {
	    [LEAK_DEFINITE] = "definitely_lost",
	    [LEAK_INDIRECT] = "indirectly_lost",
	    [LEAK_POSSIBLE] = "possibly_lost",
	    [LEAK_REACHABLE] = "reachable",
	};

	for (int i = 0; i < LEAK_CLASSES; i++) {
		enum leak_class c = report_class_order[i];

		fprintf(f, ",\"%s_bytes\":%" PRIu64 ",\"%s_allocs\":%" PRIu64, keys[c], bytes[c],
			keys[c], allocs[c]);
	}
}

/* "leak_check": how the scan went and what its verdicts rest on. */
static void json_leak_check(FILE *f, const struct report_leak_check *lc)
{
	const char *sep = "";

	fputs(",\"leak_check\":{", f);
	if (lc->error) {
		fputs("\"error\":", f);
		json__string(f, lc->error);
		fputc('}', f);
		return;
	}
	if (lc->processes)
		fprintf(f, "\"processes\":%u,", lc->processes);
	fprintf(f,
		"\"pause_ms\":%.3f,\"bytes_scanned\":%" PRIu64 ",\"threads\":%u,\"assumptions\":[",
		lc->pause_ms, lc->bytes_scanned, lc->threads);
	for (unsigned int bit = 1; bit <= LEAK_ASSUME_LAST; bit <<= 1) {
		if (lc->assumptions & bit) {
			fprintf(f, "%s\"%s\"", sep, leak_assumption__name(bit));
			sep = ",";
		}
	}
	fputs("],\"reachable_via_heuristic\":{", f);
	sep = "";
	for (int h = LEAK_HEUR_NONE + 1; h < LEAK_HEURISTICS; h++) {
		if (!(lc->heuristics & (1u << h)))
			continue;
		fprintf(f, "%s\"%s\":{\"bytes\":%" PRIu64 ",\"allocs\":%" PRIu64 "}", sep,
			leak_heuristic__name(h), lc->heur_bytes[h], lc->heur_allocs[h]);
		sep = ",";
	}
	fputs("},\"learned_wrappers\":[", f);
	for (size_t i = 0; i < lc->nr_learned; i++) {
		fputs(i ? ",{\"function\":" : "{\"function\":", f);
		json__string(f, lc->learned[i].function);
		fprintf(f, ",\"offset\":%u,\"blocks\":%zu}", lc->learned[i].offset,
			lc->learned[i].evidence);
	}
	fputs("]}", f);
}

/* "totals", "counters" and "complete", for a process or for all. */
static void json_totals(FILE *f, const struct profile_totals *t, const struct report_leak_check *lc)
{
	int c;

	fprintf(f,
		"\"totals\":{\"outstanding_bytes\":%" PRIu64 ",\"outstanding_allocs\":%" PRIu64
		",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 ",\"untracked_frees\":%" PRIu64
		",\"lost\":%" PRIu64,
		t->outstanding_bytes, t->outstanding_allocs, t->allocs, t->frees,
		t->untracked_frees, t->lost);
	if (lc && !lc->error)
		json_classes(f, lc->class_bytes, lc->class_allocs);
	fputs("},\"counters\":{", f);
	for (c = 0; c < CNT_MAX; c++)
		fprintf(f, "%s\"%s\":%" PRIu64, c ? "," : "", counter_name(c), t->counters[c]);
	fprintf(f, "},\"complete\":%s,\"stacks_complete\":%s", json_bool(!t->lost),
		json_bool(!t->stacks_incomplete));
}

/* A process's members up to its stacks, which follow. */
static void json_proc_fields(FILE *f, const struct report *p)
{
	fprintf(f, "\"pid\":%d,", p->pid);
	if (p->ns_pid)
		fprintf(f, "\"ns_pid\":%d,", p->ns_pid);
	if (p->parent)
		fprintf(f, "\"parent\":%d,", p->parent);
	fputs("\"comm\":", f);
	json__string(f, p->comm);
	fputc(',', f);
	json_totals(f, p->totals, p->leak_check);
	if (p->leak_check)
		json_leak_check(f, p->leak_check);
	fprintf(f, ",\"stacks_holding\":%zu,\"stacks\":[", p->nr_holding);
}

static void json_report_begin(FILE *f, const struct report *r)
{
	fprintf(f, "{\"type\":\"report\",\"final\":%s,\"time\":%.3f,", json_bool(r->final),
		r->time);
	if (!r->per_process) {
		json_proc_fields(f, r);
		return;
	}
	json_totals(f, r->totals, r->leak_check);
	if (r->leak_check)
		json_leak_check(f, r->leak_check);
	if (r->exited)
		fprintf(f,
			",\"processes_exited\":{\"processes\":%zu,\"outstanding_bytes\":%" PRIu64
			",\"outstanding_allocs\":%" PRIu64 "}",
			r->exited->nr, r->exited->bytes, r->exited->allocs);
	fprintf(f, ",\"processes_total\":%zu,\"processes\":[", r->nr_procs_total);
}

static void json_proc_begin(FILE *f, const struct report *p)
{
	fputc('{', f);
	json_proc_fields(f, p);
}

static void json_exit(FILE *f, const struct target_exit *e)
{
	if (!e->exited)
		return;
	fputs(",\"exit\":{\"status\":", f);
	json_int(f, e->status, e->status >= 0);
	fputs(",\"signal\":", f);
	json_int(f, e->signal, e->signal > 0);
	fprintf(f, ",\"oom_killed\":%s}", json_bool(e->oom_killed));
}

static void json_proc_end(FILE *f, const struct report *p)
{
	json_exit(f, &p->exit);
	fputc('}', f);
}

static void json_data(FILE *f, const struct report_stack *s)
{
	char text[257];
	size_t i;

	fputs(",\"data\":{\"addr\":", f);
	json_hex(f, s->data_addr, true);
	fputs(",\"hex\":\"", f);
	for (i = 0; i < s->data_len; i++)
		fprintf(f, "%02x", s->data[i]);
	for (i = 0; i < s->data_len && i < sizeof(text) - 1; i++)
		text[i] = isprint(s->data[i]) ? s->data[i] : '.';
	text[i] = '\0';
	fputs("\",\"text\":", f);
	json__string(f, text);
	fputc('}', f);
}

static void json_stack_begin(FILE *f, const struct report_stack *s, bool resident)
{
	if (resident)
		fprintf(f, "{\"resident_bytes\":%" PRIu64 ",\"resident_pages\":%" PRIu64 ",",
			s->outstanding_bytes, s->outstanding_allocs);
	else
		fputc('{', f);
	if (resident && s->stderr_bytes)
		fprintf(f, "\"resident_bytes_stderr\":%" PRIu64 ",", s->stderr_bytes);
	fprintf(f,
		"\"outstanding_bytes\":%" PRIu64 ",\"outstanding_allocs\":%" PRIu64
		",\"allocs\":%" PRIu64 ",\"alloc_bytes\":%" PRIu64,
		s->outstanding_bytes, s->outstanding_allocs, s->allocs, s->alloc_bytes);
	if (s->classified)
		json_classes(f, s->class_bytes, s->class_allocs);
	if (s->trend) {
		fprintf(f, ",\"growth_bytes\":%" PRId64 ",\"trend\":", s->growth_bytes);
		json__string(f, s->trend);
	}
	if (s->data_len)
		json_data(f, s);
	fputs(",\"frames\":[", f);
}

static void json_list_begin(FILE *f, const char *name, size_t n)
{
	fprintf(f, ",\"%s\":[", name);
}

static void json_list_end(FILE *f)
{
	fputc(']', f);
}

static void json_stacks_end(FILE *f, const struct report *r)
{
	json_list_end(f);
}

static void json_thread_begin(FILE *f, const struct report_thread *th)
{
	fprintf(f, "{\"tid\":%u,\"comm\":", th->tid);
	json__string(f, th->comm);
	fprintf(f, ",\"outstanding_bytes\":%" PRIu64 ",\"outstanding_allocs\":%" PRIu64,
		th->outstanding_bytes, th->outstanding_allocs);
}

static void json_peak_begin(FILE *f, const struct report_peak *pk, bool resident)
{
	fprintf(f,
		",\"peak\":{\"time\":%.3f,\"outstanding_bytes\":%" PRIu64
		",\"outstanding_allocs\":%" PRIu64,
		pk->time, pk->outstanding_bytes, pk->outstanding_allocs);
}

static void json_object_end(FILE *f)
{
	fputc('}', f);
}

static void json_report_end(FILE *f, const struct report *r)
{
	if (r->per_process)
		fputc(']', f);
	if (r->filter) {
		fputs(",\"filter\":", f);
		json__string(f, r->filter);
	}
	if (r->sample_rate)
		fprintf(f, ",\"sample_rate\":%" PRIu64 ",\"estimated\":true", r->sample_rate);
	if (r->big_only)
		fprintf(f, ",\"big_only\":%" PRIu64, r->big_only);
	if (r->growth)
		fprintf(f, ",\"growth\":true,\"sampled\":%s", json_bool(report__sampled(r)));
	if (report__sampled(r))
		fprintf(f, ",\"resident_bytes_stderr\":%" PRIu64, report__stderr_bytes(r));
	json_exit(f, &r->exit);
	fputc('}', f);
}

static void json_big_alloc_begin(FILE *f, const struct big_alloc *a)
{
	fprintf(f, "{\"type\":\"big_alloc\",\"time\":%.3f,\"pid\":%d,", a->time, a->pid);
	if (a->ns_pid)
		fprintf(f, "\"ns_pid\":%d,", a->ns_pid);
	fprintf(f, "\"tid\":%d,\"func\":", a->tid);
	json__string(f, a->func);
	fprintf(f, ",\"size\":%" PRIu64 ",\"addr\":", a->size);
	json_hex(f, a->addr, true);
	fputs(",\"frames\":[", f);
}

static void json_frame(FILE *f, const struct frame_info *fr, size_t idx __attribute__((unused)))
{
	fputs("{\"addr\":", f);
	json_hex(f, fr->addr, true);
	fputs(",\"module\":", f);
	json__string(f, fr->module);
	fputs(",\"offset\":", f);
	json_hex(f, fr->offset, fr->module);
	fputs(",\"function\":", f);
	json__string(f, fr->function);
	fputs(",\"file\":", f);
	json__string(f, fr->file);
	fputs(",\"line\":", f);
	json_int(f, fr->line, fr->line);
	fprintf(f, ",\"inlined\":%s,\"build_id\":", json_bool(fr->inlined));
	json__string(f, fr->build_id);
	fputc('}', f);
}

/* By bit of enum stack_flags. */
static const char *const stack_flag_names[] = {"cut", "truncated", "frame_pointers"};

static void json_frames_end(FILE *f, size_t nr_frames __attribute__((unused)), uint32_t stack_flags)
{
	const char *sep = "";

	fputs("],\"stack_flags\":[", f);
	for (size_t i = 0; i < sizeof(stack_flag_names) / sizeof(*stack_flag_names); i++) {
		if (stack_flags & (1U << i)) {
			fprintf(f, "%s\"%s\"", sep, stack_flag_names[i]);
			sep = ",";
		}
	}
	fputs("]}", f);
}

const struct report_ops report_json_ops = {
    .separator = ",",
    .list_begin = json_list_begin,
    .list_end = json_list_end,
    .thread_begin = json_thread_begin,
    .peak_begin = json_peak_begin,
    .object_end = json_object_end,
    .brief_stack = NULL,
    .report_begin = json_report_begin,
    .proc_begin = json_proc_begin,
    .proc_end = json_proc_end,
    .stack_begin = json_stack_begin,
    .stacks_end = json_stacks_end,
    .report_end = json_report_end,
    .big_alloc_begin = json_big_alloc_begin,
    .frame = json_frame,
    .frames_end = json_frames_end,
};
