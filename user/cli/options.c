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

#define VERSION "0.1.0"

static const char usage[] =
    "Usage: alloctrace [OPTIONS] -p PID[,PID...]\n"
    "       alloctrace [OPTIONS] -- COMMAND [ARGS...]\n"
    "       alloctrace [OPTIONS] --all\n"
    "       alloctrace [OPTIONS] [--cgroup PATH] [--comm NAME]\n"
    "\n"
    "Trace a process's allocator calls with eBPF and report, per call stack,\n"
    "the memory it still holds.\n"
    "\n"
    "  -p, --pid PID[,PID...] trace running processes (-p may be repeated)\n"
    "      --all              trace every process that uses the allocator\n"
    "                         alloctrace uses (the C library's, or --allocator's)\n"
    "      --cgroup PATH      trace every process in the cgroup v2 PATH and below it\n"
    "                         (e.g. /sys/fs/cgroup/system.slice/NAME.service), those\n"
    "                         that join it later too\n"
    "      --comm NAME        trace every process named NAME (exactly, as pgrep -x), those\n"
    "                         running now and those that start later (a restarted service)\n"
    "      --follow-forks     trace the children of traced processes too\n"
    "      --max-per-process N  live blocks tracked per process (default 65536\n"
    "                         with --all, else no limit); more are counted lost\n"
    "      --top-processes N  processes per report, by outstanding bytes\n"
    "                         (default 10, 0 = all)\n"
    "  -i, --interval SECS    seconds between reports (default 5)\n"
    "  -n, --count N          stop after N reports, the last one final (default: until stopped)\n"
    "  -T, --top N            stacks per report (per process), by outstanding bytes\n"
    "                         (default 10, 0 = all)\n"
    "      --big SIZE         alert, with its stack, on each allocation >= SIZE (e.g. 8M)\n"
    "      --big-only         with --big: no probes on the allocator at all; see only\n"
    "                         blocks that reach the kernel (mmap, mremap, brk), for\n"
    "                         near-zero cost on programs making many small allocations\n"
    "      --growth           no probes on the allocator at all: resident memory by the\n"
    "                         stack that first touched each page, and its trend\n"
    "      --format FMT       text (default) or json (one JSON object per line)\n"
    "  -o, --output FILE      write the reports to FILE instead of standard output\n"
    "      --listen ADDR:PORT serve each report as Prometheus metrics at /metrics\n"
    "                         (ADDR numeric: 127.0.0.1, [::1])\n"
    "      --web-config FILE  TLS and basic authentication for --listen, from a file\n"
    "                         like Prometheus exporters' --web.config.file\n"
    "      --max-depth N      frames per stack, 1-127 (default 64)\n"
    "      --unwind HOW       walk stacks by 'cfi' (the objects' .eh_frame, right without\n"
    "                         frame pointers), 'fp' (frame pointers: cheaper) or 'auto'\n"
    "                         (default: cfi on x86-64, else fp)\n"
    "      --allocator PATH[:PREFIX]\n"
    "                         probe the allocator in PATH (symbols PREFIXmalloc, ...)\n"
    "                         instead of the one symbol lookup finds\n"
    "      --mmap             also count anonymous mmap/munmap/mremap calls\n"
    "      --sample BYTES     record about one allocation per BYTES allocated (Poisson,\n"
    "                         like heapprofd) and report estimates: far cheaper\n"
    "      --min-age SECS     count only blocks at least SECS old\n"
    "      --tid TID          count only blocks allocated by thread TID\n"
    "      --thread-name RE   count only blocks allocated by threads whose name matches RE\n"
    "      --module RE        show only stacks through an object whose path matches RE\n"
    "      --min-size SIZE    count only blocks of at least SIZE bytes\n"
    "      --max-size SIZE    count only blocks of at most SIZE bytes\n"
    "      --threads          which threads hold the memory, and through which stacks\n"
    "      --show-data N      print the first N bytes (up to 256) of one live block per\n"
    "                         stack: this shows the target's data, secrets included\n"
    "      --leak-check       classify live blocks as valgrind does (definitely, indirectly,\n"
    "                         possibly lost, reachable) at each report; a launched command\n"
    "                         at its exit. Pauses the target briefly (ptrace)\n"
    "      --leak-check-heuristics LIST\n"
    "                         interior pointers of valgrind's shapes count as start pointers:\n"
    "                         all (default, as valgrind), none, or some of stdstring,\n"
    "                         length64, newarray, multipleinheritance\n"
    "      --max-allocs N     room for N live blocks at once (default 1048576); kernel memory:\n"
    "                         2N slots rounded up to a power of 2, 48 bytes each, up front\n"
    "      --max-stacks N     distinct stacks recorded (default 65536); kernel memory: about\n"
    "                         48 bytes each up front, 176 + 8 x max-depth + 32 x CPUs per\n"
    "                         stack recorded\n"
    "      --max-unwind-rows N  most rows of CFI unwind tables, every object's together\n"
    "                         (default 67108864); kernel memory: 1 MiB per 64K rows, taken\n"
    "                         as objects load (a C program 1 MiB, clang 23 MiB)\n"
    "      --ringbuf-size SIZE  room for alerts not yet read, a power of two (default 256K,\n"
    "                         about 240 alerts); kernel memory: SIZE + 13K\n"
    "      --folded FILE      folded stacks by outstanding bytes (flamegraph.pl, inferno)\n"
    "      --folded-count FILE  folded stacks by outstanding blocks\n"
    "      --pprof FILE       gzipped pprof profile (go tool pprof, speedscope)\n"
    "      --html FILE        one self-contained page: flame graphs, timeline, alerts\n"
    "      --pprof-dir DIR    a gzipped pprof profile per report in DIR, for continuous\n"
    "                         profiling (Pyroscope, Parca): alloctrace-PID-TIME-SEQ.pb.gz\n"
    "      --pprof-keep N     files kept in DIR, the oldest removed first (default 60)\n"
    "  -v, --verbose          say what is attached where, and libbpf's messages\n"
    "  -h, --help             this text\n"
    "  -V, --version          the version\n"
    "\n"
    "Ctrl-C, SIGTERM or the target's exit prints a final report. See alloctrace(8).\n";

