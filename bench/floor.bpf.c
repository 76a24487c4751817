// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor: probes that do nothing. What a malloc/free pair costs with
 * them attached is the price of the uprobe mechanism alone (breakpoint,
 * trap, BPF dispatch, return trampoline), which no tracer built on
 * uprobes at the same places can beat.
 *
 * Two switches add one piece of a tracker's work each, so that the
 * benchmark can tell what costs what: walk_stack takes the user stack at
 * malloc's return the way alloctrace does, track_live keeps a live-block
 * hash map (insert at malloc's return, lookup and delete at free).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define WALK_DEPTH 64 /* alloctrace's default --max-depth */

const volatile bool walk_stack = false;
const volatile bool track_live = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[WALK_DEPTH]);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 20);
	__type(key, __u64);
	__type(value, __u64);
} live SEC(".maps");

SEC("uprobe")
int malloc_enter(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(malloc_return, __u64 addr)
{
	__u32 zero = 0;
	__u64 *ips, size = 64;

	if (walk_stack) {
		ips = bpf_map_lookup_elem(&scratch, &zero);
		if (ips)
			bpf_get_stack(ctx, ips, WALK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
	}
	if (track_live && addr)
		bpf_map_update_elem(&live, &addr, &size, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(free_enter, __u64 addr)
{
	if (track_live && addr && bpf_map_lookup_elem(&live, &addr))
		bpf_map_delete_elem(&live, &addr);
	return 0;
}

/*
 * floor sites --session: the probes of a sampling tracer on 6.13+, all
 * uprobe_multi links as alloctrace makes them. An allocating function's
 * session runs at entry and never asks for the return (1); the others
 * are plain entries.
 */
SEC("uprobe")
int site_session(void *ctx)
{
	return 1;
}

SEC("uprobe")
int site_multi(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
