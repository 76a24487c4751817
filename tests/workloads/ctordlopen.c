// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loads libctorleak.so (beside this program) with dlopen, whose
 * constructor leaks as dlopen runs, and at once calls lib_alloc_now(),
 * which leaks 3 x 444 bytes from the library's code.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	void (*alloc_now)(void);
	void *lib;

	snprintf(dir, sizeof(dir), "%s", argv[0]);
	snprintf(path, sizeof(path), "%s/libctorleak.so", dirname(dir));
	lib = dlopen(path, RTLD_NOW);
	if (!lib)
		return 2;
	alloc_now = (void (*)(void))dlsym(lib, "lib_alloc_now");
	if (!alloc_now)
		return 3;
	alloc_now();
	return 0;
}