enum {
	OPT_ALL = 0x100,
	OPT_FOLLOW_FORKS,
	OPT_CGROUP,
	OPT_COMM,
	OPT_MAX_PER_PROCESS,
	OPT_TOP_PROCESSES,
	OPT_BIG,
	OPT_BIG_ONLY,
	OPT_GROWTH,
	OPT_FORMAT,
	OPT_MAX_DEPTH,
	OPT_UNWIND,
	OPT_ALLOCATOR,
	OPT_MMAP,
	OPT_SAMPLE,
	OPT_MIN_AGE,
	OPT_TID,
	OPT_THREAD_NAME,
	OPT_MODULE,
	OPT_MIN_SIZE,
	OPT_MAX_SIZE,
	OPT_THREADS,
	OPT_SHOW_DATA,
	OPT_LEAK_CHECK,
	OPT_LEAK_HEURISTICS,
	OPT_MAX_ALLOCS,
	OPT_MAX_STACKS,
	OPT_MAX_UNWIND_ROWS,
	OPT_RINGBUF_SIZE,
	OPT_LISTEN,
	OPT_WEB_CONFIG,
	OPT_PPROF_DIR,
	OPT_PPROF_KEEP,
	/* One per enum export_kind, in its order. */
	OPT_EXPORT,
	OPT_EXPORT_LAST = OPT_EXPORT + EXPORT_HTML,
};

