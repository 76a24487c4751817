/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_STRTAB_H
#define ALLOCTRACE_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/hashmap.h"

/* Zeroed, it is empty and ready: symbolizers are calloc()ed, debugfile's tables static. */
struct strtab {
	struct hashmap map; /* of char *, each owned and its own key */
};

/* @str's copy in @tab; NULL for a NULL @str or when out of memory. */
const char *strtab__intern(struct strtab *tab, const char *str);

/* The same for a symbol's name, demangled. */
const char *strtab__intern_symbol(struct strtab *tab, const char *name);

bool strtab__has(const struct strtab *tab, const char *str);
void strtab__release(struct strtab *tab);

#endif
