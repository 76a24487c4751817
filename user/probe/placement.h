/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PLACEMENT_H
#define ALLOCTRACE_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

/* How much of a function placement__x86() may read: its span plus one instruction. */
#define PLACEMENT_CODE_MAX 48

/*
 * Where in an x86-64 function, of which @len bytes are at @code, an entry
 * probe costs least and still sees every call with its arguments: an
 * offset from the function's start, 0 when unsure. Says why in @why, of
 * @size bytes, for --verbose.
 */
uint64_t placement__x86(const uint8_t *code, size_t len, char *why, size_t size);

#endif
