// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
#include <stdlib.h>
#include "lib/util.h"

void *array__grow(void *arr, size_t *cap, size_t nr, size_t size)
{
	size_t new_cap;

	if (nr < *cap)
		return arr;
	new_cap = *cap ? *cap * 2 : 16;
	arr = reallocarray(arr, new_cap, size);
	if (arr)
		*cap = new_cap;
	return arr;
}

int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t hash_str(const char *str)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 0x100000001b3ULL;
	return (size_t)(h ^ h >> 32);
}
