/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Fixtures the report and exporter tests share: symbolized frames of a
 * made-up "leaky" program, its first stacks, and the final report around
 * a test's own stacks.
 */
#ifndef TEST_FIXTURES_H
#define TEST_FIXTURES_H

#include "report/report.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED	      __attribute__((unused))

/* leak_a called by helper, inlined into main at one return address. */
#define LEAKY_ID "0123456789abcdef0123456789abcdef01234567"

static const struct frame_info frames_a[] = {
    {.addr = 0x555555555189,
     .module = "/usr/bin/leaky",
     .offset = 0x1189,
     .function = "leak_a",
     .function_offset = 0x1d,
     .file = "leak.c",
     .line = 42,
     .build_id = LEAKY_ID},
    {.addr = 0x5555555551a0,
     .module = "/usr/bin/leaky",
     .offset = 0x11a0,
     .function = "helper",
     .file = "leak.h",
     .line = 10,
     .inlined = true,
     .build_id = LEAKY_ID},
    {.addr = 0x5555555551a0,
     .module = "/usr/bin/leaky",
     .offset = 0x11a0,
     .function = "main",
     .function_offset = 0x40,
     .file = "leak.c",
     .line = 80,
     .build_id = LEAKY_ID},
};

/* Another stack id with the same functions: another call site in leak_a. */
static const struct frame_info frames_a2[] = {
    {.addr = 0x5555555551f0,
     .module = "/usr/bin/leaky",
     .offset = 0x11f0,
     .function = "leak_a",
     .function_offset = 0x84,
     .file = "leak.c",
     .line = 44,
     .build_id = LEAKY_ID},
    {.addr = 0x5555555551a0,
     .module = "/usr/bin/leaky",
     .offset = 0x11a0,
     .function = "helper",
     .file = "leak.h",
     .line = 10,
     .inlined = true,
     .build_id = LEAKY_ID},
    {.addr = 0x5555555551a0,
     .module = "/usr/bin/leaky",
     .offset = 0x11a0,
     .function = "main",
     .function_offset = 0x40,
     .file = "leak.c",
     .line = 80,
     .build_id = LEAKY_ID},
};

/* No name in libc; a caller in no mapping. */
static const struct frame_info frames_b[] = {
    {.addr = 0x7f0012345678, .module = "/lib/x86_64-linux-gnu/libc.so.6", .offset = 0x27678},
    {.addr = 0x7f00deadbeef},
};

/*
 * Stacks 1 to 4 of the made-up program, for a test's array to begin with:
 * frames_a holding 1 MiB, frames_a2 4 KiB, frames_b 1.5 KiB, and one of no
 * frames 100 bytes. A row a stack, by hand.
 */
/* clang-format off */
#define LEAKY_STACKS                                                                               \
	{.stack_id = 1, .outstanding_bytes = 1048576, .outstanding_allocs = 10, .allocs = 10,      \
	 .alloc_bytes = 2097152, .nr_frames = ARRAY_SIZE(frames_a), .frames = frames_a},           \
	{.stack_id = 2, .outstanding_bytes = 4096, .outstanding_allocs = 2, .allocs = 5,           \
	 .alloc_bytes = 10240, .nr_frames = ARRAY_SIZE(frames_a2), .frames = frames_a2},           \
	{.stack_id = 3, .outstanding_bytes = 1536, .outstanding_allocs = 1, .allocs = 3,           \
	 .alloc_bytes = 4608, .nr_frames = ARRAY_SIZE(frames_b), .frames = frames_b},              \
	{.stack_id = 4, .outstanding_bytes = 100, .outstanding_allocs = 1, .allocs = 1,            \
	 .alloc_bytes = 100, .nr_frames = 0, .frames = NULL}
/* clang-format on */

/* The final report of pid 1234 (leaky) holding @stacks_ (an array). */
#define FINAL_REPORT(stacks_, totals_)                                                             \
	{                                                                                          \
		.final = true, .time = 1700000000.25, .pid = 1234, .comm = "leaky",                \
		.totals = (totals_), .nr_stacks = ARRAY_SIZE(stacks_),                             \
		.nr_holding = ARRAY_SIZE(stacks_), .stacks = (stacks_),                            \
	}

#endif
