// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTML exporter: one self-contained page (summary, top leakers, flame
 * graphs, timeline, big-allocation alerts) written when the run ends.
 *
 * The page is a template (html/report.html, with the CSS and JS of html/
 * inlined at build time into html_assets.h) plus one JSON blob that the
 * page's script draws from. The blob carries the last report and the
 * alerts exactly as --format json writes them, so the page reads the
 * documented format (docs/formats.md) and anything added to it later (such
 * as per-thread numbers) reaches the page without a change here.
 *
 * The C side writes no HTML built from the target's names: everything
 * from the target travels inside the JSON blob, the script inserts it as
 * text, and the one escape that matters here ('<', so that no name can
 * close the <script> element) is done once, in html_put_json().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "export/exporters.h"
#include "html_assets.h"
#include "lib/json.h"
#include "report/report.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A day of reports every 5 s is 17,280 points; a timeline is no more
 * readable with them all than with a few thousand, so past this many the
 * series keeps every other point and from then on every other report.
 */
#define HTML_MAX_POINTS 2048

/*
 * Alerts beyond this many are counted, not kept: a program allocating a
 * big block in a loop would otherwise make a page no browser can open.
 */
#define HTML_MAX_BIG_ALLOCS 1000

/*
 * Stacks on the page, at most: the most outstanding bytes first, as the
 * reports list them. A flame graph of more is boxes under a pixel wide, and
 * with -T 0's every stack of a large program (65,536, deep) the page would
 * weigh gigabytes. The page says how many it left out (stacks_holding).
 */
#define HTML_MAX_STACKS 2000

struct html_point {
	double time;
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	uint64_t rss_bytes; /* 0 if unknown */
};

struct html {
	double created; /* when the exporter was made: before tracing */
	uint64_t nr_reports;
	double first_report_time;
	double interval;

	struct html_point *points;
	size_t nr_points;
	size_t cap_points;
	uint64_t stride; /* one report in this many goes in the series */

	char *report_json; /* the last report, one --format json line */
	size_t report_len;

	FILE *big; /* the alerts kept, "obj\n,obj\n..." */
	char *big_json;
	size_t big_len;
	struct report_writer *big_writer;
	uint64_t nr_big; /* every alert seen, kept or not */
	double first_big_time;
};

struct asset {
	const char *marker;
	const unsigned char *data;
	size_t len;
};

