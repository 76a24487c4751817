// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: /proc/PID/maps text -> proc_maps__parse -> lookups.
 * Checks what the parser promises: on success every mapping has end > start,
 * the array is sorted by start, and a lookup returns a mapping holding the
 * address; on error the result is empty.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procmaps.h"

static void check_find(const struct proc_maps *m, uint64_t addr)
{
	const struct mapping *map = proc_maps__find(m, addr);

	if (map &&
	    (map < m->maps || map >= m->maps + m->nr || addr < map->start || addr >= map->end))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps m;
	uint64_t addr;
	char *copy;
	FILE *f;
	size_t i;
	int err;

	/* A copy of its own, so that ASan sees any read past the input. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	f = size ? fmemopen(copy, size, "r") : fopen("/dev/null", "r");
	if (!f) {
		free(copy);
		return 0;
	}
	err = proc_maps__parse(f, &m);
	fclose(f);
	if (err) {
		if (m.nr || m.maps)
			abort();
		free(copy);
		return 0;
	}
	for (i = 0; i < m.nr; i++) {
		const struct mapping *map = &m.maps[i];

		if (map->end <= map->start || (i && map->start < m.maps[i - 1].start))
			abort();
		if (map->path && !map->path[0])
			abort();
		(void)mapping__is_file(map);
		check_find(&m, map->start);
		check_find(&m, map->end - 1);
		check_find(&m, map->end);
		check_find(&m, map->start - 1);
	}
	check_find(&m, 0);
	check_find(&m, UINT64_MAX);
	/* And a few addresses taken from the input itself. */
	for (i = 0; i + sizeof(addr) <= size && i < 8 * sizeof(addr); i += sizeof(addr)) {
		memcpy(&addr, data + i, sizeof(addr));
		check_find(&m, addr);
	}
	proc_maps__release(&m);
	if (m.nr || m.maps)
		abort();
	free(copy);
	return 0;
}
