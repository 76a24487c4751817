#!/bin/bash
# --big-only (issue #4): no uprobes at all; big blocks are seen where they
# reach the kernel, as anonymous mmap (glibc maps requests above its mmap
# threshold), with stacks that start at the code that asked. Sizes are the
# kernel's: the request plus the allocator's header, in whole pages.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/bigallocs" "$WL/bigpair"

run_tool bigonly 60 -v --format json -T 0 --big 2M --big-only -- "$WL/bigallocs"
expect_tool_ok bigonly || finish
expect_eq "no uprobe attached" "" "$(grep -E '^alloctrace: (uprobe|uretprobe) ' "$TMP/bigonly.err")"
expect_true "both syscall tracepoints attached" "$(cat "$TMP/bigonly.err")" \
	grep -q 'raw tracepoint sys_exit' "$TMP/bigonly.err"

# Every block of 2 MiB or more, from the function that asked, by mmap;
# the 1 MiB ones and the 500 small allocations are not seen at all.
expect_eq "alerts: the functions that asked, in order" \
	'["big_calloc_2m","big_memalign_3m","big_aligned_alloc_4m","big_valloc_5m","big_pvalloc_6m","big_reallocarray_7m","big_malloc_8m_minus_1","big_malloc_8m","big_realloc_9m","big_posix_memalign_16m"]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | .frames[0].function]' "$TMP/bigonly.out")"
expect_eq "alerts: all by mmap" '["mmap"]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | .func] | unique' "$TMP/bigonly.out")"
# Requested 2, 3, ... 16 MiB: the mapping is that plus at most a few pages.
expect_eq "alerts: sizes are the requests rounded up to the mapping" \
	'[2,3,4,5,6,7,8,8,9,16]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | select(.size % 4096 == 0)
		| (.size / 1048576 | floor)]' "$TMP/bigonly.out")"
expect_eq "alerts: stacks reach main" '[true]' \
	"$(jq -sc '[.[] | select(.type == "big_alloc") | .frames[1].function == "main"] | unique' \
		"$TMP/bigonly.out")"

r=$(final_report "$TMP/bigonly.out")
expect_eq "the report says what it saw" 2097152 "$(report_get "$r" .big_only)"
expect_eq "allocs: only the 10 big mappings" 10 "$(report_get "$r" .totals.allocs)"
expect_eq "every big block still held" 10 "$(report_get "$r" .totals.outstanding_allocs)"
expect_eq "held by the functions that asked" 10 \
	"$(jq '[.stacks[] | select(.frames[0].function | startswith("big_"))
		| .outstanding_allocs] | add' <<<"$r")"


# Two processes, two allocators (issue 13): glibc's in one, jemalloc's
# preloaded into the other (retain:false, so that each 4 MiB block is a
# mapping of its own), without address randomization: jemalloc's radix
# tree of extents needs a new 4 MiB leaf, mapped as 6 MiB of metadata,
# whenever a block lands in a gigabyte of address space none has used
# (x86-64), which with randomized addresses big_4m's blocks did in about
# one run in ten. Each process's stacks are trimmed against its own
# allocator, the C library's syscall wrapper included: whatever was found
# last must not trim the other. tests/workloads/bigpair.c: 3 x 4 MiB from
# big_4m (mapped as 4 MiB and a page each, its allocator's), 10 x 100
# bytes from leak_malloc.
jemalloc=$(ldconfig -p | awk '$1 == "libjemalloc.so.2" { print $NF; exit }')
[[ -n $jemalloc ]] || { fail "two allocators" "libjemalloc2 not installed (make deps)"; finish; }

# start_pair NAME: the glibc process in G, the jemalloc one in J.
start_pair() {
	mkdir -p "$TMP/$1_g" "$TMP/$1_j"
	"$WL/bigpair" "$TMP/$1_g" &
	G=$!
	track "$G"
	setarch -R env MALLOC_CONF=retain:false LD_PRELOAD="$jemalloc" \
		"$WL/bigpair" "$TMP/$1_j" &
	J=$!
	track "$J"
	wait_for 10 test -e "$TMP/$1_g/ready" -a -e "$TMP/$1_j/ready"
}

