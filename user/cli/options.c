// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <limits.h>
#include <arpa/inet.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "alloctrace.h"
#include "lib/log.h"
#include "cli/options.h"
#include "arch/arch.h"
#include "arch/machines.h"
#include "leakcheck/leakcheck.h"

#define VERSION "0.1.0"

/* What --help prints around the options. */
static const char usage_head[] =
    "Usage: alloctrace [OPTIONS] -p PID[,PID...]\n"
    "       alloctrace [OPTIONS] -- COMMAND [ARGS...]\n"
    "       alloctrace [OPTIONS] --all\n"
    "       alloctrace [OPTIONS] [--cgroup PATH] [--comm NAME]\n"
    "\n"
    "Trace a process's allocator calls with eBPF and report, per call stack,\n"
    "the memory it still holds.\n"
    "\n";
static const char usage_tail[] =
    "\n"
    "Ctrl-C, SIGTERM or the target's exit prints a final report. See alloctrace(8).\n";

/*
 * One command-line option: its names, its value, its --help text and the
 * handler that sets it. A handler returns 0, 1 when it printed what was
 * asked (help, version: exit 0), or -EINVAL after printing one line;
 * bad_value() prints the usual one from @expected. @field, @min and @max
 * are the handler's to read: where in struct options the value goes, and
 * its bounds (set_seconds: in hundredths of a second).
 */
struct option_def {
	const char *name;
	char short_name; /* 0: none */
	const char *arg; /* its value's name in --help; NULL: it takes none */
	int (*set)(struct options *o, char *arg, const struct option_def *d);
	size_t field, field_size;
	unsigned long long min, max;
	const char *expected; /* what a bad value should have been */
	const char *help;     /* --help's text, lines split by '\n' */
};

#define FIELD(f)                                                                                   \
	.field = offsetof(struct options, f), .field_size = sizeof(((struct options *)0)->f)

/* getopt_long's value of the long-only option at index i of option_defs: OPT_LONG_ONLY + i. */
#define OPT_LONG_ONLY 0x100

static int bad_value(const struct option_def *d, const char *val)
{
	pr_err("invalid value '%s' for --%s: expected %s", val, d->name, d->expected);
	return -EINVAL;
}

/* Where @d's value goes in @o. */
static void *field_of(struct options *o, const struct option_def *d)
{
	return (char *)o + d->field;
}

