#!/bin/bash
# Allocator wrappers with a header: tests/workloads/leakwrap.c's wrappers
# return their block + 16 and + 24, past a header of their own (MariaDB's
# my_malloc). valgrind, which knows no wrapper, calls the blocks their
# callers hold possibly lost; so does alloctrace with
# --leak-check-wrapper none. By default alloctrace learns each wrapper's
# offset from where its possibly lost blocks are held (3 blocks at + 16,
# 2 at + 24), names it in the report, and those blocks are reachable (via
# "wrapper"), the lost ones still lost; declared (--leak-check-wrapper
# FUNC:OFFSET), the same without learning. Checked at the launched
# command's exit, per function calling a wrapper, in bytes and blocks.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
source "$(dirname "$0")/../lib.sh"
require_built "$WL/leakwrap"

WRAPPERS=(--leak-check-wrapper wrap16_malloc:16 --leak-check-wrapper wrap24_malloc:24)

# valgrind's answer: it knows no wrapper.
EXPECTED_VALGRIND="inside possibly lost 80 1
keep16 possibly lost 348 3
keep24 possibly lost 128 2
leak16 definitely lost 128 2
leak24 definitely lost 40 1
leak24 indirectly lost 80 2"

# Declared: the pointers the wrappers returned are start pointers. inside()
# holds its block 8 bytes past that: still possibly lost.
EXPECTED_WRAPPED="inside possibly lost 80 1
keep16 reachable 348 3
keep24 reachable 128 2
leak16 definitely lost 128 2
leak24 definitely lost 40 1
leak24 indirectly lost 80 2"

# "CALLER CLASS BYTES BLOCKS" of a report's stacks whose first frame is a wrapper.
report_classes() {
	leak_classes "$1" '.stacks[] | select(.frames[0].function | test("^wrap(16|24)_malloc$")) |
		[.frames[1].function, .]'
}

