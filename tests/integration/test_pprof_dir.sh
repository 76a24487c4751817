#!/bin/bash
# --pprof-dir DIR (issue 16): a gzipped pprof profile per report, for
# continuous-profiling stores. tests/workloads/leaks.c holds its exact
# leaks from before the first report on, so every file has the same known
# numbers, read back by `go tool pprof`. Six reports with --pprof-keep 3
# leave exactly the newest three of this run: the older file of an earlier
# run goes first, files of other names stay. Each file appears by a rename
# of a finished temporary file (strace), none is left behind. Several
# processes share one file a report, each under its "pid N (COMM)" frame
# and with its pid as a label.
# A directory that is missing, not one, or read-only fails at once; one
# removed while tracing is told once, and the run ends with status 1.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
if ! command -v go >/dev/null; then
	fail "go tool pprof" "go is not installed (apt-get install golang-go)"
	finish
fi
# go wants somewhere for its cache even to run a tool.
export HOME=${HOME:-$TMP}

#   function             bytes  blocks
LEAKS=(
	leak_small           2400   100
	leak_medium          28672  7
	leak_realloc         5000   5
	leak_posix_memalign  300    3
	leak_aligned_alloc   512    4
	leak_memalign        1000   5
	leak_valloc          600    2
	leak_pvalloc         10000  2
	leak_reallocarray    1440   6
	realloc_edges        1554   3
)

# pprof_flat FILE INDEX NAME: the flat value `go tool pprof -top` gives NAME.
pprof_flat() {
	local unit=()
	[[ $2 == *_space ]] && unit=(-unit=B)
	go tool pprof -top -nodefraction=0 -nodecount=10000 "${unit[@]}" -sample_index="$2" \
		"$1" 2>/dev/null | awk -v f="$3" '$NF == f { print $1 }'
}

# expect_leaks NAME FILE: FILE holds the workload's leaks exactly.
expect_leaks() {
	local i fn
	for ((i = 0; i < ${#LEAKS[@]}; i += 3)); do
		fn=${LEAKS[i]}
		expect_eq "$1: inuse_space $fn" "${LEAKS[i + 1]}B" "$(pprof_flat "$2" inuse_space "$fn")"
		expect_eq "$1: inuse_objects $fn" "${LEAKS[i + 2]}" \
			"$(pprof_flat "$2" inuse_objects "$fn")"
	done
}

D=$TMP/profiles
mkdir "$D"
# An older run's file, and names alloctrace does not make.
OLD=alloctrace-1-20200101T000000Z-000001.pb.gz
for f in "$OLD" notes.txt alloctrace-x.pb.gz alloctrace-1-2020-000001.pb.gz; do
	echo keep >"$D/$f"
done

# Not -f: the launched command is alloctrace's to ptrace.
timeout -k 5 60 strace -qq -e trace=openat,renameat,renameat2,rename -o "$TMP/strace.log" \
	"$TOOL" --format json -T 0 -i 0.3 -n 6 --pprof-dir "$D" --pprof-keep 3 \
	-- "$WL/leaks" 0 60 >"$TMP/run.out" 2>"$TMP/run.err"
RC=$?
expect_tool_ok run
# It keeps running untraced after the sixth report.
track "$(traced_pid "$TMP/run.err")"
r=$(final_report "$TMP/run.out")
expect_eq "six reports" 6 "$(count_lines "$TMP/run.out" '.type == "report"')"

mapfile -t FILES < <(cd "$D" && ls alloctrace-*-*-*.pb.gz | LC_ALL=C sort)
expect_eq "three files kept, of the sixth report and those before it" \
	"000004 000005 000006" \
	"$(printf '%s\n' "${FILES[@]}" | grep -v '^alloctrace-1-' |
		sed -n 's/^alloctrace-[0-9]*-[0-9]\{8\}T[0-9]\{6\}Z-\([0-9]*\)\.pb\.gz$/\1/p' | xargs)"
expect_eq "the older run's file removed first" "" "$(ls "$D/$OLD" 2>/dev/null)"
expect_eq "other names left alone" "keep keep keep" \
	"$(cat "$D/notes.txt" "$D/alloctrace-x.pb.gz" "$D/alloctrace-1-2020-000001.pb.gz" | xargs)"
expect_eq "no temporary file left" "" "$(cd "$D" && ls -A | grep -v 'pb\.gz$\|^notes')"
# alloctrace's pid (not the target's) and the report's time in UTC name each file.
TARGET=$(traced_pid "$TMP/run.err")
expect_eq "the kept files name one pid, not the target's" 1 \
	"$(printf '%s\n' "${FILES[@]}" | grep -v '^alloctrace-1-' | cut -d- -f2 |
		grep -vx "$TARGET" | sort -u | wc -l)"
expect_match "named by the time in UTC" \
	"^alloctrace-[0-9]+-$(date -u +%Y%m%d)T[0-9]{6}Z-000006\\.pb\\.gz\$" "${FILES[-1]}"

# Written whole under another name, then renamed: no .pb.gz opened for writing.
expect_eq "no profile opened under its own name" "" \
	"$(grep -E 'openat\(.*\.pb\.gz"' "$TMP/strace.log" | grep O_CREAT)"
expect_eq "each of the six profiles renamed into place" 6 \
	"$(grep -cE 'rename(at2?)?\(.*\.alloctrace-[0-9]+-[0-9a-f]+\.tmp".*"alloctrace-[0-9]+-[0-9]{8}T[0-9]{6}Z-[0-9]+\.pb\.gz".* = 0$' \
		"$TMP/strace.log")"

for f in "${FILES[@]}"; do
	[[ $f == alloctrace-1-* ]] && continue
	expect_eq "$f: mode" 600 "$(stat -c %a "$D/$f")"
	expect_eq "$f: comments" $'complete: true\nstacks_complete: true' \
		"$(go tool pprof -comments "$D/$f" 2>/dev/null)"
	expect_leaks "${f##*-}" "$D/$f"
done
expect_eq "the last file's inuse_space total is the final report's" \
	"$(report_get "$r" .totals.outstanding_bytes)B" \
	"$(go tool pprof -top -unit=B -sample_index=inuse_space "$D/${FILES[-1]}" 2>/dev/null |
		sed -n 's/.* of \([0-9]*B\) total.*/\1/p')"