/* A whole decimal number in [min, max], nothing else on the line. */
static int parse_uint(const char *s, unsigned long long min, unsigned long long max,
		      unsigned long long *out)
{
	unsigned long long v;
	char *end;

	/* strtoull would also take leading blanks and a sign, and negate. */
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *unit;
	int shift = 0;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		unit = strchr(units, end[0] & ~0x20);
		if (!unit)
			return -EINVAL;
		shift = 10 * (unit - units + 1);
		end++;
		if (!strcasecmp(end, "iB") || !strcasecmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
	}
	if (v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_seconds(const char *s, double min, double *out)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The kernel's rule for a ring buffer: a power of two, whole pages. */
static int parse_ringbuf_size(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_size(s, &v) || v < (uint64_t)sysconf(_SC_PAGESIZE) || v > MAX_RINGBUF_SIZE ||
	    (v & (v - 1)))
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * glibc's regcomp() doubles its memory with every stacked repetition
 * ("a++++..."): bound what a name filter may ask before compiling it.
 */
#define MAX_REGEX_LEN	  256
#define MAX_REGEX_REPEATS 16

static int check_regex(const struct option_def *d, const char *re)
{
	int repeats = 0, err;
	regex_t compiled;
	char msg[128];

	for (const char *c = re; *c; c++)
		repeats += !!strchr("*+?{", *c);
	if (strlen(re) > MAX_REGEX_LEN || repeats > MAX_REGEX_REPEATS) {
		pr_err("invalid value for --%s: a regular expression of at most %d characters and "
		       "%d repetitions, please",
		       d->name, MAX_REGEX_LEN, MAX_REGEX_REPEATS);
		return -EINVAL;
	}
	err = regcomp(&compiled, re, REG_EXTENDED | REG_NOSUB);

	if (!err) {
		regfree(&compiled);
		return 0;
	}
	regerror(err, &compiled, msg, sizeof(msg));
	pr_err("invalid value '%s' for --%s: not a regular expression (%s)", re, d->name, msg);
	return -EINVAL;
}

static int parse_format(const char *s, enum report_format *out)
{
	if (!strcmp(s, "text"))
		*out = FORMAT_TEXT;
	else if (!strcmp(s, "json"))
		*out = FORMAT_JSON;
	else
		return -EINVAL;
	return 0;
}

/*
 * CFI unwinding is built for the machines of arch/machines.h (with
 * their bpf/arch_<name>.bpf.h): elsewhere 'auto' means frame pointers.
 */
static int parse_unwind(const char *s, bool *cfi)
{
	const bool have_cfi = arch_machine_row(arch_elf_machine) >= 0;

	if (!strcmp(s, "fp"))
		*cfi = false;
	else if (!strcmp(s, "auto"))
		*cfi = have_cfi;
	else if (!strcmp(s, "cfi") && have_cfi)
		*cfi = true;
	else
		return -EINVAL;
	return 0;
}

/*
 * "127.0.0.1:9464", "[::1]:9464": numbers only (inet_pton's, not
 * inet_aton's "1.2.3"), so that no name lookup decides where the
 * target's stacks are served.
 */
static int parse_listen(const char *arg, struct listen_addr *out)
{
	const char *colon = strrchr(arg, ':');
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->addr;
	struct sockaddr_in *in = (struct sockaddr_in *)&out->addr;
	unsigned long long port;
	char host[INET6_ADDRSTRLEN];
	size_t len;

	if (!colon || parse_uint(colon + 1, 1, 65535, &port))
		return -EINVAL;
	len = colon - arg;
	if (len > 2 && arg[0] == '[' && arg[len - 1] == ']') {
		if (len - 2 >= sizeof(host))
			return -EINVAL;
		memcpy(host, arg + 1, len - 2);
		host[len - 2] = '\0';
		*in6 = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons(port)};
		out->len = sizeof(*in6);
		return inet_pton(AF_INET6, host, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	if (len >= sizeof(host))
		return -EINVAL;
	memcpy(host, arg, len);
	host[len] = '\0';
	*in = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port)};
	out->len = sizeof(*in);
	return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -EINVAL;
}

/* "12,34,56": added to the processes of earlier -p options. */
static int set_pids(struct options *opts, char *arg, const struct option_def *d)
{
	unsigned long long v;
	char word[16];
	size_t len;

	for (const char *p = arg;; p += len + 1) {
		len = strcspn(p, ",");
		if (len >= sizeof(word))
			return bad_value(d, arg);
		memcpy(word, p, len);
		word[len] = '\0';
		if (parse_uint(word, 1, INT_MAX, &v))
			return bad_value(d, arg);
		for (size_t i = 0; i < opts->nr_pids; i++) {
			if (opts->pids[i] == (pid_t)v) {
				pr_err("invalid value '%s' for --pid: pid %llu is given twice", arg,
				       v);
				return -EINVAL;
			}
		}
		if (opts->nr_pids == MAX_PIDS) {
			pr_err("too many processes for --pid: at most %d (--all traces every one)",
			       MAX_PIDS);
			return -EINVAL;
		}
		opts->pids[opts->nr_pids++] = v;
		if (!p[len])
			return 0;
	}
}

static int set_flag(struct options *o, char *arg, const struct option_def *d)
{
	*(bool *)field_of(o, d) = true;
	return 0;
}

/* A number in [min, max] into a field of 4 or 8 bytes. */
static int set_uint(struct options *o, char *arg, const struct option_def *d)
{
	unsigned long long v;

	if (parse_uint(arg, d->min, d->max, &v))
		return bad_value(d, arg);
	if (d->field_size == sizeof(uint64_t))
		*(uint64_t *)field_of(o, d) = v;
	else
		*(uint32_t *)field_of(o, d) = v;
	return 0;
}

/* A size of at least min bytes ("8M") into a uint64_t. */
static int set_size(struct options *o, char *arg, const struct option_def *d)
{
	uint64_t *out = field_of(o, d);

	if (parse_size(arg, out) || *out < d->min)
		return bad_value(d, arg);
	return 0;
}

static int set_seconds(struct options *o, char *arg, const struct option_def *d)
{
	if (parse_seconds(arg, d->min / 100.0, field_of(o, d)))
		return bad_value(d, arg);
	return 0;
}

/* A name that must not be empty: -o, the exports, --pprof-dir. */
static int set_path(struct options *o, char *arg, const struct option_def *d)
{
	if (!*arg)
		return bad_value(d, arg);
	*(const char **)field_of(o, d) = arg;
	return 0;
}

static int set_regex(struct options *o, char *arg, const struct option_def *d)
{
	*(const char **)field_of(o, d) = arg;
	return check_regex(d, arg);
}

/* Entries of a BPF map, up to max: --max-allocs, --max-stacks, --max-unwind-rows. */
static int set_entries(struct options *o, char *arg, const struct option_def *d)
{
	unsigned long long v;

	if (parse_uint(arg, d->min, d->max, &v)) {
		pr_err("invalid value '%s' for --%s: expected a number from 1 to %llu", arg,
		       d->name, d->max);
		return -EINVAL;
	}
	*(uint32_t *)field_of(o, d) = v;
	return 0;
}

static int set_cgroup(struct options *o, char *arg, const struct option_def *d)
{
	if (!*arg)
		return bad_value(d, arg);
	o->choice.cgroup = arg;
	return 0;
}

static int set_comm(struct options *o, char *arg, const struct option_def *d)
{
	if (!*arg || strlen(arg) > COMM_MAX || strchr(arg, '/'))
		return bad_value(d, arg);
	o->choice.comm = arg;
	return 0;
}

static int set_format(struct options *o, char *arg, const struct option_def *d)
{
	return parse_format(arg, &o->format) ? bad_value(d, arg) : 0;
}

static int set_unwind(struct options *o, char *arg, const struct option_def *d)
{
	return parse_unwind(arg, &o->unwind_cfi) ? bad_value(d, arg) : 0;
}

static int set_allocator(struct options *o, char *arg, const struct option_def *d)
{
	return allocator_opts__parse_spec(&o->alloc, arg) ? bad_value(d, arg) : 0;
}

static int set_ringbuf_size(struct options *o, char *arg, const struct option_def *d)
{
	return parse_ringbuf_size(arg, &o->maps.ringbuf) ? bad_value(d, arg) : 0;
}

static int set_listen(struct options *o, char *arg, const struct option_def *d)
{
	if (parse_listen(arg, &o->listen))
		return bad_value(d, arg);
	o->listen.text = arg;
	return 0;
}

static int set_leak_heuristics(struct options *o, char *arg, const struct option_def *d)
{
	return leak_heuristics__parse(arg, field_of(o, d)) ? bad_value(d, arg) : 0;
}

/* FUNC:OFFSET, added to those of earlier --leak-check-wrapper options; none: learn none. */
static int set_leak_wrapper(struct options *o, char *arg, const struct option_def *d)
{
	if (!strcmp(arg, "none")) {
		o->no_leak_learning = true;
		return 0;
	}
	if (o->nr_leak_wrappers == LEAK_MAX_WRAPPERS) {
		pr_err("too many wrappers for --leak-check-wrapper: at most %d", LEAK_MAX_WRAPPERS);
		return -EINVAL;
	}
	if (leak_wrapper__parse(arg, &o->leak_wrappers[o->nr_leak_wrappers]))
		return bad_value(d, arg);
	o->nr_leak_wrappers++;
	return 0;
}

static int set_verbose(struct options *o, char *arg, const struct option_def *d)
{
	o->verbose++;
	return 0;
}

static int show_help(struct options *o, char *arg, const struct option_def *d);

static int show_version(struct options *o, char *arg, const struct option_def *d)
{
	printf("alloctrace %s\n", VERSION);
	o->version = true;
	return 1;
}

/*
 * Every option, in --help's order. A new one is an entry here (its names,
 * value, handler and help) and, if it needs one, a field of struct
 * options: getopt's tables and --help are made from this.
 */
static const struct option_def option_defs[] = {
    {.name = "pid",
     .short_name = 'p',
     .arg = "PID[,PID...]",
     .set = set_pids,
     .expected = "process ids separated by commas",
     .help = "trace running processes (-p may be repeated)"},
    {.name = "all",
     .set = set_flag,
     FIELD(all),
     .help = "trace every process that uses the allocator\n"
	     "alloctrace uses (the C library's, or --allocator's)"},
    {.name = "cgroup",
     .arg = "PATH",
     .set = set_cgroup,
     .expected = "a cgroup v2 directory",
     .help = "trace every process in the cgroup v2 PATH and below it\n"
	     "(e.g. /sys/fs/cgroup/system.slice/NAME.service), those\n"
	     "that join it later too"},
    {.name = "comm",
     .arg = "NAME",
     .set = set_comm,
     .expected = "a program name of 1 to 15 characters, not a path",
     .help = "trace every process named NAME (exactly, as pgrep -x), those\n"
	     "running now and those that start later (a restarted service)"},
    {.name = "follow-forks",
     .set = set_flag,
     FIELD(follow_forks),
     .help = "trace the children of traced processes too"},
    {.name = "max-per-process",
     .arg = "N",
     .set = set_uint,
     FIELD(max_per_proc),
     .min = 1,
     .max = UINT32_MAX,
     .expected = "a number of blocks, at least 1",
     .help = "live blocks tracked per process (default 65536\n"
	     "with --all, else no limit); more are counted lost"},
    {.name = "top-processes",
     .arg = "N",
     .set = set_uint,
     FIELD(top_procs),
     .max = UINT_MAX,
     .expected = "a number of processes (0 = all)",
     .help = "processes per report, by outstanding bytes\n"
	     "(default 10, 0 = all)"},
    {.name = "interval",
     .short_name = 'i',
     .arg = "SECS",
     .set = set_seconds,
     FIELD(interval),
     .min = 1,
     .expected = "seconds between 0.01 and 86400",
     .help = "seconds between reports (default 5)"},
    {.name = "count",
     .short_name = 'n',
     .arg = "N",
     .set = set_uint,
     FIELD(count),
     .min = 1,
     .max = UINT_MAX,
     .expected = "a number of reports, at least 1",
     .help = "stop after N reports, the last one final (default: until stopped)"},
    {.name = "top",
     .short_name = 'T',
     .arg = "N",
     .set = set_uint,
     FIELD(top),
     .max = UINT_MAX,
     .expected = "a number of stacks (0 = all)",
     .help = "stacks per report (per process), by outstanding bytes\n"
	     "(default 10, 0 = all)"},
    {.name = "big",
     .arg = "SIZE",
     .set = set_size,
     FIELD(big),
     .min = 1,
     .expected = "a size in bytes such as 8M, 512K or 1G",
     .help = "alert, with its stack, on each allocation >= SIZE (e.g. 8M)"},
    {.name = "big-only",
     .set = set_flag,
     FIELD(alloc.big_only),
     .help = "with --big: no probes on the allocator at all; see only\n"
	     "blocks that reach the kernel (mmap, mremap, brk), for\n"
	     "near-zero cost on programs making many small allocations"},
    {.name = "growth",
     .set = set_flag,
     FIELD(growth),
     .help = "no probes on the allocator at all: resident memory by the\n"
	     "stack that first touched each page, and its trend"},
    {.name = "format",
     .arg = "FMT",
     .set = set_format,
     .expected = "'text' or 'json'",
     .help = "text (default) or json (one JSON object per line)"},
    {.name = "output",
     .short_name = 'o',
     .arg = "FILE",
     .set = set_path,
     FIELD(output),
     .expected = "a file name",
     .help = "write the reports to FILE instead of standard output"},
    {.name = "listen",
     .arg = "ADDR:PORT",
     .set = set_listen,
     .expected = "a numeric address and port such as 127.0.0.1:9464 or [::1]:9464",
     .help = "serve each report as Prometheus metrics at /metrics\n"
	     "(ADDR numeric: 127.0.0.1, [::1])"},
    {.name = "web-config",
     .arg = "FILE",
     .set = set_path,
     FIELD(listen.web_config),
     .expected = "a file name",
     .help = "TLS and basic authentication for --listen, from a file\n"
	     "like Prometheus exporters' --web.config.file"},
    {.name = "max-depth",
     .arg = "N",
     .set = set_uint,
     FIELD(stack_depth),
     .min = 1,
     .max = MAX_STACK_DEPTH,
     .expected = "a number of frames from 1 to 127",
     .help = "frames per stack, 1-127 (default 64)"},
    {.name = "unwind",
     .arg = "HOW",
     .set = set_unwind,
     .expected = "'cfi', 'fp' or 'auto' (cfi: x86-64 and arm64 only)",
     .help = "walk stacks by 'cfi' (the objects' .eh_frame, right without\n"
	     "frame pointers), 'fp' (frame pointers: cheaper) or 'auto'\n"
	     "(default: cfi on x86-64 and arm64, else fp)"},
    {.name = "allocator",
     .arg = "PATH[:PREFIX]",
     .set = set_allocator,
     .expected = "PATH or PATH:PREFIX",
     .help = "probe the allocator in PATH (symbols PREFIXmalloc, ...)\n"
	     "instead of the one symbol lookup finds"},
    {.name = "mmap",
     .set = set_flag,
     FIELD(alloc.mmap),
     .help = "also count anonymous mmap/munmap/mremap calls"},
    {.name = "sample",
     .arg = "BYTES",
     .set = set_size,
     FIELD(sample),
     .min = 1,
     .expected = "a mean number of bytes such as 512K",
     .help = "record about one allocation per BYTES allocated (Poisson,\n"
	     "like heapprofd) and report estimates: far cheaper"},
    {.name = "min-age",
     .arg = "SECS",
     .set = set_seconds,
     FIELD(filter.min_age),
     .expected = "seconds from 0 to 86400",
     .help = "count only blocks at least SECS old"},
    {.name = "tid",
     .arg = "TID",
     .set = set_uint,
     FIELD(filter.tid),
     .min = 1,
     .max = INT_MAX,
     .expected = "a thread id (a positive number)",
     .help = "count only blocks allocated by thread TID"},
    {.name = "thread-name",
     .arg = "RE",
     .set = set_regex,
     FIELD(filter.thread_name),
     .help = "count only blocks allocated by threads whose name matches RE"},
    {.name = "module",
     .arg = "RE",
     .set = set_regex,
     FIELD(filter.module),
     .help = "show only stacks through an object whose path matches RE"},
    {.name = "min-size",
     .arg = "SIZE",
     .set = set_size,
     FIELD(filter.min_size),
     .expected = "a size in bytes such as 64, 4K or 1M",
     .help = "count only blocks of at least SIZE bytes"},
    {.name = "max-size",
     .arg = "SIZE",
     .set = set_size,
     FIELD(filter.max_size),
     .min = 1,
     .expected = "a size in bytes such as 64, 4K or 1M",
     .help = "count only blocks of at most SIZE bytes"},
    {.name = "threads",
     .set = set_flag,
     FIELD(threads),
     .help = "which threads hold the memory, and through which stacks"},
    {.name = "show-data",
     .arg = "N",
     .set = set_uint,
     FIELD(show_data),
     .min = 1,
     .max = 256,
     .expected = "a number of bytes from 1 to 256",
     .help = "print the first N bytes (up to 256) of one live block per\n"
	     "stack: this shows the target's data, secrets included"},
    {.name = "leak-check",
     .set = set_flag,
     FIELD(leak_check),
     .help = "classify live blocks as valgrind does (definitely, indirectly,\n"
	     "possibly lost, reachable) at each report; a launched command\n"
	     "at its exit. Pauses the target briefly (ptrace)"},
    {.name = "leak-check-heuristics",
     .arg = "LIST",
     .set = set_leak_heuristics,
     FIELD(leak_heuristics),
     .expected = "all, none or a list of stdstring, length64, newarray, multipleinheritance",
     .help = "interior pointers of valgrind's shapes count as start pointers:\n"
	     "all (default, as valgrind), none, or some of stdstring,\n"
	     "length64, newarray, multipleinheritance"},
    {.name = "leak-check-wrapper",
     .arg = "FUNC:OFFSET",
     .set = set_leak_wrapper,
     .expected = "FUNCTION:OFFSET, OFFSET from 1 to 4096, or none",
     .help = "FUNC wraps the allocator and returns its block + OFFSET, past\n"
	     "a header (MariaDB's my_malloc: 24): a pointer there counts as\n"
	     "a start pointer (reachable via heuristic: wrapper). Repeatable.\n"
	     "Undeclared wrappers are learned from their blocks' pointers;\n"
	     "none: learn none"},
    {.name = "max-allocs",
     .arg = "N",
     .set = set_entries,
     FIELD(maps.allocs),
     .min = 1,
     .max = MAX_LIVE_BLOCKS,
     .help = "room for N live blocks at once (default 1048576); kernel memory:\n"
	     "2N slots rounded up to a power of 2, 48 bytes each, up front"},
    {.name = "max-stacks",
     .arg = "N",
     .set = set_entries,
     FIELD(maps.stacks),
     .min = 1,
     .max = MAX_MAP_ENTRIES,
     .help = "distinct stacks recorded (default 65536); kernel memory: about\n"
	     "48 bytes each up front, 176 + 8 x max-depth + 32 x CPUs per\n"
	     "stack recorded"},
    {.name = "max-unwind-rows",
     .arg = "N",
     .set = set_entries,
     FIELD(maps.unwind_rows),
     .min = 1,
     .max = MAX_MAP_ENTRIES,
     .help = "most rows of CFI unwind tables, every object's together\n"
	     "(default 67108864); kernel memory: 1 MiB per 64K rows, taken\n"
	     "as objects load (a C program 1 MiB, clang 23 MiB)"},
    {.name = "ringbuf-size",
     .arg = "SIZE",
     .set = set_ringbuf_size,
     .expected = "a power of two from the page size to 1G, such as 256K",
     .help = "room for alerts not yet read, a power of two (default 256K,\n"
	     "about 240 alerts); kernel memory: SIZE + 13K"},
/* An export file's option per kind of export/kinds.def. */
#define EXPORT_KIND(id, option, ctor, ops, help_)                                                  \
	{.name = option,                                                                           \
	 .arg = "FILE",                                                                            \
	 .set = set_path,                                                                          \
	 FIELD(exports[EXPORT_##id]),                                                              \
	 .expected = "a file name",                                                                \
	 .help = help_},
#include "export/kinds.def"
#undef EXPORT_KIND
    {.name = "pprof-dir",
     .arg = "DIR",
     .set = set_path,
     FIELD(pprof_dir),
     .expected = "a directory name",
     .help = "a gzipped pprof profile per report in DIR, for continuous\n"
	     "profiling (Pyroscope, Parca): alloctrace-PID-TIME-SEQ.pb.gz"},
    {.name = "pprof-keep",
     .arg = "N",
     .set = set_uint,
     FIELD(pprof_keep),
     .min = 1,
     .max = 1000000,
     .expected = "a number of files from 1 to 1000000",
     .help = "files kept in DIR, the oldest removed first (default 60)"},
    {.name = "verbose",
     .short_name = 'v',
     .set = set_verbose,
     .help = "say what is attached where, and libbpf's messages"},
    {.name = "help", .short_name = 'h', .set = show_help, .help = "this text"},
    {.name = "version", .short_name = 'V', .set = show_version, .help = "the version"},
};

#define NR_OPTIONS (sizeof(option_defs) / sizeof(option_defs[0]))

/* Where --help's option texts begin, past "  -p, --pid PID[,PID...] ". */
#define HELP_COLUMN 25

/* One option of --help: its names, then its text from HELP_COLUMN on, or from the next line. */
static void print_option(FILE *f, const struct option_def *d)
{
	int len;

	if (d->short_name)
		len = fprintf(f, "  -%c, --%s", d->short_name, d->name);
	else
		len = fprintf(f, "      --%s", d->name);
	if (d->arg)
		len += fprintf(f, " %s", d->arg);
	if (len < HELP_COLUMN)
		fprintf(f, "%*s", HELP_COLUMN - len, "");
	else if (len == HELP_COLUMN)
		fputs("  ", f);
	else
		fprintf(f, "\n%*s", HELP_COLUMN, "");
	for (const char *p = d->help; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "%*s", HELP_COLUMN, "");
	}
	fputc('\n', f);
}

static int show_help(struct options *o, char *arg, const struct option_def *d)
{
	fputs(usage_head, stdout);
	for (size_t i = 0; i < NR_OPTIONS; i++)
		print_option(stdout, &option_defs[i]);
	fputs(usage_tail, stdout);
	return 1;
}

/* getopt_long's view of the table: long options valued by their index, short ones by their letter.
 */
static void getopt_tables(struct option *longs, char *shorts)
{
	char *s = shorts;

	/* '+': the first word that is not an option starts the command; ':': say a missing value.
	 */
	*s++ = '+';
	*s++ = ':';
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct option_def *d = &option_defs[i];

		longs[i] = (struct option){d->name, d->arg ? required_argument : no_argument, NULL,
					   d->short_name ? d->short_name : OPT_LONG_ONLY + (int)i};
		if (d->short_name) {
			*s++ = d->short_name;
			if (d->arg)
				*s++ = ':';
		}
	}
	longs[NR_OPTIONS] = (struct option){0};
	*s = '\0';
}

/* The entry getopt_long's @val names. */
static const struct option_def *option_def_of(int val)
{
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		if (option_defs[i].short_name ? val == option_defs[i].short_name
					      : val == OPT_LONG_ONLY + (int)i)
			return &option_defs[i];
	}
	return NULL;
}

bool options__multi_proc(const struct options *opts)
{
	return opts->nr_pids > 1 || opts->follow_forks || opts->all;
}

int options__parse(struct options *opts, int argc, char **argv)
{
	struct option longs[NR_OPTIONS + 1];
	char shorts[3 + 2 * NR_OPTIONS];
	const struct option_def *d;
	int opt, err;

	*opts = (struct options){
	    .interval = 5,
	    .top = 10,
	    .top_procs = 10,
	    .format = FORMAT_TEXT,
	    .stack_depth = DEFAULT_STACK_DEPTH,
	    .leak_heuristics = LEAK_HEUR_ALL, /* valgrind's default */
	};
	parse_unwind("auto", &opts->unwind_cfi);
	getopt_tables(longs, shorts);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (opt == ':') {
			pr_err("option %s needs a value (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		d = option_def_of(opt);
		if (!d) {
			pr_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		err = d->set(opts, optarg, d);
		if (err)
			return err;
	}
	if (optind < argc)
		opts->argv = &argv[optind];
	return options__check(opts);
}

int options__exit_code(int parse_result)
{
	return parse_result > 0 ? EXIT_OK : EXIT_USAGE;
}