static double now_unix(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void html_free(void *state)
{
	struct html *h = state;

	if (!h)
		return;
	report_writer__free(h->big_writer);
	if (h->big)
		fclose(h->big);
	free(h->big_json);
	free(h->report_json);
	free(h->points);
	free(h);
}

void *html_new(void)
{
	struct html *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return NULL;
	h->created = now_unix();
	h->stride = 1;
	h->big = open_memstream(&h->big_json, &h->big_len);
	if (!h->big)
		goto fail;
	h->big_writer = report_writer__new(FORMAT_JSON, h->big);
	if (!h->big_writer)
		goto fail;
	return h;
fail:
	err = errno;
	html_free(h);
	errno = err;
	return NULL;
}

/* @r as --format json writes it, into a new buffer. 0 or -errno. */
static int html_render_report(const struct report *r, char **buf, size_t *len)
{
	struct report_writer *w;
	FILE *f;
	int err;

	*buf = NULL;
	f = open_memstream(buf, len);
	if (!f)
		return -errno;
	w = report_writer__new(FORMAT_JSON, f);
	err = w ? report_writer__report(w, r) : -errno;
	report_writer__free(w);
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/* Every other point goes; the next kept report is in step with the rest. */
static void html_thin_series(struct html *h)
{
	size_t i;

	for (i = 0; 2 * i < h->nr_points; i++)
		h->points[i] = h->points[2 * i];
	h->nr_points = i;
	h->stride *= 2;
}

static int html_add_point(struct html *h, const struct report *r)
{
	struct html_point *p;
	size_t cap;

	/* The final report is always drawn: it is what the summary shows. */
	if ((h->nr_reports - 1) % h->stride && !r->final)
		return 0;
	if (h->nr_points == HTML_MAX_POINTS)
		html_thin_series(h);
	if (h->nr_points == h->cap_points) {
		cap = h->cap_points ? 2 * h->cap_points : 64;
		if (cap > HTML_MAX_POINTS)
			cap = HTML_MAX_POINTS;
		p = realloc(h->points, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		h->points = p;
		h->cap_points = cap;
	}
	h->points[h->nr_points++] = (struct html_point){
	    .time = r->time,
	    .outstanding_bytes = r->totals->outstanding_bytes,
	    .outstanding_allocs = r->totals->outstanding_allocs,
	    .rss_bytes = r->rss_bytes,
	};
	return 0;
}

/*
 * The page keeps the HTML_MAX_STACKS largest stacks; of several
 * processes, those of the processes holding the most, in their order.
 * Returns the copy of r->procs it cut, to be freed, or NULL.
 */
static struct report *html_cut(struct report *cut)
{
	size_t room = HTML_MAX_STACKS, i;
	struct report *procs;

	if (!cut->per_process) {
		if (cut->nr_stacks > room)
			cut->nr_stacks = room;
		return NULL;
	}
	procs = calloc(cut->nr_procs + 1, sizeof(*procs));
	if (!procs)
		return NULL;
	for (i = 0; i < cut->nr_procs && room; i++) {
		procs[i] = cut->procs[i];
		if (procs[i].nr_stacks > room)
			procs[i].nr_stacks = room;
		room -= procs[i].nr_stacks;
	}
	cut->procs = procs;
	cut->nr_procs = i;
	return procs;
}

static int html_report(void *state, const struct report *r)
{
	struct html *h = state;
	struct report cut = *r;
	struct report *procs;
	char *buf;
	size_t len;
	int err;

	if (!h->nr_reports) {
		h->first_report_time = r->time;
		h->interval = r->interval;
	}
	h->nr_reports++;
	err = html_add_point(h, r);
	if (err)
		return err;
	/*
	 * Only the last report is drawn, but which one is last is known only
	 * at the end, and the frames' strings may be gone by then: keep each
	 * report as text until the next one replaces it.
	 */
	procs = html_cut(&cut);
	if (r->per_process && !procs)
		return -ENOMEM;
	err = html_render_report(&cut, &buf, &len);
	free(procs);
	if (err)
		return err;
	free(h->report_json);
	h->report_json = buf;
	h->report_len = len;
	return 0;
}

static int html_big_alloc(void *state, const struct big_alloc *a)
{
	struct html *h = state;

	if (!h->nr_big)
		h->first_big_time = a->time;
	if (h->nr_big++ >= HTML_MAX_BIG_ALLOCS)
		return 0;
	if (h->nr_big > 1)
		fputc(',', h->big);
	return report_writer__big_alloc(h->big_writer, a);
}

/*
 * JSON as text inside <script>: '<' only ever appears inside JSON strings,
 * where \u003c means the same, and without it a name holding "</script>"
 * or "<!--" would end or bend the element. A newline only ever ends a
 * record (strings escape theirs): dropped, the blob stays on one line, for
 * whoever reads it with line tools. @s ends with a NUL at @len, as a
 * memstream's buffer does.
 */
static void html_put_json(FILE *f, const char *s, size_t len)
{
	size_t n;

	while (len) {
		n = strcspn(s, "<\n");
		if (n > len)
			n = len;
		fwrite(s, 1, n, f);
		if (n == len)
			return;
		if (s[n] == '<')
			fputs("\\u003c", f);
		s += n + 1;
		len -= n + 1;
	}
}

/*
 * When tracing began, as near as is known: a periodic first report comes
 * one interval after it, and the exporter was made before it. The first
 * record bounds it from above (a final report can come before an interval
 * has passed).
 */
static double html_start(const struct html *h)
{
	double first = h->nr_reports ? h->first_report_time : h->first_big_time;
	double start = h->nr_reports ? h->first_report_time - h->interval : first;

	if (h->nr_big && h->first_big_time < first)
		first = h->first_big_time;
	if (h->created > start)
		start = h->created;
	return start < first ? start : first;
}

static void html_put_series(FILE *f, const struct html *h)
{
	const struct html_point *p;
	size_t i;

	for (i = 0; i < h->nr_points; i++) {
		p = &h->points[i];
		fprintf(f, "%s[%.3f,%" PRIu64 ",%" PRIu64 ",", i ? "," : "", p->time,
			p->outstanding_bytes, p->outstanding_allocs);
		if (p->rss_bytes)
			fprintf(f, "%" PRIu64 "]", p->rss_bytes);
		else
			fputs("null]", f);
	}
}

/*
 * "counters": what each counter that is not plain says of a report, its
 * kind and its warning, from counters.def as the text report has them:
 * the page names no counter of its own.
 */
static void html_put_counters(FILE *f)
{
	static const char *const kinds[] = {
	    [CNT_KIND_LOST] = "lost",
	    [CNT_KIND_UNKNOWN_STACK] = "unknown_stack",
	    [CNT_KIND_STACK] = "stack",
	};
	const char *sep = "";
	int c;

	fputs(",\"counters\":{", f);
	for (c = 0; c < CNT_MAX; c++) {
		if (counter_kind(c) == CNT_KIND_PLAIN)
			continue;
		fprintf(f, "%s\"%s\":{\"kind\":\"%s\",\"reason\":", sep, counter_name(c),
			kinds[counter_kind(c)]);
		json__string(f, counter_reason(c));
		fputc('}', f);
		sep = ",";
	}
	fputc('}', f);
}

static void html_put_data(FILE *f, const struct html *h)
{
	fprintf(f,
		"{\"format\":\"alloctrace-html\",\"version\":1,\"start\":%.3f,\"interval\":%.3f,"
		"\"reports\":%" PRIu64 ",\"series_stride\":%" PRIu64 ","
		"\"series_fields\":[\"time\",\"outstanding_bytes\",\"outstanding_allocs\","
		"\"rss_bytes\"],\"series\":[",
		h->nr_reports || h->nr_big ? html_start(h) : h->created, h->interval, h->nr_reports,
		h->stride);
	html_put_series(f, h);
	fputs("],\"report\":", f);
	if (h->report_json)
		html_put_json(f, h->report_json, h->report_len);
	else
		fputs("null", f);
	fputs(",\"big_allocs\":[", f);
	html_put_json(f, h->big_json, h->big_len);
	fprintf(f, "],\"big_allocs_seen\":%" PRIu64, h->nr_big);
	html_put_counters(f);
	fputc('}', f);
}

/*
 * The template with each marker (a C-style comment holding @name@)
 * replaced: "data" by the JSON blob, the others by the asset of that
 * name. Markers come from our
 * own template, so an unknown one is a build mistake; it is left as is.
 */
static void html_put_page(FILE *f, const struct html *h)
{
	const struct asset assets[] = {
	    {"css", html_report_css, html_report_css_len},
	    {"js", html_report_js, html_report_js_len},
	};
	const char *t = (const char *)html_report_html;
	const char *end = t + html_report_html_len, *m, *name_end;
	size_t i, name_len;

	while (t < end) {
		m = memmem(t, end - t, "/*@", 3);
		name_end = m ? memmem(m + 3, end - m - 3, "@*/", 3) : NULL;
		if (!name_end) {
			fwrite(t, 1, end - t, f);
			return;
		}
		fwrite(t, 1, m - t, f);
		name_len = name_end - m - 3;
		if (name_len == 4 && !memcmp(m + 3, "data", 4)) {
			html_put_data(f, h);
		} else {
			for (i = 0; i < ARRAY_SIZE(assets); i++) {
				if (strlen(assets[i].marker) == name_len &&
				    !memcmp(m + 3, assets[i].marker, name_len))
					break;
			}
			if (i < ARRAY_SIZE(assets))
				fwrite(assets[i].data, 1, assets[i].len, f);
			else
				fwrite(m, 1, name_end + 3 - m, f);
		}
		t = name_end + 3;
	}
}

/* Errors of @f are left on it: the caller checks them. */
static int html_finish(void *state, FILE *f)
{
	struct html *h = state;

	/* The alerts' buffer is current only once flushed. */
	if (fflush(h->big) || ferror(h->big))
		return -ENOMEM;
	html_put_page(f, h);
	return 0;
}

const struct export_ops html_ops = {
    .per_block = true,
    .report = html_report,
    .big_alloc = html_big_alloc,
    .finish = html_finish,
    .free = html_free,
};