# pair_run NAME OPTIONS...: trace both with -p G,J until they are done;
# the final report is in R. Fails saying which step did not happen. The
# limits are generous: without uprobe_multi links (Linux 6.1) each of the
# 97 probes of pair_full is a perf-event link of its own, made and closed
# one at a time, over 20 s in QEMU without KVM on a loaded host.
pair_run() {
	local name=$1
	shift
	start_pair "$name" || { fail "$name: workloads" "not ready in 10 s"; return 1; }
	start_tool "$name" 120 --format json -T 0 "$@" -p "$G,$J"
	wait_for 60 tracing_both "$name" || {
		fail "$name: tracing" "no two 'tracing pid' lines in 60 s"
		return 1
	}
	expect_eq "$name: each process named with its own allocator" \
		"$G libc.so.6;$J libjemalloc.so.2" \
		"$(sed -nE 's|.*tracing pid ([0-9]+) .* in [^ ]*/([^ /]+)$|\1 \2|p' "$TMP/$name.err" |
			sort -n | paste -sd ';')"
	kill -USR1 "$G" "$J"
	wait_for 10 test -e "$TMP/${name}_g/done" -a -e "$TMP/${name}_j/done" || {
		fail "$name: workloads" "no done files 10 s after SIGUSR1"
		return 1
	}
	kill -USR1 "$G" "$J"
	wait_tool
	expect_tool_ok "$name" || return 1
	R=$(final_report "$TMP/$name.out")
}

# proc_stacks PID: the final report's stacks of PID as "blocks bytes frames[0]".
proc_stacks() {
	jq -r --argjson p "$1" '.processes[] | select(.pid == $p) | .stacks[]
		| "\(.outstanding_allocs) \(.outstanding_bytes) \(.frames[0].function)"' <<<"$R" |
		paste -sd ';'
}

# pair_expect NAME FUNC G_SIZE J_SIZE [MORE]: in each process, three alerts
# by FUNC of its SIZE bytes from big_4m, and its stacks ("blocks bytes
# frames[0]";...): big_4m's three blocks, then MORE.
pair_expect() {
	local pid size
	for pid in "$G" "$J"; do
		size=$3
		[[ $pid == "$J" ]] && size=$4
		expect_eq "$1: pid $pid alerts start at big_4m" \
			"$2 $size big_4m;$2 $size big_4m;$2 $size big_4m" \
			"$(jq -c --argjson p "$pid" 'select(.pid == $p)' "$TMP/$1.out" |
				big_alloc_list /dev/stdin)"
		expect_eq "$1: pid $pid stacks start at the workload" "3 $((3 * size)) big_4m${5:-}" \
			"$(proc_stacks "$pid")"
	done
}

# A 4 MiB block is mapped with one page more for the header: glibc's a
# 4 KiB page, jemalloc's its own page size (arm64's Debian build: 64 KiB).
jemalloc_page=$(MALLOC_CONF=stats_print:true LD_PRELOAD="$jemalloc" /bin/true 2>&1 |
	sed -n 's/^Page size: //p')
# -v: what was attached and when, kept with a failure. Twice in about 60
# runs on arm64 under TCG (2026-11-29) neither process's mmaps were seen at
# all, and its log said no more than that it traced them.
pair_run pair_big -v --big 1M --big-only &&
	pair_expect pair_big mmap $((4194304 + 4096)) $((4194304 + ${jemalloc_page:-0}))
# Without --big-only each process is probed in its own allocator.
pair_run pair_full --big 1M &&
	pair_expect pair_full malloc 4194304 4194304 ";10 1000 leak_malloc"

finish
