// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cli/: options__parse() on command lines good and bad (its result, the
 * exit status main() makes of it and the one line it prints), and
 * options__config()'s mapping to the BPF side's settings. No root needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/options.h"

static struct options opts;
static char err_line[512];

/* Parse "alloctrace ARGS...", NULL-terminated, keeping stderr's text in err_line. */
static int parse(const char *first, ...)
{
	static char *argv[64];
	FILE *errs = tmpfile();
	int argc = 0, saved, ret;
	va_list ap;

	argv[argc++] = "alloctrace";
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	assert_non_null(errs);
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(errs), 2);
	optind = 0; /* getopt starts afresh */
	ret = options__parse(&opts, argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(errs);
	err_line[0] = '\0';
	if (!fgets(err_line, sizeof(err_line), errs))
		err_line[0] = '\0';
	/* One line, not more. */
	assert_int_equal(fgetc(errs), EOF);
	fclose(errs);
	return ret;
}

static void assert_bad(int ret, const char *line)
{
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(options__exit_code(ret), EXIT_USAGE);
	assert_string_equal(err_line, line);
}

static void test_defaults_and_pids(void **state)
{
	struct alloctrace_config cfg;

	assert_int_equal(parse("-p", "12,34", "-p", "56", NULL), 0);
	assert_int_equal(opts.nr_pids, 3);
	assert_int_equal(opts.pids[2], 56);
	assert_true(opts.interval == 5);
	assert_int_equal(opts.top, 10);
	assert_int_equal(opts.top_procs, 10);
	assert_int_equal(opts.format, FORMAT_TEXT);
	assert_int_equal(opts.pprof_keep, 60);
	assert_string_equal(err_line, "");
	options__config(&opts, 12, NULL, &cfg);
	assert_true(cfg.multi_proc);
	assert_int_equal(cfg.targ_tgid, 0);
	assert_int_equal(cfg.self_tgid, getpid());
	assert_int_equal(cfg.stack_depth, DEFAULT_STACK_DEPTH);
	assert_false(cfg.trace_all);
	assert_false(cfg.block_ages);
}

static void test_values(void **state)
{
	assert_int_equal(parse("-i", "0.5", "-n", "3", "-T", "0", "--big", "8M", "--format", "json",
			       "--max-depth", "20", "--sample", "512K", "--min-size", "4K",
			       "--max-size", "1M", "--tid", "77", "--show-data", "16",
			       "--max-allocs", "1000", "--ringbuf-size", "1M", "--listen",
			       "[::1]:9464", "-o", "out", "--folded", "f", "--pprof", "p",
			       "--pprof-dir", "d", "--pprof-keep", "5", "--thread-name", "^work",
			       "--unwind", "fp", "--mmap", "-vv", "--", "/bin/true", "-x", NULL),
			 0);
	assert_true(opts.interval == 0.5);
	assert_int_equal(opts.count, 3);
	assert_int_equal(opts.top, 0);
	assert_int_equal(opts.big, 8 << 20);
	assert_int_equal(opts.format, FORMAT_JSON);
	assert_int_equal(opts.stack_depth, 20);
	assert_int_equal(opts.sample, 512 << 10);
	assert_int_equal(opts.filter.min_size, 4096);
	assert_int_equal(opts.filter.max_size, 1 << 20);
	assert_int_equal(opts.filter.tid, 77);
	assert_int_equal(opts.show_data, 16);
	assert_int_equal(opts.maps.allocs, 1000);
	assert_int_equal(opts.maps.ringbuf, 1 << 20);
	assert_string_equal(opts.listen.text, "[::1]:9464");
	assert_string_equal(opts.output, "out");
	assert_string_equal(opts.exports[EXPORT_FOLDED], "f");
	assert_null(opts.exports[EXPORT_FOLDED_COUNT]);
	assert_string_equal(opts.exports[EXPORT_PPROF], "p");
	assert_string_equal(opts.pprof_dir, "d");
	assert_int_equal(opts.pprof_keep, 5);
	assert_string_equal(opts.filter.thread_name, "^work");
	assert_false(opts.unwind_cfi);
	assert_true(opts.alloc.mmap);
	assert_int_equal(opts.verbose, 2);

	assert_string_equal(opts.argv[0], "/bin/true");
	assert_string_equal(opts.argv[1], "-x");
	assert_null(opts.argv[2]);

	assert_int_equal(parse("--leak-check", "--leak-check-wrapper", "my_malloc:24",
			       "--leak-check-wrapper", "hdr_alloc:16", "-p", "1", NULL),
			 0);
	assert_int_equal(opts.nr_leak_wrappers, 2);
	assert_int_equal(leak_wrapper__offset(opts.leak_wrappers, 2, "my_malloc"), 24);
	assert_int_equal(leak_wrapper__offset(opts.leak_wrappers, 2, "hdr_alloc"), 16);
	assert_false(opts.no_leak_learning);
	assert_int_equal(parse("--leak-check", "--leak-check-wrapper", "none", "-p", "1", NULL), 0);
	assert_true(opts.no_leak_learning);
	assert_int_equal(opts.nr_leak_wrappers, 0);
}

