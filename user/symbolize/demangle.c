// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/demangle.h"

/* From libstdc++ (<cxxabi.h> is C++ only). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
	char *out;
	int status;

	if (!name) {
		errno = EINVAL;
		return NULL;
	}
	/* Plain C names such as "Z" or "i" would otherwise demangle as types. */
	if (!strncmp(name, "_Z", 2)) {
		out = __cxa_demangle(name, NULL, NULL, &status);
		if (out)
			return out;
	}
	return strdup(name);
}
