// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libplugin.so, loaded by unwind.cc with dlopen after tracing started.
 * Built with -O2 -fomit-frame-pointer -g. Its constructor allocates and
 * frees, which is when the tracer first meets its code; plugin_leak()
 * then leaks 3 blocks of 2,222 bytes from plugin_inner.
 */
#include <stdlib.h>
#include "clobber_fp.h"

#define NOINLINE __attribute__((noinline))

static void *kept[3];

__attribute__((constructor)) static void plugin_init(void)
{
	void *p = malloc(100);

	/* Seen, so that the compiler keeps the pair. */
	asm volatile("" : : "r"(p) : "memory");
	free(p);
}

NOINLINE void plugin_inner(void)
{
	for (int i = 0; i < 3; i++)
		kept[i] = malloc(2222);
	asm volatile("" : : "r"(kept) : "memory");
}

NOINLINE void plugin_leak(void)
{
	long fp;

	clobber_fp(fp);
	plugin_inner();
	restore_fp(fp);
}