static const struct option long_options[] = {
    {"pid", required_argument, NULL, 'p'},
    {"all", no_argument, NULL, OPT_ALL},
    {"follow-forks", no_argument, NULL, OPT_FOLLOW_FORKS},
    {"cgroup", required_argument, NULL, OPT_CGROUP},
    {"comm", required_argument, NULL, OPT_COMM},
    {"max-per-process", required_argument, NULL, OPT_MAX_PER_PROCESS},
    {"top-processes", required_argument, NULL, OPT_TOP_PROCESSES},
    {"interval", required_argument, NULL, 'i'},
    {"count", required_argument, NULL, 'n'},
    {"top", required_argument, NULL, 'T'},
    {"big", required_argument, NULL, OPT_BIG},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"web-config", required_argument, NULL, OPT_WEB_CONFIG},
    {"big-only", no_argument, NULL, OPT_BIG_ONLY},
    {"growth", no_argument, NULL, OPT_GROWTH},
    {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
    {"unwind", required_argument, NULL, OPT_UNWIND},
    {"allocator", required_argument, NULL, OPT_ALLOCATOR},
    {"mmap", no_argument, NULL, OPT_MMAP},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"min-age", required_argument, NULL, OPT_MIN_AGE},
    {"tid", required_argument, NULL, OPT_TID},
    {"thread-name", required_argument, NULL, OPT_THREAD_NAME},
    {"module", required_argument, NULL, OPT_MODULE},
    {"min-size", required_argument, NULL, OPT_MIN_SIZE},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"show-data", required_argument, NULL, OPT_SHOW_DATA},
    {"leak-check", no_argument, NULL, OPT_LEAK_CHECK},
    {"leak-check-heuristics", required_argument, NULL, OPT_LEAK_HEURISTICS},
    {"max-allocs", required_argument, NULL, OPT_MAX_ALLOCS},
    {"max-stacks", required_argument, NULL, OPT_MAX_STACKS},
    {"max-unwind-rows", required_argument, NULL, OPT_MAX_UNWIND_ROWS},
    {"ringbuf-size", required_argument, NULL, OPT_RINGBUF_SIZE},
    {"folded", required_argument, NULL, OPT_EXPORT + EXPORT_FOLDED},
    {"folded-count", required_argument, NULL, OPT_EXPORT + EXPORT_FOLDED_COUNT},
    {"pprof", required_argument, NULL, OPT_EXPORT + EXPORT_PPROF},
    {"html", required_argument, NULL, OPT_EXPORT + EXPORT_HTML},
    {"pprof-dir", required_argument, NULL, OPT_PPROF_DIR},
    {"pprof-keep", required_argument, NULL, OPT_PPROF_KEEP},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {},
};

/* The name of the long option with value @val, for messages. */
static const char *option_name(int val)
{
	for (const struct option *o = long_options; o->name; o++) {
		if (o->val == val)
			return o->name;
	}
	return "?";
}

