// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the command line. The input split on NUL bytes is
 * argv[1..] (argv[0] is "alloctrace"); options__parse only parses, it
 * launches nothing. Each word is a heap block of its own so that ASan sees
 * a read past any of them. Also feeds every word to parse_size and
 * allocator_opts__parse_spec, and checks what a successful parse promises.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe/allocator.h"
#include "cli/options.h"

#define MAX_ARGS 64

/*
 * glibc's regcomp (for --thread-name and --module) takes memory exponential
 * in stacked repetitions: "a" and 20 '+' take 700 MB, 30 take all there is.
 * That is glibc's, reported once, not something to find again on every run:
 * words with braces or many repetition operators are left out.
 */
static bool regex_bomb(const char *word)
{
	int ops = 0;

	for (; *word; word++) {
		if (*word == '{')
			return true;
		ops += *word == '+' || *word == '*' || *word == '?';
	}
	return ops > 8;
}

/* Usage and error messages would flood the run: send stdio's streams to
 * /dev/null. Sanitizer and libFuzzer reports still reach fd 2. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	if (null && !getenv("FUZZ_VERBOSE")) {
		stdout = null;
		stderr = null;
	}
	return 0;
}

static void check_options(const struct options *o, int argc, char **argv)
{
	if (!!o->nr_pids + !!o->argv + o->all != 1 || o->nr_pids > MAX_PIDS)
		abort();
	for (size_t i = 0; i < o->nr_pids; i++) {
		if (o->pids[i] <= 0)
			abort();
	}
	if (o->argv && (o->argv < argv + 1 || o->argv >= argv + argc))
		abort();
	if (o->stack_depth < 1 || o->stack_depth > 127 || o->show_data > 256)
		abort();
	if (o->filter.max_size && o->filter.min_size > o->filter.max_size)
		abort();
	if (!(o->interval >= 0.01 && o->interval <= 86400))
		abort();
	if (o->maps.allocs > MAX_MAP_ENTRIES || o->maps.stacks > MAX_MAP_ENTRIES ||
	    o->maps.ringbuf > MAX_RINGBUF_SIZE || (o->maps.ringbuf & (o->maps.ringbuf - 1)))
		abort();
	if (o->alloc.path && !o->alloc.path[0])
		abort();
	if (o->alloc.prefix && strchr(o->alloc.prefix, '/'))
		abort();
}

static void parse_word(const char *word)
{
	struct allocator_opts alloc = {0};
	uint64_t size;
	char *copy;

	(void)parse_size(word, &size);
	copy = strdup(word);
	if (!copy)
		return;
	if (!allocator_opts__parse_spec(&alloc, copy) &&
	    (!alloc.path || !alloc.path[0] || (alloc.prefix && strchr(alloc.prefix, '/'))))
		abort();
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2];
	struct options opts;
	size_t pos = 0, len;
	int argc = 0, i, ret = -1;

	argv[argc++] = strdup("alloctrace");
	while (pos < size && argc <= MAX_ARGS) {
		const uint8_t *nul = memchr(data + pos, '\0', size - pos);

		len = nul ? (size_t)(nul - (data + pos)) : size - pos;
		argv[argc] = malloc(len + 1);
		if (!argv[argc])
			break;
		memcpy(argv[argc], data + pos, len);
		argv[argc][len] = '\0';
		argc++;
		pos += len + 1;
	}
	argv[argc] = NULL;

	for (i = 1; i < argc; i++) {
		if (regex_bomb(argv[i]))
			goto out;
	}
	for (i = 1; i < argc; i++)
		parse_word(argv[i]);

	optind = 0; /* glibc: a full reset of getopt's state */
	if (options__parse(&opts, argc, argv) == 0)
		check_options(&opts, argc, argv);
	ret = 0;
out:
	for (i = 0; i < argc; i++)
		free(argv[i]);
	return ret; /* -1: not worth keeping in the corpus */
}
