/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_JSON_H
#define ALLOCTRACE_JSON_H

#include <stdio.h>

/*
 * Write @s as a JSON string, or null when @s is NULL. The output is valid
 * JSON whatever @s holds: bytes that are not UTF-8 become \ufffd. Write
 * errors are left on the stream, for ferror().
 */
void json__string(FILE *f, const char *s);

#endif
