// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stacks that a frame-pointer walk cannot get right. Built with -O2
 * -fomit-frame-pointer -g (see the Makefile): no function here keeps a
 * frame pointer, and stage_two zeroes the frame-pointer register (rbp,
 * x29) before it calls on, so the kernel's walk stops at once while the
 * CFI walk reaches main.
 *
 *   main -> stage_one -> stage_two -> [inlined] fill_cache -> make_records
 *   make_records: new char[4321], 7 times, kept: 30,247 bytes in 7 blocks
 *
 * Then, with "plugin": dlopen()s build/workloads/libplugin.so, which was
 * not mapped when tracing started, waits a second so its unwind tables
 * can be built, and calls plugin_leak() (see plugin.c).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "clobber_fp.h"

#define NOINLINE __attribute__((noinline))

static char *records[7];

NOINLINE void make_records(int n)
{
	for (int i = 0; i < n; i++)
		records[i] = new char[4321];
	/* A use after the calls, so that none of them is a tail call. */
	asm volatile("" : : "r"(records) : "memory");
}

static inline __attribute__((always_inline)) void fill_cache(int n)
{
	make_records(n);
	asm volatile("" : : : "memory");
}

NOINLINE void stage_two(int n)
{
	long fp;

	clobber_fp(fp);
	fill_cache(n);
	restore_fp(fp);
}

NOINLINE void stage_one(int n)
{
	stage_two(n);
	asm volatile("" : : : "memory");
}

static int run_plugin(const char *self)
{
	char path[4096];
	const char *slash = strrchr(self, '/');
	void *lib;
	void (*leak)(void);

	snprintf(path, sizeof(path), "%.*slibplugin.so", slash ? (int)(slash - self + 1) : 0,
		 self);
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "unwind: %s\n", dlerror());
		return 1;
	}
	sleep(1);
	leak = (void (*)(void))dlsym(lib, "plugin_leak");
	if (!leak)
		return 1;
	leak();
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	stage_one(7);
	if (argc > 1 && !strcmp(argv[1], "plugin"))
		rc = run_plugin(argv[0]);
	/* Not a tail call: main stays on the stack below run_plugin. */
	asm volatile("" : : : "memory");
	return rc;
}
