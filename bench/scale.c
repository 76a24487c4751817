// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * scale: a target that holds many live blocks from many distinct stacks.
 *
 *   scale BLOCKS STACKS READYFILE
 *
 * Allocates BLOCKS x 64 bytes, block i from call path i % STACKS, creates
 * READYFILE, then sleeps holding them all until it is killed. A path is a
 * chain of calls through level(), one per decimal digit of its number,
 * each digit picking one of ten call sites: ten sites per level and
 * log10(STACKS) levels give STACKS distinct stacks of equal depth.
 *
 * Built with -O0 so that no two call sites are merged, and with frame
 * pointers so that the kernel's stack walk sees every level.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Each case is its own call instruction, hence its own return address. */
static NOINLINE void *level(int depth, long path)
{
	if (depth == 0)
		return malloc(64);
	switch (path % 10) {
	case 0:
		return level(depth - 1, path / 10);
	case 1:
		return level(depth - 1, path / 10);
	case 2:
		return level(depth - 1, path / 10);
	case 3:
		return level(depth - 1, path / 10);
	case 4:
		return level(depth - 1, path / 10);
	case 5:
		return level(depth - 1, path / 10);
	case 6:
		return level(depth - 1, path / 10);
	case 7:
		return level(depth - 1, path / 10);
	case 8:
		return level(depth - 1, path / 10);
	default:
		return level(depth - 1, path / 10);
	}
}

static int digits(long n)
{
	int d = 0;

	for (long span = 1; span < n; span *= 10)
		d++;
	return d;
}

int main(int argc, char **argv)
{
	long blocks, stacks;
	void **kept;
	int depth, fd;

	if (argc != 4 || (blocks = atol(argv[1])) <= 0 || (stacks = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: scale BLOCKS STACKS READYFILE\n");
		return 2;
	}
	depth = digits(stacks);
	kept = calloc(blocks, sizeof(*kept));
	if (!kept)
		return 1;
	for (long i = 0; i < blocks; i++) {
		kept[i] = level(depth, i % stacks);
		if (!kept[i])
			return 1;
	}
	fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}
	close(fd);
	for (;;)
		pause();
}
