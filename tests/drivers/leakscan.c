// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The leak-check engine on a real process, without the BPF side: runs
 * PROGRAM, takes the blocks it prints ("block ADDR SIZE FUNCTION" lines
 * up to "ready", and "pid PID" if PROGRAM is a wrapper) as the tracked ones, scans it, and prints
 * per function and class "FUNCTION CLASS BYTES BLOCKS", then the pause and scan times and
 * "heuristic NAME BYTES BLOCKS" for each of valgrind's heuristics (all on). Usage:
 * leakscan [--no-fork] PROGRAM [ARGS...]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "leakcheck/leakcheck.h"
#include "lib/util.h"

struct tracked {
	struct leak_block b;
	char fn[64];
};

static struct tracked *blocks;
static size_t nr_blocks, cap_blocks;

static int collect(void *ctx, struct leakcheck *lc)
{
	size_t i;
	int err = 0;

	for (i = 0; i < nr_blocks && !err; i++)
		err = leakcheck__add_block(lc, &blocks[i].b);
	return err;
}

static pid_t launch(char **argv, FILE **out, int *in)
{
	int o[2], i[2];
	pid_t pid;

	if (pipe(o) || pipe(i))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(i[0], 0);
		close(o[0]);
		close(i[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(o[1]);
	close(i[0]);
	*out = fdopen(o[0], "r");
	*in = i[1];
	return pid;
}

/* The blocks, and the pid of the process that has them (PROGRAM may be a wrapper). */
static int read_blocks(FILE *out, pid_t *pid)
{
	char line[256];
	unsigned long long addr, size;

	while (fgets(line, sizeof(line), out)) {
		if (!strcmp(line, "ready\n"))
			return 0;
		sscanf(line, "pid %d", pid);
		blocks = array__grow(blocks, &cap_blocks, nr_blocks, sizeof(*blocks));
		if (!blocks)
			return -ENOMEM;
		if (sscanf(line, "block %llx %llu %63s", &addr, &size, blocks[nr_blocks].fn) == 3) {
			blocks[nr_blocks].b =
			    (struct leak_block){.addr = addr, .size = size, .id = nr_blocks};
			nr_blocks++;
		}
	}
	return -EIO;
}

/* FUNCTION CLASS BYTES BLOCKS, one line per pair present. */
static void print_classes(const struct leakcheck *lc)
{
	size_t i, j;
	uint64_t bytes, n;
	int cls;

	for (i = 0; i < nr_blocks; i++) {
		for (j = 0; j < i && strcmp(blocks[j].fn, blocks[i].fn); j++)
			;
		if (j < i)
			continue;
		for (cls = 0; cls < LEAK_CLASSES; cls++) {
			bytes = n = 0;
			for (j = 0; j < leakcheck__nr_blocks(lc); j++) {
				if (strcmp(blocks[leakcheck__block(lc, j)->id].fn, blocks[i].fn) ||
				    (int)leakcheck__class(lc, j) != cls)
					continue;
				bytes += leakcheck__block(lc, j)->size;
				n++;
			}
			if (n)
				printf("%s %s %llu %llu\n", blocks[i].fn, leak_class__name(cls),
				       (unsigned long long)bytes, (unsigned long long)n);
		}
	}
}

static void print_stats(const struct leakcheck *lc)
{
	const struct leakcheck_stats *st = leakcheck__stats(lc);

	printf("threads %u\npause_us %.1f\nclone_us %.1f\nreap_pause_us %.1f\nscan_ms %.2f\n",
	       st->threads, st->pause_ns / 1e3, st->clone_ns / 1e3, st->reap_pause_ns / 1e3,
	       st->scan_ns / 1e6);
	printf("root_bytes %llu\nblock_bytes %llu\nassumptions 0x%x\n",
	       (unsigned long long)st->root_bytes, (unsigned long long)st->block_bytes,
	       st->assumptions);
	for (int h = LEAK_HEUR_NONE + 1; h < LEAK_HEUR_WRAPPER; h++)
		printf("heuristic %s %llu %llu\n", leak_heuristic__name(h),
		       (unsigned long long)st->heur_bytes[h],
		       (unsigned long long)st->heur_blocks[h]);
}

int main(int argc, char **argv)
{
	struct leakcheck_opts opts = {.heuristics = LEAK_HEUR_ALL}; /* valgrind's default */
	struct leakcheck *lc;
	int in, err, st, first = 1;
	FILE *out;
	pid_t child, pid;

	if (argc > 1 && !strcmp(argv[1], "--no-fork")) {
		opts.no_fork = true;
		first = 2;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: leakscan [--no-fork] PROGRAM [ARGS...]\n");
		return 2;
	}
	child = launch(argv + first, &out, &in);
	pid = child;
	if (child < 0 || read_blocks(out, &pid)) {
		fprintf(stderr, "leakscan: %s did not get ready\n", argv[first]);
		return 1;
	}
	lc = leakcheck__new(pid, &opts);
	err = lc ? leakcheck__run(lc, collect, NULL) : -errno;
	if (err)
		fprintf(stderr, "leakscan: scan of process %d failed: %s\n", pid, strerror(-err));
	else
		print_classes(lc), print_stats(lc);
	fflush(stdout);
	/* The target must still be alive and well: it exits 0 when stdin closes. */
	close(in);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "leakscan: target did not exit cleanly (status 0x%x)\n", st);
		err = err ?: -ECHILD;
	}
	leakcheck__free(lc);
	return err ? 1 : 0;
}
