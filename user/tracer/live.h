/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_LIVE_H
#define ALLOCTRACE_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "alloctrace.h"
#include "config.h"

/*
 * The loader's view of the live-allocation table, the BPF array its probes
 * place blocks in by open addressing (see bpf/alloctrace.bpf.c). A pass
 * maps it: it reads every slot and drops blocks without a syscall each,
 * with the same compare-and-swap the probes release blocks with.
 */
struct live_table;
struct bpf_map;

/* Slots of a table with room for @blocks: twice as many, a power of two. */
uint32_t live__slots(uint32_t blocks);

/* The loaded table @map. NULL with errno set. */
struct live_table *live_table__open(const struct bpf_map *map);
void live_table__free(struct live_table *lt);

/*
 * Call @fn for every live block; stops at its first non-zero return, which
 * it returns. 0 or -errno.
 */
typedef int (*live_fn)(void *ctx, const struct alloc_key *key, const struct alloc_info *info);
int live_table__for_each(struct live_table *lt, live_fn fn, void *ctx);

/* Release every block @keep rejects (NULL: every block). 0 or -errno. */
typedef bool (*live_keep_fn)(void *ctx, pid_t pid, uint32_t gen);
int live_table__drop(struct live_table *lt, live_keep_fn keep, void *ctx);

#endif
