# shellcheck shell=bash
# Helpers for the integration tests: TAP results (the plan, "1..N", comes
# last, when the script exits), named cases, bounded runs of the tool,
# deadlines for every wait, and jq queries on its NDJSON output. Sourced by
# tests/integration/test_*.sh; run.sh counts the lines they print, and
# `prove` reads each script as TAP (docs/testing.md).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# ALLOCTRACE runs the tests against another build, e.g. an installed one.
TOOL=${ALLOCTRACE:-$ROOT/alloctrace}
# shellcheck disable=SC2034 # used by the test files that source this one
WL=$ROOT/build/workloads
# This machine's architecture, as the Makefile's ARCHES name them.
HOST_ARCH=$("$ROOT/scripts/host-arch.sh")
FAILS=0
PIDS=()
TOOL_PIDS=()
TMP=$(mktemp -d /tmp/alloctrace-test.XXXXXX)
# A line for each result printed, by this shell, its subshells, or a helper
# that prints its own TAP lines (fuzz/run.sh): the plan's count, which a
# variable would lose in $(...) and pipelines.
export TAP_COUNT=$TMP/.tap-count
: >"$TAP_COUNT"

# --- results ---------------------------------------------------------------

ok() {
	printf 'ok - %s\n' "$1"
	echo >>"$TAP_COUNT"
}

fail() {
	printf 'not ok - %s: %s\n' "$1" "$2"
	echo >>"$TAP_COUNT"
	FAILS=$((FAILS + 1))
}

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [[ "$3" == "$2" ]]; then
		ok "$1"
	else
		fail "$1" "expected '$2', got '$3'"
	fi
}

# expect_match NAME REGEX ACTUAL
expect_match() {
	if [[ "$3" =~ $2 ]]; then
		ok "$1"
	else
		fail "$1" "'$3' does not match /$2/"
	fi
}

# expect_true NAME REASON COMMAND...: passes when the command succeeds.
expect_true() {
	local name=$1 reason=$2
	shift 2
	if "$@"; then
		ok "$name"
	else
		fail "$name" "$reason"
	fi
}

# The test file's exit status: non-zero when anything failed.
finish() {
	exit $((FAILS > 0))
}

# --- cases -------------------------------------------------------------------

# cases NAME...: run the functions NAME in order, or only the one that
# TEST_CASE names (`make check T=test_leaks:static`). Code outside the
# cases (helpers, what they all share) runs either way. A case name that
# the script does not have fails when it exits.
CASES_RAN=0
CASES_KNOWN=()
cases() {
	local c
	CASES_KNOWN+=("$@")
	for c in "$@"; do
		[[ -z ${TEST_CASE:-} || $c == "$TEST_CASE" ]] || continue
		CASES_RAN=$((CASES_RAN + 1))
		echo "# case $c"
		"$c"
	done
}

# The plan, from the count of results, once nothing more will be printed;
# and the verdict on TEST_CASE.
plan() {
	if [[ -n ${TEST_CASE:-} ]] && ((CASES_RAN == 0)); then
		fail "case $TEST_CASE" "$(basename "$0") has no such case (its cases: ${CASES_KNOWN[*]:-none})"
	fi
	echo "1..$(wc -l <"$TAP_COUNT")"
}

# --- processes -------------------------------------------------------------

# Every target a test starts or learns of is recorded here and killed on
# exit, so that a failed assertion or a timeout cannot leave one behind.
track() {
	PIDS+=("$1")
}

# Tracers run under timeout(1): SIGTERM to it reaches the tool, and it
# still kills the tool -k seconds later if that does not end it.
cleanup() {
	local pid
	for pid in "${TOOL_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	# Reaping our own children here keeps bash from reporting them killed.
	for pid in "${PIDS[@]}"; do
		{ kill -KILL "$pid" && wait "$pid"; } 2>/dev/null
	done
	# TEST_KEEP_DIR (make vmtest sets it) keeps a failed script's files,
	# the tool's output among them, where they can be read afterwards.
	if ((FAILS > 0)) && [[ -n ${TEST_KEEP_DIR:-} ]]; then
		mkdir -p "$TEST_KEEP_DIR" && cp -a "$TMP" "$TEST_KEEP_DIR/$(basename "$0" .sh).$$"
	fi
	plan
	rm -rf "$TMP"
}
trap cleanup EXIT

