// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every string a symbolizer hands out, interned, so that frames stay valid
 * across refreshes.
 */
#include <stdlib.h>
#include <string.h>
#include "symbolize/demangle.h"
#include "symbolize/strtab.h"

/* NULL for a NULL @str or when out of memory: the frame just knows less. */
const char *strtab__intern(struct strtab *tab, const char *str)
{
	char **e, *copy;
	bool added;

	if (!str)
		return NULL;
	e = hashmap__find(&tab->map, &str);
	if (e)
		return *e;
	/* The key is the copy: the table must not point into the caller's string. */
	copy = strdup(str);
	if (!copy)
		return NULL;
	if (!tab->map.entry_size)
		tab->map = HASHMAP_INIT(sizeof(char *), sizeof(char *), hashmap_str_hash,
					hashmap_str_equal);
	e = hashmap__insert(&tab->map, &copy, &added);
	if (!e) {
		free(copy);
		return NULL;
	}
	return *e;
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
	return hashmap__find(&tab->map, &str) != NULL;
}

void strtab__release(struct strtab *tab)
{
	for (char **e = hashmap__next(&tab->map, NULL); e; e = hashmap__next(&tab->map, e))
		free(*e);
	hashmap__release(&tab->map);
}
