# shellcheck shell=bash
# The error table's harness, shared by test_errors.sh (the cases that reach
# the kernel: targets, probes, ptrace, cgroups; run on every kernel) and
# test_errors_cli.sh (the command line and the export files, refused before
# anything is traced: the host's run only). Sourced after tests/lib.sh.
#
# Each case exits with its documented status (2: a bad command line or an
# export file that cannot be created, 3: a target problem, 1: a failure
# while tracing), prints nothing on stdout (but the run that fails writing
# its export) and exactly one line on stderr, "alloctrace: " and what is
# wrong; and it leaves nothing behind: no process of its own (a launched
# command reaped, not a zombie), no probe on the target, and a target that
# goes on working. The table runs twice: with the loader, and with its
# ASan + UBSan build (build/asan/alloctrace, `make tool-asan`), which must
# say nothing more: no sanitizer report, no leak.

ASAN_TOOL=$ROOT/build/asan/alloctrace
require_built "$WL/leaks" "$WL/target" "$ASAN_TOOL"

# Leaks in our code fail the case; libelf's and libdw's own are suppressed.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$ROOT/fuzz/lsan.supp:print_suppressions=0

# A live target that must come through every case unharmed.
mkdir -p "$TMP/live"
"$WL/target" "$TMP/live" 86400 &
LIVE=$!
track "$LIVE"
wait_for 10 test -e "$TMP/live/ready" || fail "setup" "target not ready"

# --- checking one case ---------------------------------------------------------

# leftovers: processes of the tool under test (its copy has a name of its
# own) or of the commands it launched (LAUNCHED, the names the script's
# cases run), zombies included.
leftovers() {
	ps -eo pid=,stat=,comm= | awk -v names="$COMM ${LAUNCHED:-}" \
		'BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
		$3 in want'
}

# expect_clean_exit NAME: what every case must leave as it was: no process
# that was not there before it (LEFT), no probe on the live target (not
# looked for when not root, who cannot make one: test_errors_cli.sh under
# make unit, where the look was a third of each case's time).
expect_clean_exit() {
	local left
	left=$(comm -13 <(sort <<<"$LEFT") <(leftovers | sort))
	if [[ -n "$left" ]]; then
		fail "$1" "left behind: $left"
		return 1
	fi
	if ((EUID == 0)) && [[ -n "$(uprobe_links "$LIVE")" ]]; then
		fail "$1" "probes left on pid $LIVE"
		return 1
	fi
}

# one_line NAME CODE REGEX: the run NAME (its files are $TMP/$N.*) exited
# CODE with one line on stderr matching "^alloctrace: REGEX", besides the
# "tracing pid" line of a run that got that far, and the warning about
# single-stepped probes (glibc's reallocarray) of one that attached them.
one_line() {
	local name=$1 err
	err=$(unsaid "$TMP/$N.err")
	if ((RC != $2)); then
		fail "$name" "exit status $RC, want $2: $(head -c 300 <<<"$err")"
	elif (($(wc -l <<<"$err") != 1)); then
		fail "$name" "$(wc -l <<<"$err") lines on stderr: $(head -c 300 <<<"$err")"
	elif [[ ! "$err" =~ ^alloctrace:\ $3 ]]; then
		fail "$name" "stderr '$err' does not match /alloctrace: $3/"
	else
		return 0
	fi
	return 1
}

# expect_run CODE NAME REGEX COMMAND...: a case that runs the tool through
# COMMAND (a shell, unshare).
expect_run() {
	local code=$1 name="$LABEL$2" re=$3
	shift 3
	N=$((N + 1))
	LEFT=$(leftovers)
	RC=0
	timeout -k 5 30 "$@" >"$TMP/$N.out" 2>"$TMP/$N.err" || RC=$?
	one_line "$name" "$code" "$re" || return
	if [[ -s "$TMP/$N.out" ]]; then
		fail "$name" "stdout not empty: $(head -c 200 "$TMP/$N.out")"
	elif expect_clean_exit "$name"; then
		ok "$name"
	fi
}

# expect_error CODE NAME REGEX ARGS...: the tool with ARGS.
expect_error() {
	expect_run "$1" "$2" "$3" "$TOOL" "${@:4}"
}

# table TOOL NAME LABEL CASE...: the cases, with that build of the tool,
# copied under a name of its own (COMM) so that what it leaves behind can
# be told from other tests' processes.
table() {
	local c
	COMM=$2$$
	COMM=${COMM:0:15}
	TOOL=$TMP/$COMM
	LABEL=$3
	cp "$1" "$TOOL"
	for c in "${@:4}"; do
		"$c"
	done
}

# error_tables CASE...: the cases with the loader, then with its ASan build.
error_tables() {
	table "$TOOL" at "" "$@"
	table "$ASAN_TOOL" atasan "asan: " "$@"
}

# live_target_end: the live target was -p'd, shown bad files and attached
# to (or not, as the script's cases go): it still allocates, and ends as
# asked.
live_target_end() {
	kill -USR1 "$LIVE"
	expect_true "live target: still works after every case" "no done file in 10 s" \
		wait_for 10 test -e "$TMP/live/done"
	kill -USR1 "$LIVE"
	RC=0
	wait "$LIVE" || RC=$?
	expect_eq "live target: exit status" 0 "$RC"
}

N=0
