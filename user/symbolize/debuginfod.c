// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The environment libdebuginfod reads, set once before the first lookup
 * so that a debuginfod server (DEBUGINFOD_URLS) can neither hold the
 * reports nor write into another user's home.
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbolize/debuginfod.h"

/*
 * libdebuginfod waits 90 s for a server's first byte, then tries twice
 * more: a server that takes connections and never answers would hold a
 * report minutes per object. Bounded unless the user chose otherwise;
 * the traced command, started before any symbolizer, keeps its own
 * environment.
 */
static void debuginfod__bound_wait(void)
{
	setenv("DEBUGINFOD_TIMEOUT", "10", 0);
	setenv("DEBUGINFOD_RETRY_LIMIT", "0", 0);
}

/*
 * libdebuginfod keeps what it fetches in DEBUGINFOD_CACHE_PATH, else
 * under $XDG_CACHE_HOME or ~/.cache. Run by sudo with the user's HOME kept
 * (sudo -E, env_keep), that would fill the user's home with files of
 * root's, which the user's own debuggers could then not update: our own
 * user's home instead. libdebuginfod 0.188 makes its directory but not
 * ~/.cache, and fetches nothing without it, as in a fresh root's home.
 */
static void debuginfod__cache_path(void)
{
	static const char client[] = "/debuginfod_client";
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];
	struct passwd *pw;
	struct stat st;
	size_t cut;
	int n;

	if (getenv("DEBUGINFOD_CACHE_PATH") || (xdg && *xdg))
		return;
	if (!home || stat(home, &st) || st.st_uid != geteuid()) {
		pw = getpwuid(geteuid());
		if (!pw)
			return;
		home = pw->pw_dir;
	}
	n = snprintf(dir, sizeof(dir), "%s/.cache%s", home, client);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return;
	cut = (size_t)n - (sizeof(client) - 1);
	dir[cut] = '\0';
	mkdir(dir, 0700);
	dir[cut] = '/';
	setenv("DEBUGINFOD_CACHE_PATH", dir, 1);
}

void debuginfod__setup(void)
{
	/* libdw asks debuginfod only with DEBUGINFOD_URLS. */
	if (!getenv("DEBUGINFOD_URLS"))
		return;
	debuginfod__bound_wait();
	debuginfod__cache_path();
}
