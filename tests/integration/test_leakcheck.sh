#!/bin/bash
# The leak-check engine (user/leakcheck/) on a real process: the classes of
# tests/workloads/leakclasses.c's blocks, per function, exactly as known
# and as valgrind memcheck finds them at the same waiting point; the
# target left running, unharmed and without a zombie; an already-traced
# target refused. Driven by build/tests/leakscan, without the BPF side;
# then alloctrace --leak-check itself, with the BPF side: at a launched
# command's exit against valgrind's check at exit, and with -p (and
# --comm) while the target waits.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
source "$(dirname "$0")/../lib.sh"
SCAN=$ROOT/build/tests/leakscan

EXPECTED="hold_length64 reachable 56 1
hold_newarray reachable 80 1
hold_register reachable 72 1
hold_second_base reachable 32 1
hold_stdstring reachable 40 1
hold_thread_stack reachable 88 1
hold_tls reachable 56 1
hold_untracked reachable 24 1
keep_reachable reachable 300 3
leak_cycle definitely lost 40 1
leak_cycle indirectly lost 80 2
leak_definite definitely lost 128 2
leak_header possibly lost 40 1
leak_interior possibly lost 200 1
leak_list definitely lost 48 1
leak_list indirectly lost 144 3
stale_fastbin definitely lost 136 1
stale_tcache definitely lost 120 1"

# valgrind's default heuristics: each made one hold_* block reachable.
HEURISTICS="stdstring 40 1
length64 56 1
newarray 80 1
multipleinheritance 32 1"

classes() {
	grep -E ' (reachable|lost) [0-9]+ [0-9]+$' "$1" | sort
}

# scan NAME ARGS...: leakscan's output in $TMP/NAME.out, its status in RC.
scan() {
	local name=$1
	shift
	RC=0
	timeout -k 5 60 "$SCAN" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
}

scan fork "$WL/leakclasses"
expect_eq "snapshot scan: exits 0, target exits cleanly" 0 "$RC"
expect_eq "snapshot scan: classes per function" "$EXPECTED" "$(classes "$TMP/fork.out")"
expect_eq "snapshot scan: three threads stopped" "threads 3" "$(grep '^threads' "$TMP/fork.out")"
# Only untracked in-use chunks as roots: the glibc heap was walked whole.
expect_eq "snapshot scan: verdicts rest only on untracked chunks as roots" \
	"assumptions 0x1" "$(grep '^assumptions' "$TMP/fork.out")"
expect_eq "snapshot scan: no warning" "" "$(cat "$TMP/fork.err")"
expect_eq "snapshot scan: reachable via each heuristic" "$HEURISTICS" \
	"$(sed -n 's/^heuristic //p' "$TMP/fork.out")"
pause=$(sed -n 's/^pause_us \([0-9]*\).*/\1/p' "$TMP/fork.out")
# The pause is measured and said; how short it is, is bench/leakheap's to
# show (a timed assertion on a shared machine fails for the machine's load).
expect_true "snapshot scan: pause measured (${pause:-?} us)" "pause ${pause:-?} us" \
	test "${pause:-0}" -gt 0

scan stopped --no-fork "$WL/leakclasses"
expect_eq "stopped scan: exits 0" 0 "$RC"
expect_eq "stopped scan: the same classes" "$EXPECTED" "$(classes "$TMP/stopped.out")"
expect_eq "stopped scan: says the target stayed stopped" "assumptions 0x11" \
	"$(grep '^assumptions' "$TMP/stopped.out")"

scan traced strace -f -o /dev/null "$WL/leakclasses"
expect_eq "traced target: refused" 1 "$RC"
expect_match "traced target: one clear line" "process [0-9]+ is already traced by process [0-9]+" \
	"$(head -n 1 "$TMP/traced.err")"

