#!/bin/bash
# --big-only (issue #4): no probe on the allocator; big blocks are seen
# where they reach the kernel, as anonymous mmap (glibc maps requests above
# its mmap threshold), mremap or brk, by probes on the C library's own
# mmap, munmap, mremap and brk in the traced process only (issue 40: no
# program on every system call of the host), with stacks that start at the
# code that asked. Sizes are the kernel's: the request plus the
# allocator's header, in whole pages.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/bigallocs" "$WL/bigpair" "$WL/bigbrk" "$WL/bigbrk-static"

run_tool bigonly 60 -v --format json -T 0 --big 2M --big-only -- "$WL/bigallocs"
expect_tool_ok bigonly || finish
expect_eq "probes on the C library's mmap, munmap, mremap and brk alone" "brk,mmap,mremap,munmap" \
	"$(sed -nE "s/^alloctrace: (uprobe|uretprobe)( session)? ([a-z_]+)('s return)? at .*/\3/p" \
		"$TMP/bigonly.err" | sort -u | paste -sd ,)"
expect_eq "no syscall tracepoint" "" "$(grep 'raw tracepoint sys_' "$TMP/bigonly.err")"

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


# Issue 40: an untraced process pays nothing for --big 1M --big-only -p A
# (with a program on raw_tp/sys_enter its getppid() took 2.1x as long).
# Shown by what alloctrace holds, not by a timing: none of its links is a
# system-call tracepoint, and each uprobe_multi link (6.6+; perf-event
# links on 6.1 are made with the pid) names A alone. And A's big blocks are
# each alerted as the system-call programs did: a mapping, a mremap that
# grows it, malloc's mapping, and the heap's growth by malloc's sbrk and by
# the program's own, at the program break's growth
# (tests/workloads/bigbrk.c).

# link_fds PID: "link_type,tp_name,pid" of each BPF link PID holds.
link_fds() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[[ $(readlink "$fd") == anon_inode:bpf*link* ]] || continue
		awk '$1 == "link_type:" { t = $2 } $1 == "tp_name:" { n = $2 }
			$1 == "pid:" { p = $2 } END { print t "," n "," p }' "/proc/$1/fdinfo/${fd##*/}"
	done
}

mkdir -p "$TMP/heap"
"$WL/bigbrk" "$TMP/heap" &
H=$!
track "$H"
if wait_for 10 test -e "$TMP/heap/ready"; then
	start_tool heap 60 --format json -T 0 --big 1M --big-only -p "$H"
	wait_for 60 grep -q 'tracing pid' "$TMP/heap.err" ||
		fail "heap: tracing" "no 'tracing pid' line in 60 s"
	tool=$(pgrep -P "$TOOL_PID" -x alloctrace)
	links=$(link_fds "$tool")
	expect_eq "heap: links held" yes "$([[ -n $links ]] && echo yes)"
	expect_eq "heap: no system-call tracepoint among its links" "" \
		"$(awk -F, '$1 == "raw_tracepoint" && $2 ~ /^sys_/' <<<"$links")"
	expect_eq "heap: every uprobe_multi link for the traced process alone" "" \
		"$(awk -F, -v p="$H" '$1 == "uprobe_multi" && $3 != p' <<<"$links")"
	kill -USR1 "$H"
	wait_for 10 test -e "$TMP/heap/done" || fail "heap: workload" "no done file 10 s after SIGUSR1"
	kill -USR1 "$H"
	wait_tool
	expect_tool_ok heap &&
		expect_eq "heap: each big block alerted once, by the call that made it" \
			"$({
				echo "mmap 4194304 heap_mmap_4m"
				echo "mremap 8388608 heap_mremap_8m"
				echo "mmap $((5 * 1048576 + 4096)) heap_malloc_5m"
				cat "$TMP/heap/truth"
			} | sort | paste -sd ';')" "$(big_alloc_list "$TMP/heap.out")"
	r=$(final_report "$TMP/heap.out")
	# Heap growth is alerted, not tracked; the 8 MiB mapping was unmapped.
	expect_eq "heap: held, malloc's mapping alone" "1 $((5 * 1048576 + 4096)) heap_malloc_5m" \
		"$(jq -r '.stacks[] | "\(.outstanding_allocs) \(.outstanding_bytes) \(.frames[0].function)"' \
			<<<"$r" | paste -sd ';')"
	expect_eq "heap: counted as before: 5 allocations, 2 releases" "5 2" \
		"$(jq -r '"\(.totals.allocs) \(.totals.frees)"' <<<"$r")"