# run_tool NAME SECONDS ARGS...: run the tool in the foreground with a time
# limit; stdout and stderr go to $TMP/NAME.out and .err, the status to RC
# (124 or 137 when the limit was hit).
run_tool() {
	local name=$1 secs=$2
	shift 2
	RC=0
	timeout -k 5 "$secs" "$TOOL" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
}

# start_tool NAME SECONDS ARGS...: the same in the background; TOOL_PID is
# the pid of timeout(1), which passes SIGINT and SIGTERM on to the tool.
# (A background job of a script would otherwise start with SIGINT ignored.)
# --foreground: otherwise timeout also signals its whole process group, so
# the tool would get each signal twice and a launched target once. -k 30:
# after a signal the tool may take seconds to detach its probes; how long is
# not the contract's, only that it ends (bounded here) with status 0.
start_tool() {
	local name=$1 secs=$2
	shift 2
	timeout --foreground -k 30 "$secs" "$TOOL" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	TOOL_PID=$!
	TOOL_PIDS+=("$TOOL_PID")
}

# start_target NAME [DIR]: tests/workloads/target.c in DIR (default
# $TMP/NAME), ready to be attached to; TARGET is its pid. It ends itself
# within 60 s.
start_target() {
	local dir=${2:-$TMP/$1}
	mkdir -p "$dir"
	"$WL/target" "$dir" 60 &
	TARGET=$!
	track "$TARGET"
	wait_for 10 test -e "$dir/ready"
}

# start_workload DIR COMMAND...: run COMMAND in the background and wait
# for DIR/ready; sets WPID.
start_workload() {
	local dir=$1
	shift
	mkdir -p "$dir"
	"$@" &
	WPID=$!
	track "$WPID"
	wait_for 10 test -e "$dir/ready"
}

# wait_line NAME REGEX [SECONDS]: wait (20 s by default) for the tool
# started as NAME to say REGEX.
wait_line() {
	wait_for "${3:-20}" grep -qE "$2" "$TMP/$1.err" 2>/dev/null
}

# trace_new_target NAME SECONDS ARGS...: start_target NAME, the tool on it
# with ARGS for at most SECONDS (start_tool), and wait until it traces.
# Fails, saying which step did not happen, or returns 0 with TARGET set.
trace_new_target() {
	local name=$1 secs=$2
	shift 2
	start_target "$name" || { fail "$name: target" "not ready in 10 s"; return 1; }
	start_tool "$name" "$secs" "$@" -p "$TARGET"
	wait_tracing "$name" 30 || { fail "$name: tracing" "no 'tracing pid' line in 30 s"; return 1; }
}

# The pid of the tool itself that start_tool started (TOOL_PID is that of
# timeout(1), its parent), or nothing once it has exited.
loader_pid() {
	pgrep -P "$TOOL_PID" | head -n 1
}

# wait_tool: wait for the background tool; its status goes to RC. Bounded
# by the limit given to start_tool.
wait_tool() {
	RC=0
	wait "$TOOL_PID" || RC=$?
}

# wait_for SECONDS COMMAND...: poll until the command succeeds; fails when
# the deadline passes first.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}

# unsaid FILE: the tool's stderr in FILE but for what every run that
# attached says: its "tracing pid" line, and the warning naming probes the
# kernel single-steps (glibc's reallocarray has one).
unsaid() {
	grep -v -e '^alloctrace: tracing pid ' \
		-e '^alloctrace: warning: .* on instructions the kernel single-steps ' "$1"
}

# The pid in the tool's "tracing pid N" line on stderr, or nothing.
traced_pid() {
	# The file may not exist yet: the background job opens it.
	grep -o -m1 'tracing pid [0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$'
}

has_tracing_line() {
	[[ -n "$(traced_pid "$1")" ]]
}

# tracing_both NAME: the tool started as NAME said it traces two processes
# (-p A,B: a line each, once its probes are in for that one).
tracing_both() {
	[[ $(grep -c 'tracing pid' "$TMP/$1.err" 2>/dev/null) == 2 ]]
}