# --- several processes: one file a report, each under its process ---------------

M=$TMP/multi
mkdir "$M"
run_tool multi 60 --format json -i 1 -n 2 --follow-forks --pprof-dir "$M" \
	-- sh -c '"$1" 0 60 & "$1" 0 60 & wait' sh "$WL/leaks"
expect_tool_ok multi
mapfile -t PIDS2 < <(jq -r 'select(.final) | .processes[] | select(.comm == "leaks") | .pid' \
	"$TMP/multi.out")
for pid in "${PIDS2[@]}"; do
	track "$pid"
done
expect_eq "two leaks processes" 2 "${#PIDS2[@]}"
mapfile -t MF < <(cd "$M" && ls | LC_ALL=C sort)
expect_eq "several processes: a file per report" 2 "${#MF[@]}"
for pid in "${PIDS2[@]}"; do
	expect_eq "pid $pid (leaks): its leak_medium under it" "28672B" \
		"$(go tool pprof -top -unit=B -sample_index=inuse_space -focus="^pid $pid " \
			"$M/${MF[-1]}" 2>/dev/null | awk '$NF == "leak_medium" { print $1 }')"
	expect_eq "pid $pid (leaks): its leak_medium by its pid label" "28672B" \
		"$(go tool pprof -top -unit=B -sample_index=inuse_space -tagfocus="pid=$pid" \
			"$M/${MF[-1]}" 2>/dev/null | awk '$NF == "leak_medium" { print $1 }')"
done

# --- the directory gone while tracing: told once, the reports go on, exit 1 -------

G=$TMP/gone
mkdir "$G"
start_tool gone 60 --format json -i 0.2 -n 8 --pprof-dir "$G" -- "$WL/leaks" 0 60
wait_for 30 compgen -G "$G/alloctrace-*.pb.gz" >/dev/null ||
	fail "gone: a first file" "none in 30 s"
rm -rf "$G"
wait_tool
track "$(traced_pid "$TMP/gone.err")"
expect_eq "gone: exit status" 1 "$RC"
expect_eq "gone: every report still made" 8 "$(count_lines "$TMP/gone.out" '.type == "report"')"
expect_eq "gone: told once" "alloctrace: cannot write a pprof file to $G: No such file or directory" \
	"$(grep -F 'cannot write' "$TMP/gone.err")"

# --- bad directories and options: one line, before anything runs ---------------

# refused NAME DIR WHY: exit 2, no report, one line naming DIR and WHY.
refused() {
	expect_eq "$1: exit status" 2 "$RC"
	expect_eq "$1: no report" "" "$(head -c 200 "$TMP/$1.out")"
	expect_eq "$1: one line" "alloctrace: cannot write pprof files to $2: $3" "$(cat "$TMP/$1.err")"
}

run_tool missing 20 --pprof-dir "$TMP/nodir" -- "$WL/leaks"
refused missing "$TMP/nodir" "No such file or directory"
run_tool notdir 20 --pprof-dir "$D/notes.txt" -- "$WL/leaks"
refused notdir "$D/notes.txt" "Not a directory"
mkdir "$TMP/ro"
RC=0
unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' sh "$TMP/ro" \
	timeout -k 5 20 "$TOOL" --pprof-dir "$TMP/ro" -- "$WL/leaks" >"$TMP/ro.out" 2>"$TMP/ro.err" ||
	RC=$?
refused ro "$TMP/ro" "Read-only file system"

run_tool keep-alone 20 --pprof-keep 5 -- "$WL/leaks"
expect_eq "--pprof-keep without --pprof-dir: exit status" 2 "$RC"
expect_eq "--pprof-keep without --pprof-dir: one line" 1 "$(grep -c 'pprof-dir' "$TMP/keep-alone.err")"
run_tool keep-zero 20 --pprof-dir "$D" --pprof-keep 0 -- "$WL/leaks"
expect_eq "--pprof-keep 0: exit status" 2 "$RC"
finish
