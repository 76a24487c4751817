#!/bin/bash
# --folded, --folded-count and --pprof on tests/workloads/leaks.c: the
# exact folded line of each leak function (stacks that fold the same, like
# realloc_edges' three call sites, summed), weights adding up to the JSON
# totals, lines sorted; the pprof profile opened by `go tool pprof` with the
# same numbers in each sample type; files created 0600; a path that is a
# directory or a symlink refused before anything runs.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"

F=$TMP/leaks.folded
F2=$TMP/leaks.folded-count
P=$TMP/leaks.pb.gz

run_tool leaks 60 --format json -T 0 --folded "$F" --folded-count "$F2" --pprof "$P" \
	-- "$WL/leaks"
expect_tool_ok leaks || finish
r=$(final_report "$TMP/leaks.out")

# The build ids readelf -n gives the workload and the libc it maps.
LEAKS_ID=$(build_id_of "$WL/leaks")
expect_match "readelf -n: the workload has a build id" '^[0-9a-f]{40}$' "$LEAKS_ID"
expect_eq "JSON: every frame in the workload carries its build id" "[\"$LEAKS_ID\"]" \
	"$(jq -c --arg m "$WL/leaks" '[.stacks[].frames[] | select(.module == $m) | .build_id]
		| unique' <<<"$r")"
libc=$(jq -r '[.stacks[].frames[] | select(.module | test("/libc\\.so"))][0].module' <<<"$r")
expect_eq "JSON: libc frames carry libc's build id" "[\"$(build_id_of "$libc")\"]" \
	"$(jq -c --arg m "$libc" '[.stacks[].frames[] | select(.module == $m) | .build_id]
		| unique' <<<"$r")"
expect_eq "JSON: no frame in a module without its build id" '[]' \
	"$(jq -c '[.stacks[].frames[] | select(.module != null and .build_id == null)]' <<<"$r")"

# folded_tail FILE NAME: from main on, the lines whose last frame is NAME
# (the frames below main, in libc, depend on how it was built).
folded_tail() {
	grep -E "(^|;)$2 [0-9]+\$" "$1" | grep -oE '(^|;)main;.*$' | sed 's/^;//'
}

# folded_sum FILE: the weights added up.
folded_sum() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

#          caller                 function             bytes  blocks allocs
LEAKS=(
	"main"                 leak_small            2400   100    100
	"main"                 leak_medium           28672  7      7
	"main"                 leak_realloc          5000   5      5
	"leak_memalign_family" leak_posix_memalign   300    3      3
	"leak_memalign_family" leak_aligned_alloc    512    4      4
	"leak_memalign_family" leak_memalign         1000   5      5
	"leak_memalign_family" leak_valloc           600    2      2
	"leak_memalign_family" leak_pvalloc          10000  2      2
	"main"                 leak_reallocarray     1440   6      6
	"main"                 realloc_edges         1554   3      3
)

for file in "$F" "$F2" "$P"; do
	expect_eq "$(basename "$file"): mode" 600 "$(stat -c %a "$file" 2>&1)"
done

# --- folded -------------------------------------------------------------------

