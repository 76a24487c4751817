#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by lib.sh's cases
# --sample: Poisson sampling by bytes. With a rate of 1 byte every block is
# sampled with weight 1, so the numbers are exact; with 16 KiB about 312 of
# the 20,000 held blocks are sampled and the estimate is within 25% (over
# four standard deviations) of the truth.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
require_built "$WL/many"

exact() {
	run_tool exact 60 --format json -T 0 --sample 1 -- "$WL/leaks"
	if expect_tool_ok exact; then
		r=$(final_report "$TMP/exact.out")
		expect_eq "rate 1: marked as estimates" true "$(report_get "$r" .estimated)"
		expect_leak "$r" leak_small 2400 100 100
		expect_leak "$r" leak_medium 28672 7 7
		expect_eq "rate 1: outstanding_bytes" 51478 "$(report_get "$r" .totals.outstanding_bytes)"
		expect_eq "rate 1: allocs, every call" 10159 "$(report_get "$r" .totals.allocs)"
	fi
}

# within NAME GOT TRUTH PERCENT
within() {
	expect_true "$1: $2 within $4% of $3" "$2" \
		test $(($2 * 100)) -ge $(($3 * (100 - $4))) -a $(($2 * 100)) -le $(($3 * (100 + $4)))
}

estimate() {
	run_tool est 60 --format json -T 0 --sample 16K -- "$WL/many"
	if expect_tool_ok est; then
		r=$(final_report "$TMP/est.out")
		expect_eq "16K: sample_rate" 16384 "$(report_get "$r" .sample_rate)"
		within "16K: hold_many bytes" "$(fn_sum "$r" outstanding_bytes hold_many)" 5120000 25
		within "16K: hold_many blocks" "$(fn_sum "$r" outstanding_allocs hold_many)" 20000 25
		expect_no_stack "$r" churn
		expect_eq "16K: no untracked frees counted when sampling" 0 \
			"$(report_get "$r" .totals.untracked_frees)"
	fi
}

# has_sessions: this kernel has uprobe sessions (Linux 6.13+).
has_sessions() {
	local major minor
	IFS=.- read -r major minor _ < <(uname -r)
	((major > 6 || (major == 6 && minor >= 13)))
}

# attached: the programs the allocator links of the tool's target run
# (the loader's link-map watch aside), sorted, on one line.
attached() {
	local f
	for f in $(uprobe_links "$TRACED"); do
		bpftool prog show id "$(awk '$1 == "prog_id:" { print $2 }' "$f")" --json | jq -r .name
	done | grep -vx linkmap_change | sort -u | paste -sd ' '
}

# The probes sampling takes: from Linux 6.13 a uprobe session on each
# allocating function, whose entry skips the return probe of a call the
# sampling passes by; before, an entry and a return probe on every call.
# Full tracking (MODE full) takes the same sessions, for the inner calls'
# and other processes' sake. The calls counted stay every one however few
# returns are probed: the truth, 10,159 for leaks, and 130,000 for many,
# whose posix_memalign calls malloc inside (an inner call, not counted
# again).
probes() {
	local mode=$1 want sample=()
	if [[ $mode == sample ]]; then
		sample=(--sample 64K)
		if has_sessions; then
			want='alloctrace: sampling with uprobe sessions: a call sampling passes by takes no return probe'
		else
			want='alloctrace: sampling with entry and return probes on every call (uprobe sessions need Linux 6.13+, and no --mmap)'
		fi
	fi
	# It sleeps 5 s after its allocations: time to look at its links.
	start_tool "$mode" 60 --format json -T 0 "${sample[@]}" -- "$WL/leaks" 0 5
	if wait_tracing "$mode" 30; then
		[[ $mode != sample ]] || expect_eq "$mode: the mode said on $(uname -r)" "$want" \
			"$(grep '^alloctrace: sampling with' "$TMP/$mode.err")"
		! has_sessions ||
			expect_eq "$mode: the programs attached" "alloc_session free_enter" "$(attached)"
	fi
	wait_tool "$mode"
	if expect_tool_ok "$mode"; then
		r=$(final_report "$TMP/$mode.out")
		expect_eq "$mode: allocs, every call" 10159 "$(report_get "$r" .totals.allocs)"
		expect_eq "$mode: no untracked frees counted" 0 "$(report_get "$r" .totals.untracked_frees)"
	fi
	run_tool "$mode-nested" 60 --format json -T 0 "${sample[@]}" -- "$WL/many"
	if expect_tool_ok "$mode-nested"; then
		expect_eq "$mode: allocs of many, inner calls not counted" 130000 \
			"$(report_get "$(final_report "$TMP/$mode-nested.out")" .totals.allocs)"
	fi
}

probes_sample() {
	probes sample
}

probes_full() {
	probes full
}

# The text report says what sampling counts: the header's outstanding
# numbers and allocs are estimates (exact at a rate of 1), its frees those
# of sampled blocks; and each of the peak's lines names its stack's first
# three frames, where frame #0 alone would not tell two stacks apart.
text() {
	run_tool text 60 -T 0 --sample 1 -- "$WL/leaks"
	expect_eq "text: exit status" 0 "$RC"
	expect_match "text: the header says estimates and sampled frees" \
		'^\[[0-9:]+\] final report, pid [0-9]+ \(leaks\) exited with status 0: about 50\.3 KiB \(51,478 bytes\) outstanding in 137 blocks; about 10,159 allocs; [0-9,]+ frees of sampled blocks$' \
		"$(grep 'final report' "$TMP/text.out")"
	expect_eq "text: the sampling line" \
		'  estimates from allocations sampled every 1 byte on average; the frees are counted only of sampled blocks' \
		"$(grep '^  estimates' "$TMP/text.out")"
	expect_eq "text: the peak's lines name three frames each" \
		"$(printf '%s\n' 'leak_medium < main < __libc_start_call_main' \
			'leak_pvalloc < leak_memalign_family < main')" \
		"$(grep -E '^        [0-9.]+ KiB \([0-9,]+ bytes\) in ' "$TMP/text.out" | sed -E 's/.* in //; s/\+0x[0-9a-f]+//g' | head -n 2)"
}

cases exact estimate probes_sample probes_full text
finish
