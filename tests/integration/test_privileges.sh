#!/bin/bash
# Least privilege: as user nobody with only CAP_BPF and CAP_PERFMON (which
# uprobe_multi links need) a launched command is traced exactly (where the
# kernel has them; elsewhere alloctrace says CAP_SYS_ADMIN is needed); without
# either one alloctrace refuses with one line and exit status 4. A caller
# that is not root traces only what it could ptrace without capabilities:
# another user's process (root's) is refused (exit 3) and left alone, even
# with CAP_SYS_PTRACE, and --show-data needs root (exit 4), so that a copy
# with file capabilities (setcap) hands no user another's memory. A setuid
# or setgid copy refuses to run at all (exit 4): it neither runs the command
# nor writes root's files.
# test: serial (runs as other users, with capabilities and setuid copies)
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
cp "$WL/target" "$PRIV/target"

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

# denied NAME TOOL ARGS...: root's process, which the caller could not
# ptrace itself: one line saying so, exit 3, nothing probed, and the target
# goes on as if nothing happened.
denied() {
	local name=$1
	shift
	start_target "$name" "$PRIV/state/$name" || fail "$name: target" "not ready in 10 s"
	RC=0
	"$@" --format json -p "$TARGET" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
	expect_eq "$name: exit status" 3 "$RC"
	expect_eq "$name: the reason" "alloctrace: process $TARGET: not yours to trace (another user's, or not dumpable): without root alloctrace traces only what you could ptrace yourself" \
		"$(cat "$TMP/$name.err")"
	expect_eq "$name: no probe left" "" "$(uprobe_links "$TARGET")"
	kill -USR1 "$TARGET"
	expect_true "$name: the target still works" "no done file in 10 s" \
		wait_for 10 test -e "$PRIV/state/$name/done"
}
denied denied as_nobody denied "$BASE"
# CAP_SYS_PTRACE lets the kernel give nobody root's /proc files, not alloctrace.
denied ptrace as_nobody ptrace "$BASE,+sys_ptrace"

# own NAME TOOL ARGS...: a process of nobody's own, started before, is
# traced exactly (see test_attach.sh).
own() {
	local name=$1 tool
	shift
	mkdir -p "$PRIV/state/$name"
	chown nobody "$PRIV/state/$name"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PRIV/target" "$PRIV/state/$name" 60 &
	TARGET=$!
	track "$TARGET"
	wait_for 10 test -e "$PRIV/state/$name/ready" || fail "$name: target" "not ready in 10 s"
	"$@" --format json -T 0 -i 3 -n 1 -p "$TARGET" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	tool=$!
	wait_for 20 grep -qs "tracing pid $TARGET" "$TMP/$name.err" && kill -USR1 "$TARGET"
	RC=0
	wait "$tool" || RC=$?
	if expect_tool_ok "$name"; then
		expect_totals_lost "$name" "$(final_report "$TMP/$name.out")" 9000 9 14 5 12 0
	fi
}
own own as_nobody own "$BASE"

# --- setuid, setgid and file capabilities ----------------------------------------

# A setuid-root copy run by nobody: refused before anything, the command
# not run, root's file untouched.
KEEP=$(mktemp /root/alloctrace-priv.XXXXXX)
trap 'rm -rf "$PRIV" "$KEEP"; cleanup' EXIT
echo keep >"$KEEP"
for bit in u+s g+s; do
	name=setid-${bit%+s}
	cp "$TOOL" "$PRIV/$name"
	chown root:root "$PRIV/$name"
	chmod "$bit" "$PRIV/$name"
	RC=0
	timeout -k 5 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$PRIV/$name" \
		-o "$KEEP" -- /bin/touch "$PRIV/ran-$name" >"$TMP/$name.out" 2>"$TMP/$name.err" || RC=$?
	expect_eq "$name: exit status" 4 "$RC"
	expect_match "$name: the reason" \
		"^alloctrace: refusing to run setuid or setgid \\(real uid 65534, effective [0-9]+; real gid 65534, effective [0-9]+\\): " \
		"$(cat "$TMP/$name.err")"
	expect_eq "$name: one line" 1 "$(wc -l <"$TMP/$name.err")"
	expect_eq "$name: the command did not run" no "$(test -e "$PRIV/ran-$name" && echo yes || echo no)"
	expect_eq "$name: root's file untouched" keep "$(cat "$KEEP")"
done

# A copy with file capabilities, as an administrator might make for
# everyone: nobody gets the capabilities, not root's processes or memory.
FILECAPS=cap_bpf,cap_perfmon,cap_sys_ptrace
has_uprobe_multi || FILECAPS+=,cap_sys_admin
cp "$TOOL" "$PRIV/capcopy"
setcap "$FILECAPS+ep" "$PRIV/capcopy"
as_caps() {
	timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups "$PRIV/capcopy" "$@"
}
denied setcap-root as_caps
own setcap-own as_caps
RC=0
as_caps --show-data 16 -- "$PRIV/leaks" >"$TMP/setcap-data.out" 2>"$TMP/setcap-data.err" || RC=$?
expect_eq "setcap --show-data: exit status" 4 "$RC"
expect_eq "setcap --show-data: the reason" "alloctrace: --show-data shows the traced processes' memory: it needs root (effective uid 0), not only capabilities" \
	"$(cat "$TMP/setcap-data.err")"
expect_eq "setcap --show-data: no report" "" "$(head -c 200 "$TMP/setcap-data.out")"
RC=0
as_caps -o "$KEEP" -- "$PRIV/leaks" >"$TMP/setcap-o.out" 2>"$TMP/setcap-o.err" || RC=$?
expect_eq "setcap -o root's file: exit status" 2 "$RC"
expect_eq "setcap -o root's file: untouched" keep "$(cat "$KEEP")"

# --comm as nobody with capabilities: root's process of the name is left
# alone and counted, nobody's own is traced.
cp "$WL/target" "$PRIV/privcomm"
mkdir -p "$PRIV/state/comm-root" "$PRIV/state/comm-own"
chown nobody "$PRIV/state/comm-own"
"$PRIV/privcomm" "$PRIV/state/comm-root" 60 &
ROOTP=$!
track "$ROOTP"
setpriv --reuid=65534 --regid=65534 --clear-groups "$PRIV/privcomm" "$PRIV/state/comm-own" 60 &
OWNP=$!
track "$OWNP"
wait_for 10 test -e "$PRIV/state/comm-root/ready" -a -e "$PRIV/state/comm-own/ready" ||
	fail "comm: targets" "not ready in 10 s"
as_nobody comm "$BASE" --format json -T 0 -i 3 -n 1 --comm privcomm &
tool=$!
wait_for 20 grep -qs "tracing pid $OWNP" "$TMP/comm.err" && kill -USR1 "$OWNP" "$ROOTP"
RC=0
wait "$tool" || RC=$?
expect_eq "comm: exit status" 0 "$RC"
expect_eq "comm: root's process counted, left alone" 1 \
	"$(grep -c "^alloctrace: warning: not tracing 1 processes that are not yours" "$TMP/comm.err")"
expect_eq "comm: root's process not probed" "" "$(grep "tracing pid $ROOTP" "$TMP/comm.err")"

finish
