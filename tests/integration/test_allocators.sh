#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# Every allocator a real process uses (tests/workloads/alloc_*): alloctrace
# must attach to the object that provides malloc in symbol lookup order
# (the executable, LD_PRELOAD objects, then the libraries in load order),
# say which with -v ("allocator: PATH"), and count through that object's
# own entry points exactly: jemalloc's *allocx, tcmalloc's operator
# new/delete, the *_ functions of --allocator EXE:pfx_, anonymous mmap with
# --mmap. Each workload's header comment derives the numbers used here.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/alloc_jemalloc" "$WL/alloc_jemalloc_preload" "$WL/alloc_tcmalloc" \
	"$WL/alloc_mimalloc" "$WL/alloc_musl" "$WL/alloc_musl_static" "$WL/alloc_custom" \
	"$WL/alloc_prefixed" "$WL/alloc_mmap"

# pkg_file PACKAGE REGEX: the real path (as /proc/PID/maps shows it, every
# symlink resolved) of the installed package's file matching REGEX.
pkg_file() {
	local f
	f=$(dpkg -L "$1" 2>/dev/null | grep -m1 -E -- "$2") && realpath -e -- "$f"
}

# need_file WHAT PATH: PATH was found, else one failure (and the caller
# skips what needs it).
need_file() {
	[[ -n "$2" ]] && return 0
	fail "prerequisites: $1" "not installed (make deps)"
	return 1
}

LIBC=$(pkg_file libc6 '/libc\.so\.6$')
JEMALLOC=$(pkg_file libjemalloc2 '/libjemalloc\.so\.2$')
TCMALLOC=$(pkg_file libtcmalloc-minimal4 '/libtcmalloc_minimal\.so\.4$')
MIMALLOC=$(pkg_file libmimalloc2.0 '/libmimalloc\.so\.2$')
MUSL=$(pkg_file musl '/ld-musl-[^/]*\.so\.1$')

# run NAME ARGS...: one verbose JSON run with every stack; R is its final
# report. Returns non-zero when there is no report to look into.
run() {
	local name=$1
	shift
	R=
	run_tool "$name" 60 --format json -T 0 -v "$@"
	expect_tool_ok "$name" || return 1
	R=$(final_report "$TMP/$name.out")
}

# expect_one_stack REPORT NAME: only the call site that made the blocks'
# final size (the last realloc or rallocx) holds them.
expect_one_stack() {
	expect_eq "$2: only the last resize's stack" 1 "$(fn_stacks "$1" "$2")"
}

# expect_placement NAME FUNC X86_64 ARM64: the -v run NAME put FUNC's entry
# probe where this architecture's argument says, e.g. "free+3 (je at +3,
# emulated; past test; args in rdi)": the offset from the function's start
# that user/probe/placement.c picks from its instructions, why, and the
# registers the entry program reads the arguments from there (Debian 12's
# builds of each allocator, for each architecture). FUNC's return probe,
# unless it is free or munmap (which have none), shares the offset (a
# uretprobe there, or one uprobe session at both ends on 6.13+), or,
# where the reason ends "returns at N exits" (arm64), is on N other
# instructions, the function's exits. Probes moved there must still count
# exactly.
expect_placement() {
	local line ret where exits
	where=$(by_arch "$3" "$4")
	line=$(grep -m1 -F -e "uprobe $2 at " -e "uprobe session $2 at " "$TMP/$1.err")
	expect_eq "$1: where $2 is probed" "$where" "${line#*, }"
	ret=$(grep -m1 -F -e "uretprobe $2 at " -e "uprobe session $2 at " "$TMP/$1.err")
	ret=${ret#*, }
	exits=$(sed -n 's/.*; returns at \([0-9]*\) exits\?)$/\1/p' <<<"$where")
	case $2 in
	free | munmap) expect_eq "$1: $2 has no return probe" "" "$ret" ;;
	*) if [[ -n $exits ]]; then
		expect_eq "$1: $2's return probes, one on each exit" "$exits" \
			"$(grep -E "(uretprobe $2|uprobe $2's return) at " "$TMP/$1.err" |
				sed 's/.*, //' | sort -u | wc -l)"
	else
		expect_eq "$1: where $2's return probe is" "${where%% *}" "${ret%% *}"
	fi ;;
	esac
}