for ((i = 0; i < ${#LEAKS[@]}; i += 5)); do
	caller=${LEAKS[i]} fn=${LEAKS[i + 1]}
	path=$fn
	[[ $caller == main ]] || path="$caller;$fn"
	expect_eq "folded $fn" "main;$path ${LEAKS[i + 2]}" "$(folded_tail "$F" "$fn")"
	expect_eq "folded-count $fn" "main;$path ${LEAKS[i + 3]}" "$(folded_tail "$F2" "$fn")"
done
expect_eq "folded: churn holds nothing" 0 "$(grep -c ';churn' "$F")"

for file in "$F" "$F2"; do
	name=$(basename "$file")
	expect_eq "$name: every line is STACK WEIGHT" 0 \
		"$(grep -cvE '^[^ ;][^;]*(;[^;]+)* [1-9][0-9]*$' "$file")"
	expect_true "$name: lines sorted" "$(head -n 3 "$file")" \
		env LC_ALL=C sort -c "$file"
	expect_eq "$name: no stack twice" "" \
		"$(sed 's/ [0-9]*$//' "$file" | LC_ALL=C sort | uniq -d | head -n 3)"
done
expect_eq "folded: weights add up to totals.outstanding_bytes" \
	"$(report_get "$r" .totals.outstanding_bytes)" "$(folded_sum "$F")"
expect_eq "folded-count: weights add up to totals.outstanding_allocs" \
	"$(report_get "$r" .totals.outstanding_allocs)" "$(folded_sum "$F2")"

# --- pprof --------------------------------------------------------------------

if ! command -v go >/dev/null; then
	fail "go tool pprof" "go is not installed (apt-get install golang-go)"
	finish
fi
# go wants somewhere for its cache even to run a tool.
export HOME=${HOME:-$TMP}

# pprof_top INDEX: `go tool pprof -top` of the profile for one sample type,
# every node shown; sizes in bytes, not rounded to kB.
pprof_top() {
	local unit=()
	[[ $1 == *_space ]] && unit=(-unit=B)
	go tool pprof -top -nodefraction=0 -nodecount=10000 "${unit[@]}" \
		-sample_index="$1" "$P" 2>"$TMP/pprof.err"
}

# pprof_flat INDEX NAME: the flat value -top gives NAME (its own samples).
pprof_flat() {
	pprof_top "$1" | awk -v f="$2" '$NF == f { print $1 }'
}

expect_true "pprof: gzip" "$(head -c 16 "$P" | od -An -tx1)" \
	[ "$(head -c 2 "$P" | od -An -tx1 | tr -d ' ')" = 1f8b ]
raw=$(go tool pprof -raw "$P" 2>"$TMP/pprof.err")
expect_eq "pprof -raw opens it" 0 "$?"
expect_eq "pprof: sample types" \
	"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]" \
	"$(grep -m1 '^alloc_objects' <<<"$raw")"
expect_match "pprof: build id of the workload is readelf's" \
	"$WL/leaks $LEAKS_ID \\[FN\\]\\[FL\\]\\[LN\\]" "$(grep -F "$WL/leaks" <<<"$raw")"
expect_eq "pprof: comments" $'complete: true\nstacks_complete: true' \
	"$(go tool pprof -comments "$P" 2>/dev/null)"

for ((i = 0; i < ${#LEAKS[@]}; i += 5)); do
	fn=${LEAKS[i + 1]}
	expect_eq "pprof inuse_space $fn" "${LEAKS[i + 2]}B" "$(pprof_flat inuse_space "$fn")"
	expect_eq "pprof inuse_objects $fn" "${LEAKS[i + 3]}" "$(pprof_flat inuse_objects "$fn")"
	expect_eq "pprof alloc_objects $fn" "${LEAKS[i + 4]}" "$(pprof_flat alloc_objects "$fn")"
	expect_eq "pprof alloc_space $fn" "${LEAKS[i + 2]}B" "$(pprof_flat alloc_space "$fn")"
done
expect_eq "pprof: churn holds nothing" "" "$(pprof_flat inuse_space churn)"
expect_eq "pprof: inuse_space total is totals.outstanding_bytes" \
	"$(report_get "$r" .totals.outstanding_bytes)B" \
	"$(pprof_top inuse_space | sed -n 's/.* of \([0-9]*B\) total.*/\1/p')"
expect_eq "pprof: leak_small called from main" main \
	"$(go tool pprof -traces "$P" 2>/dev/null | awk '$NF == "leak_small" { getline; print $NF }')"

# --- bad paths ----------------------------------------------------------------

# refused NAME OPTION PATH: the run fails at once, before the command runs,
# with one line naming the path.
refused() {
	run_tool "$1" 20 --format json "$2" "$3" -- "$WL/leaks"
	expect_true "$1: fails" "exit status $RC" [ "$RC" -ne 0 ]
	expect_eq "$1: no report" "" "$(head -c 200 "$TMP/$1.out")"
	expect_eq "$1: one line naming $3" 1 "$(grep -cF "$3" "$TMP/$1.err")"
}

mkdir "$TMP/dir"
refused dir --pprof "$TMP/dir"
expect_eq "dir: the reason" 1 "$(grep -c 'Is a directory' "$TMP/dir.err")"

echo keep >"$TMP/target"
ln -s "$TMP/target" "$TMP/link"
refused link --folded "$TMP/link"
expect_eq "link: the reason" 1 "$(grep -c 'symbolic link' "$TMP/link.err")"
expect_eq "link: target untouched" keep "$(cat "$TMP/target")"
refused output-link -o "$TMP/link"
expect_eq "-o link: target untouched" keep "$(cat "$TMP/target")"

# --- -o: the reports apart from a launched command's own output ------------------

O=$TMP/reports.json
run_tool output 30 --format json -o "$O" -- printf abc
expect_eq "-o: exit status" 0 "$RC"
expect_eq "-o: the command's stdout is its own" abc "$(cat "$TMP/output.out")"
expect_eq "-o: mode" 600 "$(stat -c %a "$O" 2>&1)"
expect_eq "-o: every line is a JSON object" true \
	"$(jq -s 'length > 0 and all(.[]; type == "object")' "$O" 2>&1)"
expect_eq "-o: one final report, pid of printf" "printf true" \
	"$(jq -r 'select(.final) | "\(.comm) \(.final)"' "$O" 2>&1)"

# --- a run that fails before tracing leaves no file ------------------------------

sleep 0 &
gone=$!
wait "$gone"
run_tool gone 20 --folded "$TMP/g.folded" --pprof "$TMP/g.pb.gz" --html "$TMP/g.html" \
	-o "$TMP/g.out" -p "$gone"
expect_eq "no target: exit status" 3 "$RC"
expect_eq "no target: no file left" "" "$(ls "$TMP"/g.* 2>/dev/null)"
# A file already there but left empty goes too; one that is not empty stays.
echo keep >"$TMP/h.keep"
run_tool bad-second 20 --folded "$TMP/h.folded" --html "$TMP/dir" -p "$gone"
expect_eq "bad second path: exit status" 2 "$RC"
expect_eq "bad second path: the first file removed" "" "$(ls "$TMP"/h.folded 2>/dev/null)"
expect_eq "other files untouched" keep "$(cat "$TMP/h.keep")"

finish