# The same from valgrind's loss records: malloc, a wrapper, its caller.
valgrind_classes() {
	sed -e 's/^==[0-9]*== //' "$1" | awk '
	/ blocks are .* in loss record / {
		bytes = $1
		if ($2 ~ /^\(/) { bytes = substr($2, 2) }
		kind = $0; sub(/.* blocks are /, "", kind); sub(/ in loss record.*/, "", kind)
		sub(/^still /, "", kind)
		blocks = $0; sub(/ blocks are .*/, "", blocks); sub(/.* in /, "", blocks)
		first = 1; want = 0; next
	}
	first && /^ *by 0x/ { want = $3 ~ /^wrap(16|24)_malloc$/; first = 0; next }
	want && /^ *by 0x/ { key = $3 " " kind; b[key] += bytes; n[key] += blocks; want = 0 }
	END { for (k in b) print k, b[k], n[k] }' | sort
}

heuristics() {
	jq -c '.leak_check.reachable_via_heuristic' <<<"$1"
}

declared() {
	local r
	run_tool wrapped 60 --leak-check -T 0 --format json -o "$TMP/wrapped.json" "${WRAPPERS[@]}" \
		-- "$WL/leakwrap"
	r=$(final_report "$TMP/wrapped.json")
	expect_eq "declared: exit status" 0 "$RC"
	expect_eq "declared: classes per function" "$EXPECTED_WRAPPED" "$(report_classes "$r")"
	expect_eq "declared: counted as reachable via wrapper" '{"bytes":476,"allocs":5}' \
		"$(jq -c '.leak_check.reachable_via_heuristic.wrapper' <<<"$r")"
	expect_eq "declared: valgrind's heuristics found none" \
		'[0,0,0,0]' "$(jq -c '[.leak_check.reachable_via_heuristic[] | .allocs] | .[:4]' <<<"$r")"
	expect_eq "declared: the assumption said" \
		'["untracked_blocks_as_roots","target_stopped_for_scan","wrapper_offset_as_start"]' \
		"$(jq -c '.leak_check.assumptions' <<<"$r")"
	expect_eq "declared: no warning" "" "$(unsaid "$TMP/wrapped.err")"
	WRAPPED=$r
}

# With no option: learned.
learned() {
	run_tool learned 60 --leak-check -T 0 --format json -o "$TMP/learned.json" -- "$WL/leakwrap"
	LEARNED=$(final_report "$TMP/learned.json")
	expect_eq "learned: exit status" 0 "$RC"
	expect_eq "learned: classes per function" "$EXPECTED_WRAPPED" "$(report_classes "$LEARNED")"
	expect_eq "learned: the wrappers and offsets named" \
		'[{"function":"wrap16_malloc","offset":16,"blocks":3},{"function":"wrap24_malloc","offset":24,"blocks":2}]' \
		"$(jq -c '.leak_check.learned_wrappers' <<<"$LEARNED")"
	expect_eq "learned: counted as reachable via wrapper" '{"bytes":476,"allocs":5}' \
		"$(jq -c '.leak_check.reachable_via_heuristic.wrapper' <<<"$LEARNED")"
	expect_eq "learned: the assumption said" \
		'["untracked_blocks_as_roots","target_stopped_for_scan","learned_wrapper_offset_as_start"]' \
		"$(jq -c '.leak_check.assumptions' <<<"$LEARNED")"
	expect_eq "declared: nothing learned besides" '[]' \
		"$(jq -c '.leak_check.learned_wrappers' <<<"$WRAPPED")"
}

# --leak-check-wrapper none: valgrind's verdicts.
unlearned() {
	run_tool plain 60 --leak-check -T 0 --format json -o "$TMP/plain.json" \
		--leak-check-wrapper none -- "$WL/leakwrap"
	PLAIN=$(final_report "$TMP/plain.json")
	expect_eq "none: exit status" 0 "$RC"
	expect_eq "none: classes per function" "$EXPECTED_VALGRIND" "$(report_classes "$PLAIN")"
	expect_eq "none: no wrapper counted" "null" \
		"$(jq -c '.leak_check.reachable_via_heuristic.wrapper' <<<"$PLAIN")"
	expect_eq "none: no wrapper learned" '[]' "$(jq -c '.leak_check.learned_wrappers' <<<"$PLAIN")"
	expect_eq "none: no wrapper assumed" '["untracked_blocks_as_roots","target_stopped_for_scan"]' \
		"$(jq -c '.leak_check.assumptions' <<<"$PLAIN")"
}

# valgrind at exit: the undeclared run's classes; the declared run's differ
# exactly where a caller holds what a wrapper returned.
run_valgrind() {
	valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
		--run-cxx-freeres=no --log-file="$TMP/vg.log" "$WL/leakwrap"
}

against_valgrind() {
	local vg
	run_valgrind
	expect_eq "valgrind: exit status" 0 "$?"
	vg=$(valgrind_classes "$TMP/vg.log")
	expect_eq "valgrind: the classes known" "$EXPECTED_VALGRIND" "$vg"
	expect_eq "none: valgrind's classes" "$vg" "$(report_classes "$PLAIN")"
	expect_eq "none: valgrind's possibly lost" \
		"$(grep -o 'possibly lost: [0-9,]* bytes' "$TMP/vg.log" | tr -dc 0-9)" \
		"$(jq '.totals.possibly_lost_bytes' <<<"$PLAIN")"
	for run in declared learned; do
		r=$WRAPPED
		[ "$run" = learned ] && r=$LEARNED
		expect_eq "$run: valgrind's but the held blocks reachable" \
			"$(sed -E 's/^(keep16|keep24) possibly lost /\1 reachable /' <<<"$vg")" \
			"$(report_classes "$r")"
		expect_eq "$run: valgrind's possibly lost less the held blocks" \
			"$(($(grep -o 'possibly lost: [0-9,]* bytes' "$TMP/vg.log" | tr -dc 0-9) - 476))" \
			"$(jq '.totals.possibly_lost_bytes' <<<"$r")"
	done
}

text_line() {
	run_tool text 60 --leak-check -T 0 "${WRAPPERS[@]}" -- "$WL/leakwrap"
	expect_eq "text: reachable via heuristic: wrapper" "wrapper: 476 bytes in 5 blocks" \
		"$(grep -A 8 'of which reachable via heuristic:' "$TMP/text.out" |
			sed -n 's/^ *wrapper *: /wrapper: /p')"
	expect_eq "text: the assumption said" 1 \
		"$(grep -c 'assumed: blocks of a wrapper given by --leak-check-wrapper' "$TMP/text.out")"
	run_tool textlearned 60 --leak-check -T 0 -- "$WL/leakwrap"
	expect_eq "text: the learned wrappers named" \
		"learned: wrap16_malloc returns its block + 16 (3 blocks held there)
learned: wrap24_malloc returns its block + 24 (2 blocks held there)" \
		"$(sed -n 's/^ *learned: /learned: /p' "$TMP/textlearned.out")"
	expect_eq "text: the learned assumption said" 1 \
		"$(grep -c 'assumed: blocks of a function whose possibly lost blocks were held at one offset' \
			"$TMP/textlearned.out")"
}

bad_input() {
	expect_error "bad input: no offset" --leak-check --leak-check-wrapper my_malloc -- true
	expect_error "bad input: offset 0" --leak-check --leak-check-wrapper my_malloc:0 -- true
	expect_error "bad input: offset past 4096" --leak-check --leak-check-wrapper my_malloc:4097 \
		-- true
	expect_error "bad input: no --leak-check" --leak-check-wrapper my_malloc:24 -- true
	expect_error "bad input: none without --leak-check" --leak-check-wrapper none -- true
}

cases declared learned unlearned against_valgrind text_line bad_input
plan
finish