# expect_stepped NAME X86_64 ARM64: run NAME (with -v) said in its one start-up line
# that the probes of the functions this architecture's argument names
# ("a, b") sit on instructions the kernel single-steps; "" when it said
# nothing of the kind.
expect_stepped() {
	expect_eq "$1: single-stepped probes" "$(by_arch "$2" "$3")" \
		"$(sed -n 's/.* on instructions the kernel single-steps (\(.*\)): .*/\1/p' \
			"$TMP/$1.err" | paste -sd ';')"
}

# expect_clean NAME REPORT: the report's own consistency, for runs whose
# process holds more than the workload's functions account for.
expect_clean() {
	expect_totals_consistent "$1" "$2"
	expect_eq "$1: totals.lost" 0 "$(report_get "$2" .totals.lost)"
	expect_eq "$1: totals.untracked_frees" 0 "$(report_get "$2" .totals.untracked_frees)"
}

# --- jemalloc, linked ---------------------------------------------------------

jemalloc() {
	need_file libjemalloc2 "$JEMALLOC" || return
	run jemalloc -- "$WL/alloc_jemalloc" || return
	expect_allocator jemalloc "$JEMALLOC"
	# Past the single-stepped cmp, mov and their kin to the first emulated
	# instruction; free keeps only rdi, and never moves the stack pointer.
	# On arm64 the functions that open with their frame record's stp have
	# their returns probed on their exits, and their entries move past it.
	expect_placement jemalloc malloc "malloc+7 (ja at +7, emulated; past cmp; args in rdi)" \
		"malloc+4 (b.hi at +4, simulated; past subs; args in x0)"
	expect_placement jemalloc free \
		"free+48 (jne at +48, emulated; past mov, mov, mov, shr, and, and, add, add, cmp; args in rdi)" \
		"free+0 (adrp at +0, simulated; args in x0)"
	expect_placement jemalloc sdallocx \
		"sdallocx+10 (ja at +10, emulated; past mov, cmp; args in rdi, rsi, rdx)" \
		"sdallocx+8 (b.ne at +8, simulated; past subs, ccmp; args in x0, x1, x2)"
	expect_placement jemalloc rallocx "rallocx+2 (jmp at +2, emulated; past xor; args in rdi, rsi, rdx)" \
		"rallocx+4 (b at +4, simulated; past movz; args in x0, x1, x2)"
	expect_placement jemalloc posix_memalign "posix_memalign+0 (push at +0, emulated; args in rdi, rsi, rdx)" \
		"posix_memalign+8 (adrp at +8, simulated; past stp, mrs; args in x0, x1, x2; returns at 1 exit)"
	expect_stepped jemalloc "" ""
	#                       function             bytes    blocks allocs
	expect_leak "$R" leak_malloc                 2400     50     50
	expect_leak "$R" leak_calloc                 3072     6      6
	expect_leak "$R" leak_realloc                2800     4      4
	expect_leak "$R" leak_posix_memalign         600      3      3
	expect_leak "$R" leak_mallocx                6000     6      6
	expect_leak "$R" leak_rallocx                8000     4      4
	expect_leak "$R" mallocx_dallocx             1024     2      10
	expect_leak "$R" malloc_dallocx              512      2      5
	expect_leak "$R" big_mallocx                 1048576  1      1
	expect_leak "$R" big_rallocx                 2097152  1      1
	expect_one_stack "$R" leak_realloc
	expect_one_stack "$R" leak_rallocx
	expect_no_stack "$R" churn
	expect_no_stack "$R" churn_x
	# libstdc++'s start-up pool is the process's too: no exact totals.
	expect_clean jemalloc "$R"

	# The *allocx functions are named in alerts; only these two reach 1 MiB.
	run_tool jemalloc_big 60 --format json -T 0 --big 1M -- "$WL/alloc_jemalloc"
	expect_tool_ok jemalloc_big || return
	expect_eq "jemalloc_big: alerts" "mallocx 1048576 big_mallocx;rallocx 2097152 big_rallocx" \
		"$(big_alloc_list "$TMP/jemalloc_big.out")"
}

# --- jemalloc, LD_PRELOAD -------------------------------------------------------