static void test_config(void **state)
{
	struct cgroup_ref cg = {.id = 99, .level = 3};
	struct alloctrace_config cfg;

	assert_int_equal(parse("--comm", "nginx", "--min-age", "2", "--max-depth", "9", NULL), 0);
	assert_true(opts.all);
	assert_int_equal(opts.max_per_proc, 65536);
	options__config(&opts, 0, &cg, &cfg);
	assert_true(cfg.trace_all);
	assert_true(cfg.multi_proc);
	assert_true(cfg.follow_forks);
	assert_true(cfg.block_ages);
	assert_int_equal(cfg.stack_depth, 9);
	assert_int_equal(cfg.max_per_proc, 65536);
	/* The name and its NUL count, the rest of the 16 bytes does not. */
	assert_memory_equal(cfg.comm, "nginx\0\0\0\0\0\0\0\0\0\0\0", 16);
	assert_memory_equal(cfg.comm_mask, "\xff\xff\xff\xff\xff\xff\0\0\0\0\0\0\0\0\0\0", 16);
	assert_int_equal(cfg.cgroup_id, 99);
	assert_int_equal(cfg.cgroup_level, 3);

	assert_int_equal(parse("--growth", "--big", "1G", "--unwind", "fp", "--", "x", NULL), 0);
	options__config(&opts, 4321, NULL, &cfg);
	assert_int_equal(cfg.targ_tgid, 4321);
	assert_false(cfg.multi_proc);
	assert_true(cfg.growth);
	assert_false(cfg.unwind_cfi);
	assert_int_equal(cfg.big_threshold, 1ULL << 30);
	assert_int_equal(cfg.sample_rate, 0);
	assert_int_equal(cfg.cgroup_id, 0);
	assert_int_equal(cfg.comm_mask[0] | cfg.comm_mask[1], 0);

	/* A task's name holds 15 bytes and its NUL: all 16 count. */
	assert_int_equal(parse("--comm", "postgres-worker", NULL), 0);
	options__config(&opts, 0, NULL, &cfg);
	assert_memory_equal(cfg.comm, "postgres-worker\0", 16);
	assert_int_equal(cfg.comm_mask[0] & cfg.comm_mask[1], ~0ULL);
}

