#!/bin/bash
# Least privilege: as user nobody with only CAP_BPF and CAP_PERFMON (which
# uprobe_multi links need) a launched command is traced exactly (where the
# kernel has them; elsewhere alloctrace says CAP_SYS_ADMIN is needed); without
# either one alloctrace refuses with one line and exit status 4. Another
# user's process (root's) needs CAP_SYS_PTRACE too: without it alloctrace
# says so (exit 3) and leaves the process alone, with it the process is
# traced exactly.
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

# as_nobody NAME CAPS ARGS...: run the tool as nobody with only CAPS; its
# status is RC, and as_nobody's own.
as_nobody() {
	local name=$1 caps=$2
	shift 2
	RC=0
	timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps="-all${caps:+,$caps}" --ambient-caps="-all${caps:+,$caps}" \
		--bounding-set="-all${caps:+,$caps}" \
		"$PRIV/alloctrace" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
	return "$RC"
}

# Without uprobe_multi (before 6.10) uprobes are perf events, which kernels
# with the CVE-2025-38466 fix let only CAP_SYS_ADMIN attach: there the two
# capabilities must get one line saying so and exit status 4.
# BASE: what tracing needs at all on this kernel, for the tests of another
# user's process below.
BASE="+bpf,+perfmon"
as_nobody least "$BASE" --format json -T 0 -- "$PRIV/leaks"
if has_uprobe_multi; then
	if expect_tool_ok least; then
		r=$(final_report "$TMP/least.out")
		expect_totals least "$r" 51478 137 10159 10022
		expect_leak "$r" leak_small 2400 100 100
	fi
else
	expect_eq "least, no uprobe_multi here: exit status" 4 "$RC"
	expect_eq "least, no uprobe_multi here: says CAP_SYS_ADMIN is needed" \
		"alloctrace: this kernel has no uprobe_multi links that filter by process (Linux 6.10+): its perf-event uprobes need CAP_SYS_ADMIN, not only CAP_BPF and CAP_PERFMON (try sudo)" \
		"$(cat "$TMP/least.err")"
	BASE="+bpf,+perfmon,+sys_admin"
fi

for caps in "" "+bpf" "+perfmon"; do
	as_nobody "caps$caps" "$caps" --format json -- "$PRIV/leaks"
	expect_eq "only '${caps:-no capabilities}': exit status" 4 "$RC"
	expect_eq "only '${caps:-no capabilities}': one line" 1 "$(wc -l <"$TMP/caps$caps.err")"
	expect_true "only '${caps:-no capabilities}': says what is needed" \
		"$(cat "$TMP/caps$caps.err")" grep -q "^alloctrace: .*CAP_BPF and CAP_PERFMON" \
		"$TMP/caps$caps.err"
done

# Its /proc files are root's to read: alloctrace says why it cannot go on,
# probes nothing, and the target goes on as if nothing happened.
start_target denied "$PRIV/state/denied" || fail "denied: target" "not ready in 10 s"
as_nobody denied "$BASE" --format json -p "$TARGET"
expect_eq "another user's process: exit status" 3 "$RC"
# Which of its files is refused first depends on the kernel: Debian's 6.1
# and 6.12 refuse /proc/PID/maps itself, 6.18 only its map_files.
denied_reason() {
	local re="^alloctrace: cannot read the (objects mapped by|mappings of) process $TARGET: "
	re+="permission denied \(another user's process needs CAP_SYS_PTRACE\)\$"
	[[ $(<"$TMP/denied.err") =~ $re ]]
}
expect_true "another user's process: the reason" "$(cat "$TMP/denied.err")" denied_reason
expect_eq "another user's process: no probe left" "" "$(uprobe_links "$TARGET")"
kill -USR1 "$TARGET"
expect_true "another user's process: still works" "no done file in 10 s" \
	wait_for 10 test -e "$PRIV/state/denied/done"

# With CAP_SYS_PTRACE it is traced exactly (see test_attach.sh).
start_target ptrace "$PRIV/state/ptrace" || fail "ptrace: target" "not ready in 10 s"
as_nobody ptrace "$BASE,+sys_ptrace" --format json -T 0 -i 3 -n 1 -p "$TARGET" &
tool=$!
wait_for 10 grep -qs "tracing pid $TARGET" "$TMP/ptrace.err" && kill -USR1 "$TARGET"
RC=0
wait "$tool" || RC=$?
if expect_tool_ok ptrace; then
	expect_totals_lost ptrace "$(final_report "$TMP/ptrace.out")" 9000 9 14 5 12 0
fi

finish
