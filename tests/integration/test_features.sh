#!/bin/bash
# Kernel features found, not assumed (issue 41): `alloctrace --version`
# lists each of user/tracer/features.def with whether this kernel has it,
# every feature of a release this kernel is at or past found (a feature is
# never taken out); without privileges it says it did not probe. A kernel
# that lacks what a run needs (5.10: bpf_loop, ...) gets one line naming
# each missing feature with its release and exit status 4, before anything
# is launched or loaded: no verifier log, no command run untraced.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

DEF=$ROOT/user/tracer/features.def

run_tool version 60 --version
expect_eq "version: exit status" 0 "$RC"
expect_match "version: the version first" '^alloctrace [0-9]+\.[0-9]+\.[0-9]+$' \
	"$(head -n 1 "$TMP/version.out")"
expect_eq "version: every feature of features.def, one line each" \
	"$(grep -c '^KFEATURE(' "$DEF")" "$(grep -cE '^  (yes|no ) ' "$TMP/version.out")"

# release_at_least A.B C.D: is release A.B at or past C.D?
release_at_least() {
	local a=${1%%.*} b=${1#*.} c=${2%%.*} d=${2#*.}
	((a > c || (a == c && b >= d)))
}
REL=$(uname -r | grep -oE '^[0-9]+\.[0-9]+')
unfound=""
while read -r has rest; do
	since=$(grep -oE '\(Linux [0-9]+\.[0-9]+\)' <<<"$rest" | head -n 1 | grep -oE '[0-9]+\.[0-9]+')
	if [[ $has == no ]] && release_at_least "$REL" "$since"; then
		unfound+=" ${rest%%:*}"
	fi
done < <(grep -E '^  (yes|no ) ' "$TMP/version.out")
expect_eq "version: every feature of Linux $REL or before found" "" "$unfound"

# The features a run needs that are missing, as --version says them.
needed_missing() {
	grep -E "^  no  .*: needed${1:+( by $1)?}$" "$TMP/version.out" |
		sed -E 's/^  no  (.*): needed.*$/\1/' | paste -sd ',' | sed 's/,/, /g'
}
for mode in plain growth; do
	args=(--format json -T 0 -- touch "$TMP/ran-$mode")
	[[ $mode == growth ]] && args=(--growth "${args[@]}")
	missing=$(needed_missing "$([[ $mode == growth ]] && echo --growth)")
	run_tool "$mode" 60 "${args[@]}"
	if [[ -z $missing ]]; then
		expect_tool_ok "$mode"
		continue
	fi
	flag=""
	[[ $mode == growth ]] && flag=" --growth"
	expect_eq "$mode, features missing: exit status" 4 "$RC"
	expect_eq "$mode, features missing: one line naming each" \
		"alloctrace: this kernel lacks what alloctrace$flag needs: $missing (alloctrace --version lists what it has)" \
		"$(cat "$TMP/$mode.err")"
	expect_true "$mode, features missing: the command never ran" "it ran untraced" \
		test ! -e "$TMP/ran-$mode"
done

# Unprivileged, every probe would fail: not the kernel's answer.
NOPRIV=$(mktemp -d /tmp/alloctrace-feat.XXXXXX)
trap 'rm -rf "$NOPRIV"; cleanup' EXIT
chmod 755 "$NOPRIV"
cp "$TOOL" "$NOPRIV/alloctrace"
RC=0
timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	--ambient-caps=-all --bounding-set=-all "$NOPRIV/alloctrace" --version \
	>"$TMP/nopriv.out" 2>"$TMP/nopriv.err" || RC=$?
expect_eq "unprivileged --version: exit status" 0 "$RC"
expect_eq "unprivileged --version: says it did not probe" \
	"kernel features: not probed (needs root, or CAP_BPF and CAP_PERFMON)" \
	"$(sed -n 2p "$TMP/nopriv.out")"
finish
