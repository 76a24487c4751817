// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bigpair: big blocks from whichever allocator symbol lookup gives the
 * program (glibc's, or jemalloc's with LD_PRELOAD=libjemalloc.so.2), so
 * that two of them traced together with -p A,B can be told apart:
 *
 *   big_4m      3 x malloc(4 MiB)   = 12,582,912 bytes
 *   leak_malloc 10 x malloc(100)    =      1,000
 *
 * Usage: bigpair DIR: create DIR/ready, wait for SIGUSR1, allocate,
 * create DIR/done, exit 0 on a second SIGUSR1 (or after 120 s).
 */
#include "handshake.h"
#include "workload.h"

#define MiB (1024 * 1024)

NOINLINE void big_4m(void)
{
	for (int i = 0; i < 3; i++)
		keep(malloc(4 * MiB));
}

int main(int argc, char **argv)
{
	time_t deadline = time(NULL) + 120;
	int err = handshake_start(argc, argv, deadline);

	if (err)
		return err;
	big_4m();
	leak_malloc(10, 100);
	touch(argv[1], "done");
	return wait_usr1(deadline) ? 1 : 0;
}