# wait_tracing NAME SECONDS: wait for the tool started as NAME to say it is
# tracing; sets TRACED to the pid it named.
wait_tracing() {
	TRACED=
	wait_for "$2" has_tracing_line "$TMP/$1.err" || return 1
	TRACED=$(traced_pid "$TMP/$1.err")
	track "$TRACED"
}

# free_port: a TCP port nothing listens on now.
free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		ss -ltnH "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# uprobe_links PID: the probes on process PID, one a line. Where alloctrace
# uses uprobe_multi links, those any process holds for PID (their fdinfo
# names it, one fdinfo path a line): alloctrace filters every link it makes
# by its target, so this sees its own probes and no other tool's, however
# many run. Perf-event uprobes (kernels before 6.10) show no pid in
# fdinfo: there, the C library's allocator functions whose code in PID's
# memory has breakpoints the file does not.
uprobe_links() {
	local f
	# Asked once a script, in a file: callers run this in $(...), where a
	# variable would not last, and each question is a run of the tool (5 s
	# in QEMU without KVM), once per case of test_errors.sh.
	[[ -s $TMP/uprobe_multi ]] ||
		{ has_uprobe_multi && echo yes || echo no; } >"$TMP/uprobe_multi"
	if [[ $(<"$TMP/uprobe_multi") == no ]]; then
		breakpoints "$1"
		return
	fi
	grep -lsx "pid:[[:space:]]*$1" /proc/[0-9]*/fdinfo/* | while read -r f; do
		grep -Eqs '^link_type:[[:space:]]*u(ret)?probe_multi$' "$f" && echo "$f"
	done
}

# breakpoints PID: which of malloc, free, calloc and realloc in PID's C
# library differ in their first 16 bytes from the file's (a uprobe writes
# its breakpoint into the process's copy). libc's text is mapped at file
# offset = address - load base.
breakpoints() {
	local base lib f value values
	read -r base lib < <(awk '$6 ~ /\/libc\.so\.6$/ && $3 == "00000000" {
		split($1, a, "-"); print a[1], $6; exit }' "/proc/$1/maps") || return 0
	# The functions' values, read once a script for each library.
	values=$TMP/values${lib//\//_}
	[[ -s $values ]] || readelf -Ws --dyn-syms "$lib" | awk '$8 ~ /^(malloc|free|calloc|realloc)@@/ {
		sub(/@@.*/, "", $8); if (!seen[$8]++) print $8, $2 }' >"$values"
	while read -r f value; do
		cmp -s <(dd if="$lib" bs=16 iflag=skip_bytes skip=$((16#$value)) count=1 2>/dev/null) \
			<(dd if="/proc/$1/mem" bs=16 iflag=skip_bytes skip=$((16#$base + 16#$value)) \
				count=1 2>/dev/null) || echo "$f"
	done <"$values"
}

# has_uprobe_multi: whether alloctrace attaches through uprobe_multi links
# on this kernel (6.10+) rather than perf-event uprobes, as -v says.
has_uprobe_multi() {
	"$TOOL" -v -- true 2>&1 >/dev/null | grep -q "^alloctrace: probes as uprobe_multi links"
}

# new_memory_cgroup NAME: make a memory cgroup NAME-PID under cgroup v1's
# memory hierarchy, or under a cgroup v2 root that gives its children the
# memory controller (the root itself has no memory.max); CG is its path,
# or empty when there is none to make. The caller removes it.
new_memory_cgroup() {
	local base
	CG=
	for base in /sys/fs/cgroup/memory /sys/fs/cgroup; do
		if [[ -e $base/memory.limit_in_bytes ]] ||
			grep -qsw memory "$base/cgroup.subtree_control"; then
			mkdir "$base/$1-$$" && CG=$base/$1-$$
			return
		fi
	done
}

alive() {
	kill -0 "$1" 2>/dev/null
}

dead() {
	! kill -0 "$1" 2>/dev/null
}

# --- output checks -----------------------------------------------------------

# build_id_of FILE: the GNU build id readelf -n gives FILE, in hex.
build_id_of() {
	readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p'
}

# Every line of FILE is a JSON object with a "type".
valid_ndjson() {
	[[ -s "$1" ]] && jq -e -s 'all(.[]; type == "object" and has("type"))' "$1" >/dev/null 2>&1
}

# The last final report of FILE, on one line (empty if none).
final_report() {
	jq -c 'select(.type == "report" and .final == true)' "$1" 2>/dev/null | tail -n 1
}

# ended_proc FILE JQ_FILTER: the process of FILE's reports that the filter
# selects (on .processes[]), from the last report that has it: a process
# that ended is in the first report after its end, then left out, and
# under TCG a periodic report can come between its end and the final one.
ended_proc() {
	jq -c 'select(.type == "report") | .processes[] | select('"$2"')' "$1" 2>/dev/null | tail -n 1
}

# count_lines FILE JQ_FILTER: how many lines of FILE the filter selects.
count_lines() {
	jq -c "select($2)" "$1" 2>/dev/null | wc -l
}

# report_get REPORT JQ_EXPR: one value from a report, compact.
report_get() {
	jq -c "$2" <<<"$1"
}

# proc_of REPORT PID: the process PID of a report on several.
proc_of() {
	jq -c --argjson p "$2" '.processes[] | select(.pid == $p)' <<<"$1"
}

# valgrind_leak_classes LOG FNS: leak_classes' lines from valgrind's loss
# records, by the function that called the allocator, for the functions
# the extended regular expression FNS matches whole.
valgrind_leak_classes() {
	sed 's/^==[0-9]*== *//' "$1" | tr -d , | awk -v fns="^($2)$" '
		/ blocks? (are|is) .* in loss record / {
			bytes = $1; blocks = $4; kind = $0
			sub(/.* (are|is) /, "", kind); sub(/ in loss record.*/, "", kind)
			sub(/^still /, "", kind); want = 1; next
		}
		want && /^by 0x/ {
			if ($3 ~ fns) { key = $3 " " kind; b[key] += bytes; n[key] += blocks }
			want = 0
		}
		END { for (k in b) print k, b[k], n[k] }' | sort
}

# leak_classes REPORT JQ: "FUNCTION CLASS BYTES BLOCKS" of --leak-check's
# verdicts, summed per function over the stacks JQ yields, each as
# [FUNCTION, STACK]; classes with blocks only, sorted.
leak_classes() {
	jq -r "$2"' | .[0] as $fn | .[1] |
		[["reachable", .reachable_bytes, .reachable_allocs],
		 ["possibly lost", .possibly_lost_bytes, .possibly_lost_allocs],
		 ["indirectly lost", .indirectly_lost_bytes, .indirectly_lost_allocs],
		 ["definitely lost", .definitely_lost_bytes, .definitely_lost_allocs]][] |
		select(.[2] > 0) | "\($fn) \(.[0]) \(.[1]) \(.[2])"' <<<"$1" |
		awk '{ k = $1 " " $2 (NF == 5 ? " " $3 : ""); b[k] += $(NF-1); n[k] += $NF }
		     END { for (k in b) print k, b[k], n[k] }' | sort
}

# fn_sum REPORT FIELD NAME: FIELD summed over the stacks whose frames[0]
# (the allocator's caller) is NAME.
fn_sum() {
	jq --arg k "$2" --arg f "$3" \
		'[.stacks[] | select(.frames[0].function == $f) | .[$k]] | add // 0' <<<"$1"
}

# fn_any_sum REPORT FIELD NAME: the same over stacks with NAME in any frame.
fn_any_sum() {
	jq --arg k "$2" --arg f "$3" \
		'[.stacks[] | select(any(.frames[]; .function == $f)) | .[$k]] | add // 0' <<<"$1"
}

# fn_stacks REPORT NAME: how many stacks have NAME as frames[0].
fn_stacks() {
	jq --arg f "$2" '[.stacks[] | select(.frames[0].function == $f)] | length' <<<"$1"
}

# expect_leak REPORT NAME BYTES BLOCKS [ALLOCS]: exact outstanding bytes and
# blocks (and allocation count) of the stacks allocating from NAME.
expect_leak() {
	local r=$1 f=$2
	expect_eq "$f outstanding_bytes" "$3" "$(fn_sum "$r" outstanding_bytes "$f")"
	expect_eq "$f outstanding_allocs" "$4" "$(fn_sum "$r" outstanding_allocs "$f")"
	if [[ $# -ge 5 ]]; then
		expect_eq "$f allocs" "$5" "$(fn_sum "$r" allocs "$f")"
	fi
}

# expect_no_stack REPORT NAME: nothing outstanding from NAME, so no stack.
expect_no_stack() {
	expect_eq "$2 holds nothing (no stack)" 0 "$(fn_stacks "$1" "$2")"
}

# expect_totals_consistent NAME REPORT: with -T 0 the totals are the sums
# over the stacks.
expect_totals_consistent() {
	local k sum
	for k in outstanding_bytes outstanding_allocs; do
		sum=$(jq "[.stacks[].$k] | add // 0" <<<"$2")
		expect_eq "$1: totals.$k == sum over stacks" "$sum" \
			"$(report_get "$2" ".totals.$k")"
	done
}

# expect_tool_ok NAME: the tool exited 0 and wrote valid NDJSON with one
# final report. Returns non-zero when there is no report to look into.
expect_tool_ok() {
	expect_eq "$1: exit status" 0 "$RC"
	expect_true "$1: stdout is NDJSON" "$(head -c 300 "$TMP/$1.out")" \
		valid_ndjson "$TMP/$1.out"
	expect_eq "$1: one final report" 1 \
		"$(count_lines "$TMP/$1.out" '.type == "report" and .final == true')"
	[[ -n "$(final_report "$TMP/$1.out")" ]] || {
		sed 's/^/# stderr: /' "$TMP/$1.err" | head -n 20
		return 1
	}
}

# expect_error NAME ARGS...: the tool exits non-zero (not by a timeout),
# prints nothing on stdout and exactly one line on stderr, starting with
# "alloctrace: ".
expect_error() {
	local name=$1 lines
	shift
	run_tool "$name" 20 "$@"
	lines=$(wc -l <"$TMP/$name.err")
	if ((RC == 0 || RC == 124 || RC == 137)); then
		fail "$name" "exit status $RC (want non-zero, not a timeout)"
	elif [[ -s "$TMP/$name.out" ]]; then
		fail "$name" "stdout not empty: $(head -c 200 "$TMP/$name.out")"
	elif ((lines != 1)); then
		fail "$name" "$lines lines on stderr: $(head -c 300 "$TMP/$name.err")"
	elif ! grep -q '^alloctrace: ' "$TMP/$name.err"; then
		fail "$name" "stderr: $(cat "$TMP/$name.err")"
	else
		ok "$name"
	fi
}

# Bail out early, as one failure, when the tool or the workloads are not
# built: every later check would only repeat it.
require_built() {
	local w
	for w in "$TOOL" "$@"; do
		if [[ ! -x "$w" ]]; then
			fail "prerequisites" "$w is not built (run make tests)"
			finish
		fi
	done
}

# --- the HTML page (test_html.sh, test_multiproc.sh) ------------------------

CHROME=$(command -v chromium || command -v chromium-browser || true)

# chrome NAME ARGS...: headless Chromium with nothing that reaches the
# network or the user's profile; stdout to $TMP/NAME.dom, its log (with
# the page's console) to $TMP/NAME.log. Root needs --no-sandbox. 240 s, as
# test_speedscope.sh gives it: in QEMU without KVM on a loaded host
# Chromium takes about a minute for a one-line page, and 60 s ended it
# before it had drawn the report's.
chrome() {
	local name=$1 profile
	shift
	profile=$(mktemp -d "$TMP/chrome.XXXXXX")
	timeout -k 5 240 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-extensions --user-data-dir="$profile" \
		--enable-logging=stderr --v=0 --window-size=1400,1800 \
		"$@" >"$TMP/$name.dom" 2>"$TMP/$name.log"
}

# Script errors and console output of the page, as Chromium logs them.
console_errors() {
	grep -E 'Uncaught|:CONSOLE[:(]' "$TMP/$1.log" | head -n 5
}

# by_arch X86_64 ARM64: the argument of this machine's architecture, for
# what its instructions decide (probe placement, which probes are stepped,
# system call numbers).
by_arch() {
	if [[ $HOST_ARCH == arm64 ]]; then
		echo "$2"
	else
		echo "$1"
	fi
}

# expect_page_drawn NAME PAGE: Chromium draws the HTML file PAGE without a
# script error; DOM is what it made of it. Non-zero without Chromium, and
# in make vmtest's guest (TEST_PAGES_ON_HOST), where the drawing, which
# cannot depend on the kernel, is left to the host's run: under TCG
# Chromium ran past 240 s for two pages of three.
expect_page_drawn() {
	if [[ -n ${TEST_PAGES_ON_HOST:-} ]]; then
		echo "# $1: page drawn on the host only (kernel-independent)"
		return 1
	fi
	if [[ -z "$CHROME" ]]; then
		fail "chromium" "not installed (apt-get install chromium)"
		return 1
	fi
	chrome "$1" --dump-dom "file://$2"
	DOM=$(cat "$TMP/$1.dom")
	expect_match "$1: page drawn (data-ready)" '<html[^>]* data-ready="true"' "$DOM"
	expect_eq "$1: no script error" "" "$(console_errors "$1")"
}

# leaker_row DOM FUNCTION: the rows of the page's leakers table whose
# function is FUNCTION (all for ""), a line each in the table's order, their
# cells as text separated by tabs: the row's toggle, #, function, module,
# source, then the numbers.
leaker_row() {
	tr -d '\n' <<<"$1" | sed 's/.*<table class="data" id="leakers-table">//; s/<\/table>.*//' |
		sed 's/<tr/\n<tr/g' | sed 's/<\/td>/\t/g; s/<[^>]*>//g' | awk -F'\t' -v f="$2" 'NF > 1 && (f == "" || $3 == f)'
}

# --- allocators (test_allocators.sh) ----------------------------------------

# expect_totals NAME REPORT BYTES BLOCKS ALLOCS FREES: the exact totals of
# a run that saw every call (nothing untracked, nothing lost).
expect_totals() {
	expect_totals_lost "$@" 0 0
}

# expect_totals_lost NAME REPORT BYTES BLOCKS ALLOCS FREES UNTRACKED LOST:
# the exact totals of any run.
expect_totals_lost() {
	expect_eq "$1: totals" \
		"{\"outstanding_bytes\":$3,\"outstanding_allocs\":$4,\"allocs\":$5,\"frees\":$6,\"untracked_frees\":$7,\"lost\":$8}" \
		"$(report_get "$2" '.totals | {outstanding_bytes, outstanding_allocs, allocs, frees, untracked_frees, lost}')"
}

# expect_tables_full NAME ROWS OBJECT: run NAME (--max-unwind-rows ROWS)
# warned on stderr, without -v, that OBJECT (a regex of its file name) was
# the first object left without unwind tables; its final report counts
# them in unwind_full and calls every allocation counted but not every
# stack complete.
expect_tables_full() {
	local r
	r=$(final_report "$TMP/$1.out")
	expect_match "$1: tables-full warning names the object" \
		"^alloctrace: warning: unwind tables full at [0-9]+ of $2 rows \\(--max-unwind-rows\\): frames in /[^ ]*/$3 " \
		"$(grep 'unwind tables full' "$TMP/$1.err")"
	expect_true "$1: unwind_full counts the objects" \
		"unwind_full is $(report_get "$r" .counters.unwind_full)" \
		test "$(report_get "$r" .counters.unwind_full)" -gt 0
	expect_eq "$1: complete, stacks_complete" '[true,false]' \
		"$(report_get "$r" '[.complete, .stacks_complete]')"
}

# expect_allocator NAME PATH: the -v run NAME said on stderr that it chose
# the object PATH ("allocator:" and PATH on one line, PATH not merely the
# start of a longer name).
expect_allocator() {
	local line rest
	while IFS= read -r line; do
		[[ "$line" == *"$2"* ]] || continue
		rest=${line#*"$2"}
		if [[ -z "$rest" || "${rest:0:1}" != [[:alnum:]_./-] ]]; then
			ok "$1: allocator $2"
			return
		fi
	done < <(grep -F 'allocator:' "$TMP/$1.err")
	fail "$1: allocator $2" \
		"stderr says: $(grep -F 'allocator:' "$TMP/$1.err" | head -n 3 | paste -sd '|')"
}

# big_alloc_list FILE: the big_alloc records of FILE as sorted
# "func size caller" (caller: frames[0].function), joined by ';'.
big_alloc_list() {
	jq -r 'select(.type == "big_alloc") | "\(.func) \(.size) \(.frames[0].function)"' "$1" |
		sort | paste -sd ';'
}