# expect_preload_leaks REPORT: alloc_jemalloc_preload's leaks, whatever the
# allocator.
expect_preload_leaks() {
	#                       function             bytes  blocks allocs
	expect_leak "$1" leak_malloc                 3000   30     30
	expect_leak "$1" leak_calloc                 2000   4      4
	expect_leak "$1" leak_realloc                15000  3      3
	expect_leak "$1" leak_posix_memalign         6000   2      2
	expect_leak "$1" leak_memalign               1400   2      2
	expect_leak "$1" leak_aligned_alloc          1536   3      3
	expect_no_stack "$1" churn
}

# The same program without LD_PRELOAD: glibc's malloc, and exact totals
# (nothing in it allocates but the workload).
test_preload_control() {
	need_file libc6 "$LIBC" || return
	run preload_none -- "$WL/alloc_jemalloc_preload" || return
	expect_allocator preload_none "$LIBC"
	expect_placement preload_none free "free+3 (je at +3, emulated; past test; args in rdi)" \
		"free+0 (cbz at +0, simulated; args in x0)"
	# On arm64 past the prologue: its returns and tail call to memset are probed.
	expect_placement preload_none malloc "malloc+0 (push at +0, emulated; args in rdi)" \
		"malloc+12 (adrp at +12, simulated; past stp, add, stp; args in x0; returns at 3 exits)"
	# Past a rip-relative cmpb, which the kernel would single-step.
	expect_placement preload_none posix_memalign \
		"posix_memalign+7 (push at +7, emulated; past cmp; args in rdi, rsi, rdx)" \
		"posix_memalign+4 (adrp at +4, simulated; past stp; args in x0, x1, x2; returns at 1 exit)"
	# aligned_alloc is memalign (one address, one probe).
	expect_placement preload_none memalign "memalign+7 (je at +7, emulated; past cmp; args in rdi, rsi)" \
		"memalign+4 (adrp at +4, simulated; past stp; args in x0, x1; returns at 2 exits)"
	# Its mul overwrites the size before any emulated instruction; on arm64
	# calloc's too.
	expect_stepped preload_none reallocarray "calloc, reallocarray"
	expect_preload_leaks "$R"
	expect_totals preload_none "$R" 28936 44 10047 10003
}

# The command is env, which sets LD_PRELOAD for the workload alone (not
# for alloctrace) and execs it: the tracer must find the allocator again
# in the new image, where jemalloc comes before libc.
test_preload_exec() {
	run preload_env -- env LD_PRELOAD="$JEMALLOC" "$WL/alloc_jemalloc_preload" || return
	expect_allocator preload_env "$JEMALLOC"
	expect_preload_leaks "$R"
	expect_clean preload_env "$R"
}

# A stripped copy of jemalloc, made sure to have no .symtab (distributions
# ship theirs so): its functions are found in .dynsym, which strip keeps.
test_preload_stripped() {
	local lib=$TMP/libjemalloc-stripped.so.2
	if ! cp "$JEMALLOC" "$lib" || ! strip --strip-all "$lib"; then
		fail "preload_stripped: setup" "cannot strip a copy of $JEMALLOC"
		return
	fi
	expect_eq "preload_stripped: no .symtab" 0 "$(readelf -S "$lib" | grep -c '\.symtab')"
	run preload_stripped -- env LD_PRELOAD="$lib" "$WL/alloc_jemalloc_preload" || return
	expect_allocator preload_stripped "$lib"
	expect_preload_leaks "$R"
	expect_clean preload_stripped "$R"
}

# The workload started with LD_PRELOAD and then attached to with -p: the
# lookup order of a running process, without exec in the way. It leaks
# only after attaching, so the totals are exact.
test_preload_attach() {
	local dir=$TMP/preload_p pid
	mkdir -p "$dir"
	env LD_PRELOAD="$JEMALLOC" "$WL/alloc_jemalloc_preload" "$dir" &
	pid=$!
	track "$pid"
	wait_for 10 test -e "$dir/ready" || {
		fail "preload_p: workload" "not ready in 10 s"
		return
	}
	start_tool preload_p 60 --format json -T 0 -v -p "$pid"
	wait_tracing preload_p 30 || {
		fail "preload_p: tracing" "no 'tracing pid' line in 30 s"
		return
	}
	kill -USR1 "$pid"
	wait_for 20 test -e "$dir/done" || {
		fail "preload_p: workload" "no done file 20 s after SIGUSR1"
		return
	}
	kill -INT "$TOOL_PID"
	wait_tool
	kill -USR1 "$pid"
	expect_tool_ok preload_p || return
	R=$(final_report "$TMP/preload_p.out")
	expect_allocator preload_p "$JEMALLOC"
	expect_placement preload_p malloc "malloc+7 (ja at +7, emulated; past cmp; args in rdi)" \
		"malloc+4 (b.hi at +4, simulated; past subs; args in x0)"
	expect_stepped preload_p "" ""
	expect_preload_leaks "$R"
	expect_totals preload_p "$R" 28936 44 10047 10003
}

