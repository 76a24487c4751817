/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_DEBUGFILE_H
#define ALLOCTRACE_DEBUGFILE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

/* Build ids are hashes, 20 bytes for SHA-1: a longer note is no build id. */
#define MAX_BUILD_ID 64

/*
 * The most .gnu_debugdata (MiniDebugInfo, an xz-compressed ELF file with
 * a .symtab) may inflate to, and the memory its decoder may take. Fedora's
 * largest, libxul's, inflates to about 10 MiB; libdwfl inflates it whole
 * into memory with no bound, so a 170 KB bomb would cost a gigabyte.
 */
#define DEBUGDATA_MAX	   (64u << 20)
#define DEBUGDATA_MEMLIMIT (32u << 20)

/*
 * libdwfl's callbacks: debug files by build id under /usr/lib/debug or
 * from debuginfod, and by .gnu_debuglink only in the object's directory
 * (in its process's root), its .debug and /usr/lib/debug. A module's
 * userdata is the descriptor of that root (debugfile__set_root).
 */
extern const Dwfl_Callbacks debugfile_callbacks;

/* @mod's debug links are looked up under @root_fd, kept open by the caller. */
void debugfile__set_root(Dwfl_Module *mod, int root_fd);

/* Taken by each symbolizer: the cache of failed lookups lives while one does. */
void debugfile__hold(void);
void debugfile__put(void);

/* In hex, as debuginfod and pprof name an object. 0 or -ENOENT. */
int module__build_id(Dwfl_Module *mod, char hex[2 * MAX_BUILD_ID + 1]);

/*
 * The name @elf's .gnu_debuglink gives, if it is a plain file name (no
 * '/', not "." nor ".."), with its CRC; else NULL.
 */
const char *elf__debuglink(Elf *elf, GElf_Word *crc);

/*
 * Whether @elf's .gnu_debugdata, if it has one, inflates within
 * DEBUGDATA_MAX with DEBUGDATA_MEMLIMIT: 0, -EFBIG, or -EBADMSG for one
 * that is no xz stream.
 */
int elf__check_debugdata(Elf *elf);

/* Say once per @path, on stderr, why its frames will lack names. */
void debugfile__warn_once(const char *path, const char *why);

#endif
