/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_HEURISTICS_H
#define ALLOCTRACE_HEURISTICS_H

#include <stdint.h>
#include "leakcheck/classify.h"
#include "proc/procmaps.h"

/*
 * valgrind memcheck's leak-check heuristics (mc_leakcheck.c): shapes of
 * block in which a pointer into the middle is how the program holds the
 * block, so that it counts as a start pointer.
 */
struct heuristics {
	unsigned int set; /* 1 << enum leak_heuristic, each one on */
	struct leak_memory mem;
	const struct proc_maps *maps; /* for the multipleinheritance vtables */
};

/*
 * The first heuristic of @h->set, in valgrind's order, by which interior
 * pointer @ptr holds block [@start, @start + @size), or LEAK_HEUR_NONE.
 */
enum leak_heuristic heuristics__match(const struct heuristics *h, uint64_t ptr, uint64_t start,
				      uint64_t size);

#endif
