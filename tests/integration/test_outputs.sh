#!/bin/bash
# Output files are the invoking user's and no one else's, on a host where
# fs.protected_symlinks and fs.protected_regular are 0 (as some are; set
# here, restored after). An ordinary user's 0666 file planted at the path
# in /tmp, with the user holding it open, gets none of what root's run
# wrote (its --show-data bytes from the traced heap included): the file is
# replaced by a new 0600 one. No symbolic link is followed in any component
# of a path, a --pprof-dir given as "link/" included; a directory others
# could change is refused with one line, exit status 2; a run that fails
# before tracing leaves nothing behind.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/trend"

SYSCTLS=(fs.protected_symlinks fs.protected_regular)
OLD=$(sysctl -n "${SYSCTLS[@]}" | paste -sd' ')
# SHARED: nobody's directory, for its helper's files.
SHARED=$(mktemp -d /tmp/alloctrace-outputs.XXXXXX)
chown nobody "$SHARED"
PLANTED=$(mktemp -u /tmp/alloctrace-planted.XXXXXX)
restore() {
	local i=0 v
	for v in $OLD; do
		sysctl -qw "${SYSCTLS[i++]}=$v"
	done
	rm -rf "$SHARED" "$PLANTED" "$PLANTED.html"
	cleanup
}
trap restore EXIT
for s in "${SYSCTLS[@]}"; do
	sysctl -qw "$s=0"
done

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# --- a 0666 file planted in /tmp, held open by its owner ----------------------

for f in "$PLANTED" "$PLANTED.html"; do
	as_nobody sh -c 'umask 0; : >"$1"' sh "$f"
done
# nobody keeps the planted file open and reads it once root's run is over.
as_nobody sh -c 'exec 3<"$1"; : >"$2/opened"
	while [ ! -e "$2/done" ]; do sleep 0.1; done; cat <&3' \
	sh "$PLANTED" "$SHARED" >"$TMP/held.out" 2>&1 &
HELD=$!
track "$HELD"
wait_for 10 test -e "$SHARED/opened" || fail "planted: held open" "not in 10 s"
run_tool planted 120 --format json -i 0.5 -T 0 --show-data 12 -o "$PLANTED" \
	--html "$PLANTED.html" -- "$WL/trend" 3
touch "$SHARED/done"
wait "$HELD"
expect_eq "planted: exit status" 0 "$RC"
expect_eq "planted: the secret was read (the test sees it)" 1 \
	"$(grep -c 5345435245542d544f4b454e "$PLANTED" | sed 's/^[1-9][0-9]*$/1/')"
for f in "$PLANTED" "$PLANTED.html"; do
	expect_eq "planted $(basename "$f"): a new file, root's, mode 600" "root 600" \
		"$(stat -c '%U %a' "$f")"
	RC=0
	as_nobody cat "$f" >"$TMP/cat.out" 2>&1 || RC=$?
	expect_true "planted $(basename "$f"): nobody cannot read it" "exit status $RC" [ "$RC" -ne 0 ]
	expect_eq "planted $(basename "$f"): nobody saw no secret" 0 \
		"$(grep -c -e 5345435245542d544f4b454e -e SECRET-TOKEN "$TMP/cat.out")"
done
expect_eq "planted: the held file got nothing" "" "$(head -c 200 "$TMP/held.out")"

# --- symbolic links above the file, and "link/" ------------------------------

mkdir "$TMP/real"
ln -s "$TMP/real" "$TMP/via"
# refused NAME WHY OPTION PATH: exit 2, no report, one line, nothing in real/.
refused() {
	local name=$1 why=$2
	shift 2
	run_tool "$name" 20 --format json "$@" -- "$WL/trend" 1
	expect_eq "$name: exit status" 2 "$RC"
	expect_eq "$name: no report" "" "$(head -c 200 "$TMP/$name.out")"
	expect_eq "$name: one line" "alloctrace: $why" "$(cat "$TMP/$name.err")"
	expect_eq "$name: nothing made through the link" "" "$(ls -A "$TMP/real")"
}
NOLINK="$TMP/via is a symbolic link, which alloctrace does not follow"
refused via-o "cannot create $TMP/via/x.json: $NOLINK" -o "$TMP/via/x.json"
refused via-html "cannot create $TMP/via/x.html: $NOLINK" --html "$TMP/via/x.html"
refused via-folded "cannot create $TMP/via/sub/x: $NOLINK" --folded "$TMP/via/sub/x"
refused via-pprof-dir "cannot write pprof files to $TMP/via/: $NOLINK" --pprof-dir "$TMP/via/"
refused via-pprof-dir-dot "cannot write pprof files to $TMP/via/.: $NOLINK" \
	--pprof-dir "$TMP/via/."

# --- directories others could change ------------------------------------------

mkdir -m 777 "$TMP/open"
refused open-dir "cannot create $TMP/open/x.pb.gz: $TMP/open is writable by others and not sticky, so they could swap its files: alloctrace writes only where no one but root and you can" \
	--pprof "$TMP/open/x.pb.gz"
mkdir -m 777 "$TMP/open/deeper"
chmod +t "$TMP/open/deeper"
refused open-above "cannot create $TMP/open/deeper/x: $TMP/open is writable by others and not sticky, so they could swap its files: alloctrace writes only where no one but root and you can" \
	--folded-count "$TMP/open/deeper/x"
mkdir "$TMP/theirs"
chown nobody "$TMP/theirs"
refused theirs "cannot create $TMP/theirs/x: $TMP/theirs is another user's (uid 65534), who could swap its files: alloctrace writes only where no one but root and you can" \
	-o "$TMP/theirs/x"
expect_eq "refused: nothing left in the directories" "" "$(find "$TMP/open/deeper" "$TMP/theirs" -mindepth 1)"

# --- a run that fails before tracing leaves nothing -----------------------------

mkdir "$TMP/fails"
GONE=$(sh -c 'echo $$')
run_tool fails 20 -o "$TMP/fails/o" --html "$TMP/fails/h" --pprof "$TMP/fails/p" \
	--folded "$TMP/fails/f" --pprof-dir "$TMP/fails" -p "$GONE"
expect_eq "fails: exit status" 3 "$RC"
expect_eq "fails: nothing left" "" "$(ls -A "$TMP/fails")"

finish
