// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every string a symbolizer hands out, interned, so that frames stay valid
 * across refreshes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/util.h"
#include "symbolize/demangle.h"
#include "symbolize/strtab.h"

static size_t strtab__slot(const struct strtab *tab, const char *str)
{
	size_t mask = tab->cap - 1, i;

	for (i = hash_str(str) & mask; tab->slots[i]; i = (i + 1) & mask)
		if (!strcmp(tab->slots[i], str))
			break;
	return i;
}

static int strtab__grow(struct strtab *tab)
{
	struct strtab bigger = {.cap = tab->cap ? tab->cap * 2 : 256, .nr = tab->nr};
	size_t i;

	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < tab->cap; i++)
		if (tab->slots[i])
			bigger.slots[strtab__slot(&bigger, tab->slots[i])] = tab->slots[i];
	free(tab->slots);
	*tab = bigger;
	return 0;
}

/* NULL for a NULL @str or when out of memory: the frame just knows less. */
const char *strtab__intern(struct strtab *tab, const char *str)
{
	size_t i;

	if (!str)
		return NULL;
	if (2 * (tab->nr + 1) > tab->cap && strtab__grow(tab))
		return NULL;
	i = strtab__slot(tab, str);
	if (!tab->slots[i]) {
		tab->slots[i] = strdup(str);
		if (!tab->slots[i])
			return NULL;
		tab->nr++;
	}
	return tab->slots[i];
}

const char *strtab__intern_symbol(struct strtab *tab, const char *name)
{
	const char *interned;
	char *readable;

	if (!name)
		return NULL;
	readable = demangle(name);
	if (!readable)
		return NULL;
	interned = strtab__intern(tab, readable);
	free(readable);
	return interned;
}

bool strtab__has(const struct strtab *tab, const char *str)
{
	return tab->cap && tab->slots[strtab__slot(tab, str)];
}

void strtab__release(struct strtab *tab)
{
	size_t i;

	for (i = 0; i < tab->cap; i++)
		free(tab->slots[i]);
	free(tab->slots);
	*tab = (struct strtab){0};
}
