#!/bin/bash
# deb.sh DIR: build the Debian package (debian/) as a fresh clone would,
# with dpkg-buildpackage -us -uc -b, in DIR/alloctrace, a copy of this tree
# without its build (debian/rules' clean removes build/: this tree's own
# must stay). The .deb files end up in DIR; the build's output in
# DIR/build.log. Exits with dpkg-buildpackage's status.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$(mkdir -p "$1" && cd "$1" && pwd)

command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || {
	echo "deb: dpkg-buildpackage and debhelper are missing (run make deps)" >&2
	exit 1
}
rm -rf "$DIR/alloctrace" "$DIR"/*.deb "$DIR"/*.buildinfo "$DIR"/*.changes
mkdir -p "$DIR/alloctrace"
(cd "$ROOT" && tar -c --exclude=./build --exclude=./bench/build --exclude=./alloctrace \
	--exclude=./.git .) | tar -x -C "$DIR/alloctrace"
rc=0
(cd "$DIR/alloctrace" && dpkg-buildpackage -us -uc -b) >"$DIR/build.log" 2>&1 || rc=$?
if ((rc != 0)); then
	tail -n 20 "$DIR/build.log" >&2
	echo "deb: dpkg-buildpackage failed (exit status $rc; $DIR/build.log)" >&2
fi
ls "$DIR"/*.deb 2>/dev/null || true
exit "$rc"