# valgrind memcheck's leak search at the same waiting point, through vgdb.
mkfifo "$TMP/in"
sleep 120 >"$TMP/in" &
track $!
HOLD=$!
valgrind --vgdb=yes --log-file="$TMP/vg.log" "$WL/leakclasses" <"$TMP/in" >"$TMP/vg.out" &
track $!
for _ in $(seq 600); do
	grep -q '^ready$' "$TMP/vg.out" 2>/dev/null && break
	sleep 0.1
done
VPID=$(sed -n 's/^pid //p' "$TMP/vg.out")
# The monitor command's heuristics default to none, the command line's to all.
timeout 60 vgdb --pid="${VPID:-0}" leak_check full kinds all heuristics all >"$TMP/vgdb.out" 2>&1
kill "$HOLD" 2>/dev/null

# Loss records of blocks malloc'd by tracked(), per function calling it,
# in leakscan's form; the direct bytes of a record that has indirect ones too.
valgrind_classes() {
	sed -e 's/^==[0-9]*== //' -e 's/ (+[0-9]*)//g' "$1" | awk '
	/ blocks are .* in loss record / {
		bytes = $1
		if ($2 ~ /^\(/) { bytes = substr($2, 2) }
		kind = $0; sub(/.* blocks are /, "", kind); sub(/ in loss record.*/, "", kind)
		sub(/^still /, "", kind)
		blocks = $0; sub(/ blocks are .*/, "", blocks); sub(/.* in /, "", blocks)
		first = 1; want = 0; next
	}
	first && /^ *by 0x/ { want = $3 == "tracked"; first = 0; next }
	want && /^ *by 0x/ {
		fn = $3; if (fn == "alloc_for_register") fn = "hold_register"
		key = fn " " kind; b[key] += bytes; n[key] += blocks; want = 0
	}
	END { for (k in b) print k, b[k], n[k] }' | sort
}
expect_eq "valgrind memcheck: the same classes per function" "$EXPECTED" \
	"$(valgrind_classes "$TMP/vgdb.out")"

# valgrind's "of which reachable via heuristic" lines as "NAME BYTES BLOCKS".
valgrind_heuristics() {
	sed 's/ (+[0-9,]*)//g' "$1" |
		sed -n 's/^==[0-9]*== *\(stdstring\|length64\|newarray\|multipleinheritance\) *: \([0-9,]*\) bytes in \([0-9,]*\) blocks$/\1 \2 \3/p' | tr -d ,
}
expect_eq "valgrind memcheck: the same blocks reachable via each heuristic" "$HEURISTICS" \
	"$(valgrind_heuristics "$TMP/vgdb.out")"

# --- alloctrace --leak-check: the session's verdicts -------------------------

# The classes of a report's stacks per function calling tracked(), in the
# same form: "FUNCTION CLASS BYTES BLOCKS", classes with blocks only.
report_classes() {
	leak_classes "$1" '.stacks[] | select(.frames[0].function == "tracked") |
		[(.frames[1].function | sub("^alloc_for_register$"; "hold_register")), .]'
}

# "NAME BYTES BLOCKS" for each heuristic of a report's leak check.
report_heuristics() {
	jq -r '.leak_check.reachable_via_heuristic | to_entries[] |
		"\(.key) \(.value.bytes) \(.value.allocs)"' <<<"$1"
}

# "definitely lost B N", ... from a report's totals, as valgrind's summary says them.
report_summary() {
	jq -r '.totals | "definitely lost: \(.definitely_lost_bytes) \(.definitely_lost_allocs)",
		"indirectly lost: \(.indirectly_lost_bytes) \(.indirectly_lost_allocs)",
		"possibly lost: \(.possibly_lost_bytes) \(.possibly_lost_allocs)",
		"still reachable: \(.reachable_bytes) \(.reachable_allocs)"' <<<"$1"
}

valgrind_summary() {
	sed -n 's/^==[0-9]*== *\(definitely lost\|indirectly lost\|possibly lost\|still reachable\): \([0-9,]*\) bytes in \([0-9,]*\) blocks/\1: \2 \3/p' "$1" |
		tr -d ,  | sed 's/lost /lost: /; s/reachable /reachable: /' | sed 's/:: /: /'
}

# At exit: the launched command's last state, after its exit handlers;
# in its "exit" mode it starts neither thread.
EXPECTED_EXIT=$(grep -v -e '^hold_register ' -e '^hold_thread_stack ' <<<"$EXPECTED")

# -o: the command's own lines go to stdout.
run_tool exit 60 --leak-check -T 0 --format json -o "$TMP/exit.json" --pprof "$TMP/exit.pb.gz" \
	--html "$TMP/exit.html" -- "$WL/leakclasses" exit
R=$(final_report "$TMP/exit.json")
expect_eq "--leak-check at exit: exit status" 0 "$RC"
expect_eq "--leak-check at exit: classes per function" "$EXPECTED_EXIT" "$(report_classes "$R")"
expect_eq "--leak-check at exit: assumptions" '["untracked_blocks_as_roots","target_stopped_for_scan"]' \
	"$(report_get "$R" .leak_check.assumptions)"
expect_eq "--leak-check at exit: definitely lost stacks first" "true" \
	"$(report_get "$R" '[.stacks[].definitely_lost_bytes > 0] | . == (sort | reverse)')"
expect_eq "--leak-check at exit: no warning" "" "$(unsaid "$TMP/exit.err")"

valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no --run-cxx-freeres=no \
	--log-file="$TMP/vgexit.log" "$WL/leakclasses" exit >/dev/null
expect_eq "--leak-check at exit: valgrind's classes per function" \
	"$(valgrind_classes "$TMP/vgexit.log")" "$(report_classes "$R")"
expect_eq "--leak-check at exit: valgrind's leak summary" \
	"$(valgrind_summary "$TMP/vgexit.log")" "$(report_summary "$R")"
expect_eq "--leak-check at exit: valgrind's blocks reachable via each heuristic" \
	"$(valgrind_heuristics "$TMP/vgexit.log")" "$(report_heuristics "$R")"
expect_eq "--leak-check at exit: the heuristics' blocks as valgrind's" "$HEURISTICS" \
	"$(report_heuristics "$R")"

# --leak-check-heuristics=none: each of them possibly lost, as valgrind's.
run_tool noheur 60 --leak-check --leak-check-heuristics=none -T 0 --format json \
	-o "$TMP/noheur.json" -- "$WL/leakclasses" exit
RN=$(final_report "$TMP/noheur.json")
valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no --run-cxx-freeres=no \
	--leak-check-heuristics=none --log-file="$TMP/vgnoheur.log" "$WL/leakclasses" exit >/dev/null
expect_eq "--leak-check-heuristics=none: valgrind's classes per function" \
	"$(valgrind_classes "$TMP/vgnoheur.log")" "$(report_classes "$RN")"
expect_eq "--leak-check-heuristics=none: the four shapes possibly lost" \
	"hold_length64 possibly lost 56 1
hold_newarray possibly lost 80 1
hold_second_base possibly lost 32 1
hold_stdstring possibly lost 40 1" "$(report_classes "$RN" | grep '^hold_[a-z0-9_]* possibly')"
expect_eq "--leak-check-heuristics=none: none counted" "{}" \
	"$(jq -c '.leak_check.reachable_via_heuristic' <<<"$RN")"
run_tool badheur 10 --leak-check --leak-check-heuristics=stdstring,bogus -- true
expect_eq "--leak-check-heuristics: a bad name, usage error" 2 "$RC"
expect_match "--leak-check-heuristics: one line naming the names" \
	"invalid value 'stdstring,bogus' for --leak-check-heuristics" "$(cat "$TMP/badheur.err")"

expect_match "--leak-check at exit: pprof's definitely lost space, as valgrind's" \
	"Total samples = 472B" \
	"$(go tool pprof -sample_index=definitely_lost_space -top "$TMP/exit.pb.gz" 2>&1)"

# pprof: a sample type per class, and per function calling tracked() the
# same classes: "FUNCTION CLASS BYTES BLOCKS" as report_classes gives them
# (whose stacks start at tracked: not printf's buffer, allocated inside it).
pprof_classes() {
	local cls name unit
	for cls in definitely_lost:"definitely lost" indirectly_lost:"indirectly lost" \
		possibly_lost:"possibly lost" reachable:reachable; do
		name=${cls#*:}
		for unit in space objects; do
			go tool pprof -top -nodefraction=0 -nodecount=10000 -unit=B -focus='^tracked$' \
				-ignore='^_IO_file_doallocate$' \
				-sample_index="${cls%%:*}_$unit" "$1" 2>/dev/null |
				awk -v c="$name" -v u="$unit" '$2 ~ /%$/ && $NF != "tracked" && $4 ~ /^[1-9][0-9]*B?$/ &&
					$NF !~ /^(main|_start|__libc_start)/ { sub(/B$/, "", $4); print $NF, c, u, $4 }'
		done
	done | awk '{ k = $1 " " $2 (NF == 5 ? " " $3 : "")
		if ($(NF-1) == "space") b[k] = $NF; else n[k] = $NF }
		END { for (k in b) print k, b[k], n[k] }' | sort
}
expect_eq "--leak-check at exit: pprof's sample types, a pair per class" \
	"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes definitely_lost_objects/count definitely_lost_space/bytes indirectly_lost_objects/count indirectly_lost_space/bytes possibly_lost_objects/count possibly_lost_space/bytes reachable_objects/count reachable_space/bytes" \
	"$(go tool pprof -raw "$TMP/exit.pb.gz" 2>/dev/null | grep -m1 '^alloc_objects' | sed 's/\[dflt\]//')"
expect_eq "--leak-check at exit: pprof's classes per function" "$EXPECTED_EXIT" \
	"$(pprof_classes "$TMP/exit.pb.gz")"

# The HTML page: valgrind's summary, the classes of each stack, and a flame
# graph of the definitely lost bytes.
if expect_page_drawn exit-page "$TMP/exit.html"; then
	dom=$DOM
	html_summary() {
		local cls label
		for cls in definitely_lost:"definitely lost" indirectly_lost:"indirectly lost" \
			possibly_lost:"possibly lost" reachable:"still reachable"; do
			label=${cls#*:}
			tr -d '\n' <<<"$dom" |
				grep -o "id=\"stat-${cls%%:*}\"><div class=\"label\">[^<]*</div><div class=\"value\">[^<]*</div><div class=\"sub\">[^<]*<" |
				sed 's/.*<div class="sub">\([0-9,]*\) bytes in \([0-9,]*\) blocks\?<.*/\1 \2/' |
				tr -d , | sed "s/^/$label: /"
		done
	}
	expect_eq "HTML: the summary's classes are valgrind's leak summary" \
		"$(valgrind_summary "$TMP/vgexit.log")" "$(html_summary)"
	expect_match "HTML: the pause and what the verdicts rest on" \
		'id="stat-leak-check"><div class="label">Leak check</div><div class="value">paused [0-9.]+ ms</div><div class="sub">[^<]* of roots scanned; assumed: untracked_blocks_as_roots, target_stopped_for_scan<' \
		"$dom"
	# Columns: #, function, module, source, outstanding, trend, share, blocks,
	# allocs, then definitely, indirectly, possibly lost and reachable.
	expect_eq "HTML: the leaked list's head, definitely lost, its nodes indirectly" \
		$'48 B in 1\t144 B in 3\t\t' \
		"$(leaker_row "$dom" tracked | awk -F'\t' '$11 == "48 B in 1"' | cut -f 11-14)"
	# The table shows its first 20 rows until asked for all: the report's first 20 stacks.
	expect_eq "HTML: every row's classes, summed, are the report's first 20 stacks'" \
		"$(jq -r '.stacks[:20] | "\(map(.definitely_lost_bytes) | add) \(map(.indirectly_lost_bytes) | add) \(map(.possibly_lost_bytes) | add) \(map(.reachable_bytes) | add)"' <<<"$R")" \
		"$({
			leaker_row "$dom" tracked
			leaker_row "$dom" _IO_file_doallocate
			leaker_row "$dom" hold_untracked
		} | awk -F'\t' '
			function b(s) { split(s, w, " "); return w[2] == "KiB" ? w[1] * 1024 : w[1] + 0 }
			{ for (i = 11; i <= 14; i++) t[i] += b($i) }
			END { print t[11], t[12], t[13], t[14] }')"
	expect_match "HTML: definitely lost stacks first, then the others" '^1+0+$' \
		"$(leaker_row "$dom" "" | awk -F'\t' '{ printf "%d", $11 != "" }')"
	flame=$(sed -n '/id="flame-lost-svg"/,/<\/svg>/p' <<<"$dom")
	expect_match "HTML: a flame graph of definitely lost bytes, 472 in all" \
		'<text[^>]*>all: 472 bytes</text>' "$flame"
	for f in leak_definite leak_list leak_cycle stale_fastbin stale_tcache; do
		expect_match "HTML: the lost flame graph names $f" "<text[^>]*>$f</text>" "$flame"
	done
	expect_eq "HTML: and nothing that is not definitely lost" "" \
		"$(grep -oE '<text[^>]*>(keep_reachable|leak_interior|hold_tls|hold_untracked)</text>' \
			<<<"$flame")"
fi

# waiting PROG NAME: leakclasses as PROG, waiting to be told to go through
# the fifo $TMP/NAME.in (held open by HOLD), its output in $TMP/NAME.wl, its
# pid in WL_PID.
waiting() {
	mkfifo "$TMP/$2.in"
	sleep 120 >"$TMP/$2.in" &
	track $!
	HOLD=$!
	"$1" wait <"$TMP/$2.in" >"$TMP/$2.wl" &
	track $!
	WL_PID=$!
}

# With -p, while it waits: the final report (SIGINT) scans the running target.
waiting "$WL/leakclasses" p
PHOLD=$HOLD
PWL=$WL_PID
start_tool pid 60 --leak-check -T 0 --format json -i 3600 -p "$PWL"
wait_tracing pid 30 || fail "-p --leak-check: tracing" "no 'tracing pid' line in 30 s"
echo go >"$TMP/p.in"
wait_for 30 grep -q '^ready$' "$TMP/p.wl" || fail "-p --leak-check: ready" "not ready in 30 s"
kill -INT "$(loader_pid)"
wait_tool
R=$(final_report "$TMP/pid.out")
expect_eq "-p --leak-check: exit status" 0 "$RC"
expect_eq "-p --leak-check: classes per function, as valgrind at the waiting point" \
	"$EXPECTED" "$(report_classes "$R")"
expect_eq "-p --leak-check: reachable via each heuristic, as valgrind at the waiting point" \
	"$HEURISTICS" "$(report_heuristics "$R")"
expect_true "-p --leak-check: the target still runs" "pid $PWL gone" alive "$PWL"
kill "$PHOLD" 2>/dev/null
wait "$PWL"
expect_eq "-p --leak-check: the target exits 0" 0 "$?"

# --comm: the process of that name running at the start is attached as -p
# would, and its verdicts are -p's.
CNAME=lc$$
CNAME=${CNAME:0:15}
cp "$WL/leakclasses" "$TMP/$CNAME"
waiting "$TMP/$CNAME" c
CHOLD=$HOLD
CWL=$WL_PID
start_tool comm 60 --leak-check -T 0 --top-processes 0 --format json -i 3600 --comm "$CNAME"
wait_line comm "tracing every process named '$CNAME'" ||
	fail "--comm --leak-check: tracing" "no 'tracing every process named' line in 20 s"
echo go >"$TMP/c.in"
wait_for 30 grep -q '^ready$' "$TMP/c.wl" || fail "--comm --leak-check: ready" "not ready in 30 s"
kill -INT "$(loader_pid)"
wait_tool
R=$(proc_of "$(final_report "$TMP/comm.out")" "$CWL")
expect_eq "--comm --leak-check: exit status" 0 "$RC"
expect_eq "--comm --leak-check: classes per function, as -p's" "$EXPECTED" "$(report_classes "$R")"
expect_eq "--comm --leak-check: reachable via each heuristic, as -p's" \
	"$HEURISTICS" "$(report_heuristics "$R")"
kill "$CHOLD" 2>/dev/null
wait "$CWL"
expect_eq "--comm --leak-check: the target exits 0" 0 "$?"

# A launched command checked while it runs (-i 1): alloctrace traces it
# itself, so it holds it in a stop of its own for each check; every
# report has the verdicts of the same waiting point, -p's and valgrind's.
mkfifo "$TMP/lin"
sleep 120 >"$TMP/lin" &
track $!
LHOLD=$!
timeout --foreground -k 30 60 "$TOOL" --leak-check -i 1 -T 0 --format json \
	-o "$TMP/launched.json" -- "$WL/leakclasses" <"$TMP/lin" >"$TMP/launched.out" \
	2>"$TMP/launched.err" &
TOOL_PID=$!
TOOL_PIDS+=("$TOOL_PID")
wait_for 60 grep -q '^ready$' "$TMP/launched.out" || fail "-i 1 -- CMD: ready" "not ready in 60 s"
periodic() { count_lines "$TMP/launched.json" '.type == "report" and .final == false'; }
N0=$(periodic)
two_more() { test "$(periodic)" -ge $((N0 + 2)); }
wait_for 60 two_more ||
	fail "-i 1 -- CMD: reports" "not two reports in 60 s"
kill "$LHOLD" 2>/dev/null
wait_tool
expect_eq "-i 1 -- CMD: exit status" 0 "$RC"
for k in 0 1; do
	R=$(jq -c 'select(.type == "report" and .final == false)' "$TMP/launched.json" |
		sed -n "$((N0 + k + 1))p")
	expect_eq "-i 1 -- CMD: report $((k + 1)) after ready, classes per function as -p's" \
		"$EXPECTED" "$(report_classes "$R")"
	expect_eq "-i 1 -- CMD: report $((k + 1)), reachable via each heuristic" \
		"$HEURISTICS" "$(report_heuristics "$R")"
	expect_eq "-i 1 -- CMD: report $((k + 1)), its three threads stopped for the scan" \
		'["untracked_blocks_as_roots","target_stopped_for_scan"]' \
		"$(jq -c '.leak_check.assumptions' <<<"$R")"
done
expect_eq "-i 1 -- CMD: no report without verdicts" 0 \
	"$(count_lines "$TMP/launched.json" '.leak_check.error != null')"
expect_eq "-i 1 -- CMD: no warning" "" "$(unsaid "$TMP/launched.err")"
R=$(final_report "$TMP/launched.json")
expect_eq "-i 1 -- CMD: the final report checked at the exit stop" \
	'["untracked_blocks_as_roots","target_stopped_for_scan","registers_at_each_thread_exit"]' \
	"$(jq -c '.leak_check.assumptions' <<<"$R")"
# exit_group killed its two threads: each one's registers, read at its own
# exit stop, were roots, so hold_register's block is still reachable.
expect_eq "-i 1 -- CMD: at exit, the registers of its 3 threads" 3 \
	"$(jq -c '.leak_check.threads' <<<"$R")"
expect_eq "-i 1 -- CMD: at exit, classes per function as while it ran" "$EXPECTED" \
	"$(report_classes "$R")"

# -p A,B: each process its classes, the run their sums, in the JSON
# totals and the text's run-wide leak summary.
two_waiting() {
	local n
	for n in a b; do
		mkfifo "$TMP/$n.in"
		sleep 120 >"$TMP/$n.in" &
		track $!
		"$WL/leakclasses" wait <"$TMP/$n.in" >"$TMP/$n.wl" &
		track $!
		eval "W_$n=$!"
	done
}

# lost "B N B N B N": the lost classes of a totals object.
lost() {
	jq -r '"\(.definitely_lost_bytes) \(.definitely_lost_allocs) \(.indirectly_lost_bytes) \(.indirectly_lost_allocs) \(.possibly_lost_bytes) \(.possibly_lost_allocs)"'
}

# Each process: 472 bytes in 6 blocks definitely lost, 224 in 5 indirectly;
# possibly lost, leak_interior's 200 bytes, leak_header's 40 and its two threads' TLS (the
# DTV glibc's pthread_create callocs, 288 bytes, held by an interior
# pointer: valgrind says the same).
for fmt in json text; do
	two_waiting
	start_tool two-$fmt 60 --leak-check -T 0 --format $fmt -i 3600 -p "$W_a,$W_b"
	# Both traced before either runs: a line each, once its probes are in.
	wait_for 60 tracing_both two-$fmt || fail "-p A,B ($fmt): tracing" "no two 'tracing pid' lines in 60 s"
	echo go >"$TMP/a.in"
	echo go >"$TMP/b.in"
	wait_for 30 grep -q '^ready$' "$TMP/a.wl" || fail "-p A,B: ready" "a not ready in 30 s"
	wait_for 30 grep -q '^ready$' "$TMP/b.wl" || fail "-p A,B: ready" "b not ready in 30 s"
	kill -INT "$(loader_pid)"
	wait_tool
	expect_eq "-p A,B ($fmt): exit status" 0 "$RC"
	rm -f "$TMP/a.in" "$TMP/b.in"
done
R=$(final_report "$TMP/two-json.out")
expect_eq "-p A,B: each process's lost classes" "472 6 224 5 816 4
472 6 224 5 816 4" "$(jq -c '.processes[].totals' <<<"$R" | lost)"
expect_eq "-p A,B: the run's lost classes, their sums" "944 12 448 10 1632 8" \
	"$(jq -c '.totals' <<<"$R" | lost)"
expect_eq "-p A,B: the run's reachable, the sum of both" \
	"$(jq '[.processes[].totals.reachable_bytes] | add' <<<"$R") $(jq '[.processes[].totals.reachable_allocs] | add' <<<"$R")" \
	"$(jq -r '.totals | "\(.reachable_bytes) \(.reachable_allocs)"' <<<"$R")"
expect_eq "-p A,B: the run's check: two processes, their assumptions" \
	'2 ["untracked_blocks_as_roots"]' "$(jq -c -r '.leak_check | "\(.processes) \(.assumptions)"' <<<"$R")"
expect_eq "-p A,B (text): the run-wide leak summary" \
	"definitely lost 944 bytes in 12 blocks
indirectly lost 448 bytes in 10 blocks
possibly lost 1,632 bytes in 8 blocks" \
	"$(sed -n '/final report, 2 processes/,/^pid /p' "$TMP/two-text.out" |
		sed -n '/leak summary of 2 processes/,/still reachable/p' |
		grep -E '^ +(definitely|indirectly|possibly) lost' | sed 's/^ *//')"
expect_eq "-p A,B (text): the run's blocks reachable via each heuristic, both summed" \
	"$(awk '{ print $1, $2 * 2, $3 * 2 }' <<<"$HEURISTICS")" \
	"$(sed -n '/final report, 2 processes/,/^pid /p' "$TMP/two-text.out" |
		sed -n '/of which reachable via heuristic/,/assumed/p' |
		sed -n 's/^ *\([a-z0-9]*\) *: \([0-9,]*\) bytes in \([0-9,]*\) blocks\{0,1\}$/\1 \2 \3/p')"
finish