static int bad_value(const char *opt, const char *val, const char *expected)
{
	pr_err("invalid value '%s' for %s: expected %s", val, opt, expected);
	return -EINVAL;
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

/* Entries of a BPF map, up to @max: --max-allocs, --max-stacks, --max-unwind-rows. */
static int parse_entries(int opt, const char *arg, uint32_t max, uint32_t *out)
{
	unsigned long long v;

	if (parse_uint(arg, 1, max, &v)) {
		pr_err("invalid value '%s' for --%s: expected a number from 1 to %u", arg,
		       option_name(opt), max);
		return -EINVAL;
	}
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

static int check_regex(const char *opt, const char *re)
{
	int repeats = 0, err;
	regex_t compiled;
	char msg[128];

	for (const char *c = re; *c; c++)
		repeats += !!strchr("*+?{", *c);
	if (strlen(re) > MAX_REGEX_LEN || repeats > MAX_REGEX_REPEATS) {
		pr_err("invalid value for %s: a regular expression of at most %d characters and "
		       "%d repetitions, please",
		       opt, MAX_REGEX_LEN, MAX_REGEX_REPEATS);
		return -EINVAL;
	}
	err = regcomp(&compiled, re, REG_EXTENDED | REG_NOSUB);

	if (!err) {
		regfree(&compiled);
		return 0;
	}
	regerror(err, &compiled, msg, sizeof(msg));
	pr_err("invalid value '%s' for %s: not a regular expression (%s)", re, opt, msg);
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

/* CFI unwinding is built for x86-64: elsewhere 'auto' means frame pointers. */
static int parse_unwind(const char *s, bool *cfi)
{
#if defined(__x86_64__)
	const bool have_cfi = true;
#else
	const bool have_cfi = false;
#endif

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
static int parse_pids(struct options *opts, const char *arg)
{
	unsigned long long v;
	char word[16];
	size_t len;

	for (const char *p = arg;; p += len + 1) {
		len = strcspn(p, ",");
		if (len >= sizeof(word))
			return bad_value("--pid", arg, "process ids separated by commas");
		memcpy(word, p, len);
		word[len] = '\0';
		if (parse_uint(word, 1, INT_MAX, &v))
			return bad_value("--pid", arg, "process ids separated by commas");
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

static int parse_one(struct options *opts, int opt, char *arg)
{
	unsigned long long v;

	switch (opt) {
	case 'p':
		return parse_pids(opts, arg);
	case OPT_ALL:
		opts->all = true;
		return 0;
	case OPT_FOLLOW_FORKS:
		opts->follow_forks = true;
		return 0;
	case OPT_CGROUP:
		if (!*arg)
			return bad_value("--cgroup", arg, "a cgroup v2 directory");
		opts->choice.cgroup = arg;
		return 0;
	case OPT_COMM:
		if (!*arg || strlen(arg) > COMM_MAX || strchr(arg, '/'))
			return bad_value("--comm", arg,
					 "a program name of 1 to 15 characters, not a path");
		opts->choice.comm = arg;
		return 0;
	case OPT_MAX_PER_PROCESS:
		if (parse_uint(arg, 1, UINT32_MAX, &v))
			return bad_value("--max-per-process", arg,
					 "a number of blocks, at least 1");
		opts->max_per_proc = v;
		return 0;
	case OPT_TOP_PROCESSES:
		if (parse_uint(arg, 0, UINT_MAX, &v))
			return bad_value("--top-processes", arg, "a number of processes (0 = all)");
		opts->top_procs = v;
		return 0;
	case 'i':
		if (parse_seconds(arg, 0.01, &opts->interval))
			return bad_value("--interval", arg, "seconds between 0.01 and 86400");
		return 0;
	case 'n':
		if (parse_uint(arg, 1, UINT_MAX, &v))
			return bad_value("--count", arg, "a number of reports, at least 1");
		opts->count = v;
		return 0;
	case 'T':
		if (parse_uint(arg, 0, UINT_MAX, &v))
			return bad_value("--top", arg, "a number of stacks (0 = all)");
		opts->top = v;
		return 0;
	case OPT_BIG:
		if (parse_size(arg, &opts->big) || !opts->big)
			return bad_value("--big", arg, "a size in bytes such as 8M, 512K or 1G");
		return 0;
	case OPT_BIG_ONLY:
		opts->big_only = true;
		return 0;
	case OPT_GROWTH:
		opts->growth = true;
		return 0;
	case OPT_FORMAT:
		if (parse_format(arg, &opts->format))
			return bad_value("--format", arg, "'text' or 'json'");
		return 0;
	case OPT_MAX_DEPTH:
		if (parse_uint(arg, 1, MAX_STACK_DEPTH, &v))
			return bad_value("--max-depth", arg, "a number of frames from 1 to 127");
		opts->stack_depth = v;
		return 0;
	case OPT_UNWIND:
		if (parse_unwind(arg, &opts->unwind_cfi))
			return bad_value("--unwind", arg,
					 "'cfi', 'fp' or 'auto' (cfi: x86-64 only)");
		return 0;
	case OPT_ALLOCATOR:
		if (allocator_opts__parse_spec(&opts->alloc, arg))
			return bad_value("--allocator", arg, "PATH or PATH:PREFIX");
		return 0;
	case OPT_MMAP:
		opts->alloc.mmap = true;
		return 0;
	case OPT_SAMPLE:
		if (parse_size(arg, &opts->sample) || !opts->sample)
			return bad_value("--sample", arg, "a mean number of bytes such as 512K");
		return 0;
	case OPT_MIN_AGE:
		if (parse_seconds(arg, 0, &opts->filter.min_age))
			return bad_value("--min-age", arg, "seconds from 0 to 86400");
		return 0;
	case OPT_TID:
		if (parse_uint(arg, 1, INT_MAX, &v))
			return bad_value("--tid", arg, "a thread id (a positive number)");
		opts->filter.tid = v;
		return 0;
	case OPT_THREAD_NAME:
		opts->filter.thread_name = arg;
		return check_regex("--thread-name", arg);
	case OPT_MODULE:
		opts->filter.module = arg;
		return check_regex("--module", arg);
	case OPT_MIN_SIZE:
		if (parse_size(arg, &opts->filter.min_size))
			return bad_value("--min-size", arg, "a size in bytes such as 64, 4K or 1M");
		return 0;
	case OPT_MAX_SIZE:
		if (parse_size(arg, &opts->filter.max_size) || !opts->filter.max_size)
			return bad_value("--max-size", arg, "a size in bytes such as 64, 4K or 1M");
		return 0;
	case OPT_THREADS:
		opts->threads = true;
		return 0;
	case OPT_SHOW_DATA:
		if (parse_uint(arg, 1, 256, &v))
			return bad_value("--show-data", arg, "a number of bytes from 1 to 256");
		opts->show_data = v;
		return 0;
	case OPT_LEAK_CHECK:
		opts->leak_check = true;
		return 0;
	case OPT_LEAK_HEURISTICS:
		if (leak_heuristics__parse(arg, &opts->leak_heuristics))
			return bad_value("--leak-check-heuristics", arg,
					 "all, none or a list of stdstring, length64, newarray, "
					 "multipleinheritance");
		return 0;
	case OPT_MAX_ALLOCS:
		return parse_entries(opt, arg, MAX_LIVE_BLOCKS, &opts->maps.allocs);
	case OPT_MAX_STACKS:
		return parse_entries(opt, arg, MAX_MAP_ENTRIES, &opts->maps.stacks);
	case OPT_MAX_UNWIND_ROWS:
		return parse_entries(opt, arg, MAX_MAP_ENTRIES, &opts->maps.unwind_rows);
	case OPT_RINGBUF_SIZE:
		if (parse_ringbuf_size(arg, &opts->maps.ringbuf))
			return bad_value("--ringbuf-size", arg,
					 "a power of two from the page size to 1G, such as 256K");
		return 0;
	case OPT_LISTEN:
		if (parse_listen(arg, &opts->listen))
			return bad_value(
			    "--listen", arg,
			    "a numeric address and port such as 127.0.0.1:9464 or [::1]:9464");
		opts->listen.text = arg;
		return 0;
	case OPT_WEB_CONFIG:
		opts->listen.web_config = arg;
		return 0;
	case 'o':
	case OPT_EXPORT ... OPT_EXPORT_LAST:
	case OPT_PPROF_DIR:
		if (!*arg) {
			pr_err("invalid value '' for --%s: expected a %s name", option_name(opt),
			       opt == OPT_PPROF_DIR ? "directory" : "file");
			return -EINVAL;
		}
		if (opt == 'o')
			opts->output = arg;
		else if (opt == OPT_PPROF_DIR)
			opts->pprof_dir = arg;
		else
			opts->exports[opt - OPT_EXPORT] = arg;
		return 0;
	case OPT_PPROF_KEEP:
		if (parse_uint(arg, 1, 1000000, &v))
			return bad_value("--pprof-keep", arg,
					 "a number of files from 1 to 1000000");
		opts->pprof_keep = v;
		return 0;
	case 'v':
		opts->verbose++;
		return 0;
	}
	return -EINVAL;
}

bool options__multi_proc(const struct options *opts)
{
	return opts->nr_pids > 1 || opts->follow_forks || opts->all;
}

/* --all's cap: sixteen processes at it fill the live-allocation map. */
#define ALL_MAX_PER_PROC 65536

/* --cgroup and --comm narrow --all: the rest of the checks see --all. */
static int check_choice(struct options *opts)
{
	if (!proc_choice__narrows(&opts->choice))
		return 0;
	if (opts->all || opts->nr_pids || opts->argv) {
		pr_err("--cgroup and --comm choose the processes: give no --all, -p PID or "
		       "command with them");
		return -EINVAL;
	}
	opts->all = true;
	return 0;
}

static int check_target(struct options *opts)
{
	if (check_choice(opts))
		return -EINVAL;
	if (opts->filter.max_size && opts->filter.min_size > opts->filter.max_size) {
		pr_err("--min-size is larger than --max-size: no block could count");
		return -EINVAL;
	}
	if (opts->big_only && !opts->big) {
		pr_err("--big-only needs --big SIZE: the smallest block to see");
		return -EINVAL;
	}
	if (opts->big_only && (opts->sample || opts->alloc.mmap)) {
		pr_err("--big-only takes neither --sample nor --mmap: it probes no allocator");
		return -EINVAL;
	}
	if (opts->growth && (opts->big_only || opts->sample || opts->alloc.mmap || opts->all ||
			     opts->filter.min_age)) {
		pr_err("--growth takes none of --big-only, --sample, --mmap, --all, --min-age: "
		       "it counts pages, not allocations");
		return -EINVAL;
	}
	/* A verdict needs every block: one not tracked would count as a root. */
	if (opts->leak_check && (opts->big_only || opts->growth || opts->sample || opts->all)) {
		pr_err("--leak-check needs every block of named processes: "
		       "not with --big-only, --growth, --sample or --all");
		return -EINVAL;
	}
	if (opts->listen.web_config && !opts->listen.text) {
		pr_err("--web-config secures the endpoint of --listen ADDR:PORT: give it too");
		return -EINVAL;
	}
	if (opts->pprof_keep && !opts->pprof_dir) {
		pr_err("--pprof-keep bounds the files of --pprof-dir DIR: give it too");
		return -EINVAL;
	}
	if (!opts->pprof_keep)
		opts->pprof_keep = PPROF_DIR_KEEP;
	if (opts->all && (opts->nr_pids || opts->argv)) {
		pr_err("--all traces every process: give no -p PID or command with it");
		return -EINVAL;
	}
	if (opts->nr_pids && opts->argv) {
		pr_err("give either -p PID or a command, not both");
		return -EINVAL;
	}
	if (!opts->nr_pids && !opts->argv && !opts->all) {
		pr_err("nothing to trace: give -p PID, -- COMMAND, --all, --cgroup or --comm "
		       "(see --help)");
		return -EINVAL;
	}
	if (opts->max_per_proc && !options__multi_proc(opts)) {
		pr_err("--max-per-process caps each of several processes: give it with "
		       "-p PID,PID..., --follow-forks or --all");
		return -EINVAL;
	}
	if (opts->all && !opts->max_per_proc)
		opts->max_per_proc = ALL_MAX_PER_PROC;
	return 0;
}

int options__parse(struct options *opts, int argc, char **argv)
{
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
	opterr = 0;
	/* '+': the first word that is not an option starts the command. */
	while ((opt = getopt_long(argc, argv, "+:p:i:n:T:o:vhV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			return 1;
		case 'V':
			printf("alloctrace %s\n", VERSION);
			return 1;
		case ':':
			pr_err("option %s needs a value (see --help)", argv[optind - 1]);
			return -EINVAL;
		case '?':
			pr_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		err = parse_one(opts, opt, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		opts->argv = &argv[optind];
	return check_target(opts);
}
