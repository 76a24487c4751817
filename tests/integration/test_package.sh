#!/bin/bash
# The Debian package (issue 41): debian/ builds with dpkg-buildpackage -us
# -uc -b from a copy of the tree without its build (make deb), lintian
# finds no error and no warning but the one debian/'s overrides explain,
# and dpkg -i installs a package whose /usr/sbin/alloctrace lists the
# kernel's features and traces a command exactly, with the man page and
# the template unit where they belong; dpkg --purge takes it all away.
# test: serial (installs a package on the machine, and takes it away)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
DEB_DIR=$TMP/deb
if ! "$ROOT/scripts/deb.sh" "$DEB_DIR" >"$TMP/deb.out" 2>"$TMP/deb.err"; then
	fail "package: dpkg-buildpackage" "$(tail -n 5 "$TMP/deb.err")"
	finish
fi
ok "package: dpkg-buildpackage -us -uc -b"
DEB=$(compgen -G "$DEB_DIR/alloctrace_*.deb" | head -n 1)
lintian "$DEB" >"$TMP/lintian.out" 2>&1
expect_eq "package: lintian, no error and no warning" "" \
	"$(grep -E '^(E|W): ' "$TMP/lintian.out")"

if dpkg -l alloctrace 2>/dev/null | grep -q '^ii'; then
	fail "package: install" "an alloctrace package is installed already: left alone"
	finish
fi
trap 'dpkg --purge alloctrace >/dev/null 2>&1; cleanup' EXIT
RC=0
dpkg -i "$DEB" >"$TMP/install.out" 2>&1 || RC=$?
expect_eq "package: dpkg -i" 0 "$RC"
for f in /usr/sbin/alloctrace /usr/share/man/man8/alloctrace.8.gz \
	/lib/systemd/system/alloctrace@.service; do
	expect_true "package: installs $f" "not there" test -e "$f"
done
expect_eq "package: --version lists the kernel's features" \
	"$(grep -c '^KFEATURE(' "$ROOT/user/tracer/features.def")" \
	"$(/usr/sbin/alloctrace --version | grep -cE '^  (yes|no ) ')"
TOOL=/usr/sbin/alloctrace
run_tool installed 120 --format json -T 0 -- "$WL/leaks"
if expect_tool_ok installed; then
	r=$(final_report "$TMP/installed.out")
	expect_totals installed "$r" 51478 137 10159 10022
fi
if command -v systemd-analyze >/dev/null; then
	# Any unit that exists here stands for the traced service.
	for unit in /lib/systemd/system/*.service; do
		[[ $unit == *@* ]] || break
	done
	unit=$(basename "$unit" .service)
	RC=0
	systemd-analyze verify "/lib/systemd/system/alloctrace@$unit.service" \
		>"$TMP/verify.out" 2>&1 || RC=$?
	if ((RC == 0)); then
		ok "package: the template unit verifies (alloctrace@$unit)"
	else
		fail "package: the template unit verifies (alloctrace@$unit)" "$(head -c 300 "$TMP/verify.out")"
	fi
fi
dpkg --purge alloctrace >"$TMP/purge.out" 2>&1
expect_true "package: dpkg --purge leaves nothing" "/usr/sbin/alloctrace still there" \
	test ! -e /usr/sbin/alloctrace
finish