else
	fail "heap: workload" "not ready in 10 s"
fi

# Where the C library is not known as glibc (here a static program, whose
# libc has no gnu_get_libc_version), big blocks are seen at the system
# call, and the run says what that costs. Traced with a glibc process
# (-p S,H), the system-call programs serve the static one alone: each
# process's blocks are alerted once, by probes or by syscalls. The static
# program's stacks lie wholly in the one object that is its allocator, so
# they are kept whole: compared without their first frame.
# big_truth DIR: the alerts bigbrk's run in DIR must give, sorted, one
# line: "FUNC SIZE;...".
big_truth() {
	{
		echo "mmap 4194304"
		echo "mremap 8388608"
		echo "mmap $((5 * 1048576 + 4096))"
		cut -d' ' -f1,2 "$1/truth"
	} | sort | paste -sd ';'
}

# alerted OUT PID: the alerts in OUT of process PID, as big_truth says them.
alerted() {
	jq -r --argjson p "$2" 'select(.type == "big_alloc" and .pid == $p)
		| "\(.func) \(.size)"' "$1" | sort | paste -sd ';'
}

mkdir -p "$TMP/st" "$TMP/dyn"
"$WL/bigbrk-static" "$TMP/st" &
S=$!
track "$S"
"$WL/bigbrk" "$TMP/dyn" &
H=$!
track "$H"
if wait_for 10 test -e "$TMP/st/ready" -a -e "$TMP/dyn/ready"; then
	start_tool mixed 60 --format json -T 0 --big 1M --big-only -p "$S,$H"
	wait_for 60 tracing_both mixed ||
		fail "mixed: tracing" "no two 'tracing pid' lines in 60 s"
	expect_eq "mixed: the cost of the system-call path said once" 1 \
		"$(grep -c 'every system call on the host pays' "$TMP/mixed.err")"
	expect_eq "mixed: the static program at the system call" 1 \
		"$(grep -c "tracing pid $S .*at the system call" "$TMP/mixed.err")"
	kill -USR1 "$S" "$H"
	wait_for 10 test -e "$TMP/st/done" -a -e "$TMP/dyn/done" ||
		fail "mixed: workloads" "no done files 10 s after SIGUSR1"
	kill -USR1 "$S" "$H"
	wait_tool
	expect_tool_ok mixed
	for pid in "$S" "$H"; do
		dir=$TMP/st
		[[ $pid == "$H" ]] && dir=$TMP/dyn
		expect_eq "mixed: pid $pid's big blocks alerted once each" \
			"$(big_truth "$dir")" "$(alerted "$TMP/mixed.out" "$pid")"
	done
else
	fail "mixed: workloads" "not ready in 10 s"
fi

# A child of a static program, forked under -p PID --follow-forks: its
# parent's system-call programs serve it from its first instruction
# (before, none did: its big blocks went unseen).
mkdir -p "$TMP/fork"
"$WL/bigbrk-static" "$TMP/fork" fork &
S=$!
track "$S"
if wait_for 10 test -e "$TMP/fork/ready"; then
	start_tool forked 60 --format json -T 0 --big 1M --big-only --follow-forks -p "$S"
	wait_tracing forked 60 || fail "forked: tracing" "no 'tracing pid' line in 60 s"
	kill -USR1 "$S"
	wait_for 10 test -e "$TMP/fork/done" || fail "forked: workload" "no done file 10 s after SIGUSR1"
	kill -USR1 "$S"
	wait_tool
	expect_tool_ok forked
	child=$(jq -r --argjson p "$S" 'select(.type == "big_alloc" and .pid != $p) | .pid' \
		"$TMP/forked.out" | sort -u)
	expect_eq "forked: the child's big blocks alerted once each, the parent's none" \
		"$(big_truth "$TMP/fork") none" \
		"$(alerted "$TMP/forked.out" "${child:-0}") $(alerted "$TMP/forked.out" "$S" | grep . || echo none)"
else
	fail "forked: workload" "not ready in 10 s"
fi

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