preload() {
	need_file libjemalloc2 "$JEMALLOC" || return
	test_preload_control
	# The setup itself, without alloctrace: LD_PRELOAD does give the
	# workload jemalloc's malloc.
	if ! env LD_PRELOAD="$JEMALLOC" "$WL/alloc_jemalloc_preload" --is-jemalloc; then
		fail "preload: setup" "with LD_PRELOAD=$JEMALLOC, malloc is not jemalloc's"
		return
	fi
	test_preload_exec
	test_preload_stripped
	test_preload_attach
}

# --- tcmalloc (C++) ---------------------------------------------------------------

tcmalloc() {
	need_file libtcmalloc-minimal4 "$TCMALLOC" || return
	run tcmalloc -- "$WL/alloc_tcmalloc" || return
	expect_allocator tcmalloc "$TCMALLOC"
	# free is also operator delete(void *) here: one probe, past two loads.
	expect_placement tcmalloc free "free+10 (jne at +10, emulated; past mov, test; args in rdi)" \
		"free+0 (adrp at +0, simulated; args in x0)"
	expect_placement tcmalloc malloc "malloc+10 (jne at +10, emulated; past mov, test; args in rdi)" \
		"malloc+0 (adrp at +0, simulated; args in x0)"
	expect_placement tcmalloc calloc "calloc+0 (push at +0, emulated; args in rdi, rsi)" \
		"calloc+16 (cbz at +16, simulated; past stp, add, stp, mul; args in x0, x1; returns at 2 exits)"
	expect_stepped tcmalloc "" ""
	#                       function             bytes    blocks allocs
	expect_leak "$R" leak_malloc                 2000     25     25
	expect_leak "$R" leak_calloc                 1000     5      5
	expect_leak "$R" new_leak_scalar             480      12     20
	expect_leak "$R" new_leak_array              3000     3      5
	expect_leak "$R" new_leak_aligned            576      3      4
	expect_leak "$R" big_malloc                  3145728  1      1
	expect_leak "$R" big_new                     2097152  1      1
	expect_no_stack "$R" churn
	expect_no_stack "$R" new_delete_churn
	# libstdc++'s start-up pool is the process's too: no exact totals.
	expect_clean tcmalloc "$R"

	# tcmalloc's operator new and new[] are one function (tc_new, one
	# address): an alert can name either.
	run_tool tcmalloc_big 60 --format json -T 0 --big 1M -- "$WL/alloc_tcmalloc"
	expect_tool_ok tcmalloc_big || return
	expect_eq "tcmalloc_big: alerts" "malloc 3145728 big_malloc;operator new 2097152 big_new" \
		"$(big_alloc_list "$TMP/tcmalloc_big.out" | sed 's/operator new\[\]/operator new/g')"
}

# --- mimalloc ---------------------------------------------------------------------

