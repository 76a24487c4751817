/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_DEMANGLE_H
#define ALLOCTRACE_DEMANGLE_H

/*
 * The readable form of a mangled C++ name ("_ZN3foo3barEi" gives
 * "foo::bar(int)"), or a copy of @name when it is not one. The caller
 * frees the result. Returns NULL with errno set on failure.
 */
char *demangle(const char *name);

#endif
