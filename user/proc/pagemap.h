/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PAGEMAP_H
#define ALLOCTRACE_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum page_state {
	PAGE_GONE, /* neither in memory nor in swap: unmapped or given back */
	PAGE_RESIDENT,
	PAGE_SWAPPED,
};

/*
 * The state of each of @n pages of process @pid at @addrs (page aligned,
 * ascending) into @states, from /proc/PID/pagemap: one read per run of
 * consecutive pages. 0 or -errno (-ESRCH: the process is gone, or has
 * exited and is not reaped yet).
 */
int pagemap__states(pid_t pid, const uint64_t *addrs, size_t n, enum page_state *states);

#endif