mimalloc() {
	need_file libmimalloc2.0 "$MIMALLOC" || return
	run mimalloc -- "$WL/alloc_mimalloc" || return
	expect_allocator mimalloc "$MIMALLOC"
	expect_placement mimalloc free "free+6 (je at +6, emulated; past mov, test; args in rdi)" \
		"free+4 (cbz at +4, simulated; past mov; args in x0)"
	# malloc copies the size to rsi and reuses rdi; calloc keeps nmemb in rax.
	expect_placement mimalloc malloc "malloc+21 (ja at +21, emulated; past mov, mov, mov, cmp; args in rsi)" \
		"malloc+0 (adrp at +0, simulated; args in x0)"
	expect_placement mimalloc calloc "calloc+18 (je at +18, emulated; past mov, mov, mov, cmp; args in rax, rsi)" \
		"calloc+0 (adrp at +0, simulated; args in x0, x1)"
	expect_placement mimalloc realloc \
		"realloc+20 (jmp at +20, emulated; past mov, mov, mov, mov, mov; args in rsi, rdx)" \
		"realloc+0 (adrp at +0, simulated; args in x0, x1)"
	expect_placement mimalloc posix_memalign "posix_memalign+0 (jmp at +0, emulated; args in rdi, rsi, rdx)" \
		"posix_memalign+0 (b at +0, simulated; args in x0, x1, x2)"
	expect_stepped mimalloc "" "operator new(align)"
	#                       function             bytes  blocks allocs
	expect_leak "$R" leak_malloc                 2560   40     40
	expect_leak "$R" leak_calloc                 6000   3      3
	expect_leak "$R" leak_realloc                20000  5      5
	expect_leak "$R" leak_posix_memalign         2000   4      4
	expect_leak "$R" leak_aligned_alloc          2048   2      2
	expect_leak "$R" leak_reallocarray           1800   3      3
	expect_one_stack "$R" leak_realloc
	expect_one_stack "$R" leak_reallocarray
	expect_no_stack "$R" churn
	# realloc's own call of free (mi_free) is part of the realloc.
	expect_totals mimalloc "$R" 34408 57 10070 10013
}

# --- musl, dynamic and static -------------------------------------------------------

# expect_musl NAME OBJECT: alloc_musl's leaks, allocator OBJECT. musl's
# calloc calls malloc and posix_memalign calls aligned_alloc: once each.
expect_musl() {
	run "$1" -- "$WL/$1" || return
	expect_allocator "$1" "$2"
	expect_placement "$1" free "free+0 (jmp at +0, emulated; args in rdi)" \
		"free+0 (b at +0, simulated; args in x0)"
	expect_stepped "$1" "" ""
	#                       function             bytes  blocks allocs
	expect_leak "$R" leak_malloc                 2400   60     60
	expect_leak "$R" leak_calloc                 3000   5      5
	expect_leak "$R" leak_realloc                10000  4      4
	expect_leak "$R" leak_posix_memalign         900    3      3
	expect_leak "$R" leak_aligned_alloc          1400   2      2
	expect_one_stack "$R" leak_realloc
	expect_no_stack "$R" churn
	expect_totals "$1" "$R" 17700 74 10082 10008
}

musl() {
	# musl's libc.so is its dynamic loader too: one object, two names.
	if need_file musl "$MUSL"; then
		expect_musl alloc_musl "$MUSL"
	fi
	expect_musl alloc_musl_static "$(realpath -e "$WL/alloc_musl_static")"
}

# --- an allocator in the executable ---------------------------------------------------

custom() {
	need_file libc6 "$LIBC" || return
	run custom -- "$WL/alloc_custom" || return
	expect_allocator custom "$(realpath -e "$WL/alloc_custom")"
	#                       function             bytes  blocks allocs
	expect_leak "$R" leak_malloc                 4000   20     20
	expect_leak "$R" leak_calloc                 2100   3      3
	expect_leak "$R" leak_realloc                3600   4      4
	expect_one_stack "$R" leak_realloc
	# libc's strdup calls the executable's malloc. glibc has no frame
	# pointers (strdup keeps a length in %rbp), so the walk ends at
	# strdup: its blocks are the only ones allocated from inside libc.
	expect_eq "custom: blocks libc allocated (strdup)" \
		'{"bytes":24,"blocks":2,"allocs":2,"callers":["strdup"]}' \
		"$(jq -c --arg libc "$LIBC" '[.stacks[] | select(.frames[0].module == $libc)]
			| {bytes: (map(.outstanding_bytes) | add), blocks: (map(.outstanding_allocs) | add),
			   allocs: (map(.allocs) | add),
			   callers: (map(.frames[0].function | ltrimstr("__")) | unique)}' <<<"$R")"
	expect_no_stack "$R" churn
	expect_totals custom "$R" 9724 29 10037 10008
}

# --- --allocator EXE:pfx_ -------------------------------------------------------------

