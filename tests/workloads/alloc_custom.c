// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_custom: an executable that is its own allocator. It defines and
 * exports malloc, free, calloc and realloc (a free-list allocator on a
 * static arena), so symbol lookup, which starts at the executable, finds
 * them there: libc's own calls to malloc (strdup here) land in them too.
 *
 *   leak_malloc     20 x malloc(200)                        = 4000 bytes
 *   leak_calloc      3 x calloc(7, 100)                     = 2100
 *   leak_realloc     4 x 50 -> 300 -> 900 (realloc)         = 3600
 *   leak_strdup      2 x strdup of 11 characters, by libc   =   24
 *   churn           10,000 malloc/free pairs                =    0
 *
 * In all 9,724 bytes in 29 blocks; 10,037 allocation calls (realloc
 * included), 10,008 releases. Nothing else allocates: no stdio, no
 * threads, no dlopen (glibc would then also want memalign and friends,
 * which this allocator leaves out).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_PREFIX
#include "arena_alloc.h"
#include "workload.h"

//* Only the last realloc's call site holds the blocks. */
NOINLINE void leak_realloc(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = malloc(50);

		p = realloc(p, 300);
		p = realloc(p, 900);
		keep(p);
	}
}

/*
 * libc's strdup calls malloc, which is this executable's. strdup has no
 * frame pointer, so the walk from malloc skips its caller (dup_string):
 * the tests look for leak_strdup anywhere in the stack.
 */
NOINLINE static char *dup_string(const char *s)
{
	return strdup(s);
}

NOINLINE void leak_strdup(void)
{
	for (int i = 0; i < 2; i++)
		keep(dup_string("eleven char"));
}

int main(void)
{
	leak_malloc(20, 200);
	leak_calloc(3, 7, 100);
	leak_realloc();
	leak_strdup();
	churn();
	return 0;
}
