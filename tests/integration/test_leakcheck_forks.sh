#!/bin/bash
# --follow-forks --leak-check -- CMD: each process the run traces is
# checked at its own exit stop, as the launched command is. The children
# of tests/workloads/forkleaks.c leak known amounts and exit before their
# parent does; the run's summary counts every one of them, per function
# exactly as valgrind memcheck (--trace-children=yes) finds them.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
source "$(dirname "$0")/../lib.sh"

EXPECTED="first_child_leak definitely lost 320 10
parent_leak definitely lost 48 3
second_child_keep reachable 128 2
second_child_leak definitely lost 800 4"

# "FUNCTION CLASS BYTES BLOCKS" of a report's stacks: the function that
# called malloc, or drop()'s caller; classes with blocks only.
report_classes() {
	leak_classes "$1" '.processes[].stacks[] |
		[(if .frames[0].function == "drop" then .frames[1] else .frames[0] end).function, .]'
}

# The same from valgrind's loss records, over every process of its log.
valgrind_classes() {
	sed 's/^==[0-9]*== *//' "$1" | tr -d , | awk '
		/ blocks? (are|is) .* in loss record / {
			bytes = $1; blocks = $4; kind = $0
			sub(/.* (are|is) /, "", kind); sub(/ in loss record.*/, "", kind)
			sub(/^still /, "", kind); want = 1; next
		}
		want && /^by 0x/ && $3 != "drop" {
			key = $3 " " kind; b[key] += bytes; n[key] += blocks; want = 0
		}
		END { for (k in b) print k, b[k], n[k] }' | sort
}

run_tool forks 60 --follow-forks --leak-check --format json -o "$TMP/forks.json" \
	-- "$WL/forkleaks"
R=$(final_report "$TMP/forks.json")
expect_eq "--follow-forks --leak-check: exit status" 0 "$RC"
expect_eq "--follow-forks --leak-check: no warning" "" "$(unsaid "$TMP/forks.err")"
expect_eq "--follow-forks --leak-check: three processes checked" 3 \
	"$(report_get "$R" .leak_check.processes)"
expect_eq "--follow-forks --leak-check: the parent and each child exited 0" "0 0 0" \
	"$(jq -r '[.processes[].exit.status] | map(tostring) | join(" ")' <<<"$R")"
expect_eq "--follow-forks --leak-check: classes per function" "$EXPECTED" \
	"$(report_classes "$R")"
expect_eq "--follow-forks --leak-check: the run's totals count the children" \
	"1168 17 0 0 0 0 128 2" \
	"$(jq -r '.totals | "\(.definitely_lost_bytes) \(.definitely_lost_allocs) \(.indirectly_lost_bytes) \(.indirectly_lost_allocs) \(.possibly_lost_bytes) \(.possibly_lost_allocs) \(.reachable_bytes) \(.reachable_allocs)"' <<<"$R")"

valgrind --trace-children=yes --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
	--run-cxx-freeres=no --log-file="$TMP/vg.log" "$WL/forkleaks"
expect_eq "--follow-forks --leak-check: valgrind's classes per function" \
	"$(valgrind_classes "$TMP/vg.log")" "$(report_classes "$R")"

# The text report's run-wide summary names the three.
run_tool text 60 --follow-forks --leak-check -- "$WL/forkleaks"
expect_eq "--follow-forks --leak-check (text): the run-wide leak summary" \
	"leak summary of 3 processes
definitely lost 1,168 bytes in 17 blocks
still reachable 128 bytes in 2 blocks" \
	"$(sed -n '/final report, 3 processes/,/^pid /p' "$TMP/text.out" |
		grep -E '^ +(leak summary of|definitely lost|still reachable)' |
		sed 's/^ *//; s/ (paused.*//')"
finish