prefixed() {
	local exe
	exe=$(realpath -e "$WL/alloc_prefixed")
	run prefixed --allocator "$exe:pfx_" -- "$WL/alloc_prefixed" || return
	expect_allocator prefixed "$exe"
	#                       function             bytes  blocks allocs
	expect_leak "$R" pfx_leak_malloc             960    15     15
	expect_leak "$R" pfx_leak_calloc             600    2      2
	expect_leak "$R" pfx_leak_realloc            1500   3      3
	expect_no_stack "$R" pfx_churn
	# libc's malloc is not the allocator traced now.
	expect_no_stack "$R" libc_leak
	expect_totals prefixed "$R" 3060 20 10023 10003

	# Without --allocator: libc's malloc, and none of the pfx_ calls.
	need_file libc6 "$LIBC" || return
	run prefixed_libc -- "$WL/alloc_prefixed" || return
	expect_allocator prefixed_libc "$LIBC"
	expect_leak "$R" libc_leak 615 5 5
	expect_no_stack "$R" libc_churn
	expect_no_stack "$R" pfx_leak_malloc
	expect_no_stack "$R" pfx_leak_calloc
	expect_no_stack "$R" pfx_leak_realloc
	expect_totals prefixed_libc "$R" 615 5 105 100
}

# --- --mmap -----------------------------------------------------------------------------

# Alerts of --big 64K common to both runs: glibc malloc and realloc, each
# once, although glibc serves them with mmap and mremap.
MALLOC_ALERTS='malloc 4194304 big_malloc
malloc 4194304 big_malloc_churn
malloc 4194304 big_malloc_churn
malloc 4194304 big_malloc_churn
malloc 4194304 big_realloc
realloc 8388608 big_realloc'
MMAP_ALERTS='mmap 65536 mmap_churn
mmap 65536 mmap_churn
mmap 1048576 mmap_leak
mmap 1048576 mmap_leak
mmap 1048576 mmap_leak
mmap 1048576 mremap_grow
mremap 2097152 mremap_grow'

mmap() {
	run mmap --mmap --big 64K -- "$WL/alloc_mmap" || return
	# glibc's munmap makes its system call first.
	expect_placement mmap munmap "munmap+0 (single-stepped: unknown instruction at +5)" \
		"munmap+0 (single-stepped: unknown instruction at +8)"
	# mremap moves the stack pointer first, and it has a return probe (on
	# its exits on arm64).
	expect_placement mmap mremap "mremap+0 (single-stepped: sub at +0 moves the stack pointer)" \
		"mremap+4 (adrp at +4, simulated; past sub; args in x0, x1, x2, x3, x4; returns at 1 exit)"
	expect_placement mmap mmap "mmap+10 (jne at +10, emulated; past mov, test; args in rdi, rsi, rdx, rcx, r8, r9)" \
		"mmap+4 (b.ne at +4, simulated; past ands; args in x0, x1, x2, x3, x4, x5)"
	expect_stepped mmap "reallocarray, munmap, mremap" "calloc, reallocarray, munmap"
	#                       function             bytes    blocks allocs
	expect_leak "$R" mmap_leak                   3145728  3      3
	expect_leak "$R" mremap_grow                 2097152  1      1
	expect_leak "$R" big_malloc                  4194304  1      1
	expect_leak "$R" big_realloc                 8388608  1      1
	expect_one_stack "$R" mremap_grow
	expect_one_stack "$R" big_realloc
	expect_no_stack "$R" mmap_churn
	expect_no_stack "$R" mmap_file
	expect_no_stack "$R" big_malloc_churn
	expect_no_stack "$R" churn
	# glibc's own mmap, mremap and munmap calls count in neither the
	# totals nor untracked_frees.
	expect_totals mmap "$R" 17825792 6 10013 10007
	expect_eq "mmap: alerts" "$(printf '%s\n%s\n' "$MALLOC_ALERTS" "$MMAP_ALERTS" | sort | paste -sd ';')" \
		"$(big_alloc_list "$TMP/mmap.out")"

	run mmap_off --big 64K -- "$WL/alloc_mmap" || return
	expect_leak "$R" big_malloc 4194304 1 1
	expect_leak "$R" big_realloc 8388608 1 1
	expect_no_stack "$R" mmap_leak
	expect_no_stack "$R" mremap_grow
	expect_no_stack "$R" mmap_churn
	expect_totals mmap_off "$R" 12582912 2 10006 10004
	expect_eq "mmap_off: alerts" "$(sort <<<"$MALLOC_ALERTS" | paste -sd ';')" \
		"$(big_alloc_list "$TMP/mmap_off.out")"
}

cases jemalloc preload tcmalloc mimalloc musl custom prefixed mmap
finish