static void test_bad(void **state)
{
	assert_bad(
	    parse("-i", "0", "-p", "1", NULL),
	    "alloctrace: invalid value '0' for --interval: expected seconds between 0.01 and "
	    "86400\n");
	assert_bad(parse("-p", "1,x", NULL),
		   "alloctrace: invalid value '1,x' for --pid: expected process ids separated by "
		   "commas\n");
	assert_bad(parse("-p", "1,1", NULL),
		   "alloctrace: invalid value '1,1' for --pid: pid 1 is given twice\n");
	assert_bad(parse("--max-depth", "128", "-p", "1", NULL),
		   "alloctrace: invalid value '128' for --max-depth: expected a number of frames "
		   "from 1 to 127\n");
	assert_bad(parse("--max-stacks", "0", "-p", "1", NULL),
		   "alloctrace: invalid value '0' for --max-stacks: expected a number from 1 to "
		   "67108864\n");
	assert_bad(parse("--html", "", "-p", "1", NULL),
		   "alloctrace: invalid value '' for --html: expected a file name\n");
	assert_bad(parse("--module", "(", "-p", "1", NULL),
		   "alloctrace: invalid value '(' for --module: not a regular expression "
		   "(Unmatched ( or \\()\n");
	assert_bad(parse("--frobnicate", NULL),
		   "alloctrace: unknown option '--frobnicate' (see --help)\n");
	assert_bad(parse("-p", NULL), "alloctrace: option -p needs a value (see --help)\n");
	assert_bad(parse("--big-only", "-p", "1", NULL),
		   "alloctrace: --big-only needs --big SIZE: the smallest block to see\n");
	assert_bad(parse(NULL),
		   "alloctrace: nothing to trace: give -p PID, -- COMMAND, --all, --cgroup or "
		   "--comm (see --help)\n");
	assert_bad(parse("--leak-check", "--leak-check-wrapper", "my_malloc", "-p", "1", NULL),
		   "alloctrace: invalid value 'my_malloc' for --leak-check-wrapper: expected "
		   "FUNCTION:OFFSET, OFFSET from 1 to 4096, or none\n");
	assert_bad(parse("--leak-check-wrapper", "my_malloc:24", "-p", "1", NULL),
		   "alloctrace: --leak-check-wrapper tells --leak-check of a wrapper: give it "
		   "too\n");
	assert_bad(parse("--all", "-p", "1", NULL),
		   "alloctrace: --all traces every process: give no -p PID or command with it\n");
}

/* Each row of export/kinds.def is an option that sets its kind's file alone. */
static void test_export_options(void **state)
{
	static const char *const names[NR_EXPORTS] = {
#define EXPORT_KIND(id, option, ctor, ops, help) [EXPORT_##id] = "--" option,
#include "export/kinds.def"
#undef EXPORT_KIND
	};

	for (int kind = 0; kind < NR_EXPORTS; kind++) {
		assert_int_equal(parse(names[kind], "out", "-p", "1", NULL), 0);
		for (int other = 0; other < NR_EXPORTS; other++) {
			if (other == kind)
				assert_string_equal(opts.exports[other], "out");
			else
				assert_null(opts.exports[other]);
		}
	}
}

static void test_help_and_version(void **state)
{
	FILE *out = tmpfile();
	char line[256];
	int saved, ret, lines = 0, found = 0;

	fflush(stdout);
	saved = dup(1);
	dup2(fileno(out), 1);
	ret = parse("--help", NULL);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(ret, 1);
	assert_int_equal(options__exit_code(ret), EXIT_OK);
	rewind(out);
	while (fgets(line, sizeof(line), out)) {
		lines++;
		found +=
		    !strcmp(line, "  -p, --pid PID[,PID...] trace running processes (-p may be "
				  "repeated)\n") ||
		    !strcmp(line, "      --max-unwind-rows N  most rows of CFI unwind tables, "
				  "every object's together\n") ||
		    !strcmp(line, "      --allocator PATH[:PREFIX]\n") ||
		    !strcmp(line, "                         instead of the one symbol lookup "
				  "finds\n");
	}
	fclose(out);
	assert_int_equal(found, 4);
	/* A line each export kind's option. */
	assert_int_equal(lines, 87 + NR_EXPORTS);
	assert_int_equal(parse("-V", NULL), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_and_pids),
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_bad),
	    cmocka_unit_test(test_export_options),
	    cmocka_unit_test(test_help_and_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
