/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_UTIL_H
#define ALLOCTRACE_UTIL_H

#include <stddef.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Room for one more of @nr elements of @size in @arr, doubling *@cap as
 * needed. Returns the (maybe moved) array, or NULL with @arr untouched.
 */
void *array__grow(void *arr, size_t *cap, size_t nr, size_t size);

/* qsort's order of uint32_t values. */
int cmp_u32(const void *a, const void *b);

/* FNV-1a of a string, folded to size_t: for the string tables' buckets. */
size_t hash_str(const char *str);

/* A clock's reading in seconds (CLOCK_MONOTONIC for deadlines). */
static inline double clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
