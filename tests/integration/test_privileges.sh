#!/bin/bash
# Least privilege: as user nobody with only CAP_BPF and CAP_PERFMON (which
# uprobe_multi links need) a launched command is traced exactly; without
# either one alloctrace refuses with one line and exit status 4.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"

# nobody must reach both programs, wherever the tree is: copy them out.
PRIV=$(mktemp -d /tmp/alloctrace-priv.XXXXXX)
trap 'rm -rf "$PRIV"; cleanup' EXIT
chmod 755 "$PRIV"
cp "$TOOL" "$PRIV/alloctrace"
cp "$WL/leaks" "$PRIV/leaks"

# as_nobody NAME CAPS ARGS...: run the tool as nobody with only CAPS.
as_nobody() {
	local name=$1 caps=$2
	shift 2
	RC=0
	timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps="-all${caps:+,$caps}" --ambient-caps="-all${caps:+,$caps}" \
		--bounding-set="-all${caps:+,$caps}" \
		"$PRIV/alloctrace" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
}

as_nobody least "+bpf,+perfmon" --format json -T 0 -- "$PRIV/leaks"
if expect_tool_ok least; then
	r=$(final_report "$TMP/least.out")
	expect_totals least "$r" 51478 137 10159 10022
	expect_leak "$r" leak_small 2400 100 100
fi

for caps in "" "+bpf" "+perfmon"; do
	as_nobody "caps$caps" "$caps" --format json -- "$PRIV/leaks"
	expect_eq "only '${caps:-no capabilities}': exit status" 4 "$RC"
	expect_eq "only '${caps:-no capabilities}': one line" 1 "$(wc -l <"$TMP/caps$caps.err")"
	expect_true "only '${caps:-no capabilities}': says what is needed" \
		"$(cat "$TMP/caps$caps.err")" grep -q "CAP_BPF and CAP_PERFMON" "$TMP/caps$caps.err"
done

finish
