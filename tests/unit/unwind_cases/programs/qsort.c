// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An allocation in a callback of libc's qsort: the walk goes through libc's frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *copies[4];
static int nr_copies;

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (nr_copies < 4)
		copies[nr_copies++] = strdup("a comparison");
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int values[] = {5, 3, 9, 1, argc};

	qsort(values, sizeof(values) / sizeof(*values), sizeof(*values), by_value);
	printf("%d %s\n", values[0], copies[0]);
	return 0;
}
