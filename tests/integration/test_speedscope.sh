#!/bin/bash
# speedscope opens alloctrace's pprof file: its page, served on loopback
# with the profile, reaches the profile view (its "Left Heavy" tab), which
# it shows only after an import; its page without a profile never gets
# there.
# speedscope comes from npm through `make deps` into build/speedscope.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
SS=$ROOT/build/speedscope/dist/release
CHROME=$(command -v chromium || true)
if [[ ! -f $SS/index.html || -z $CHROME ]]; then
	fail "speedscope" "speedscope or chromium missing: run make deps"
	finish
fi

run_tool pprof 60 --pprof "$TMP/leaks.pb.gz" -- "$WL/leaks"
expect_eq "pprof: exit status" 0 "$RC"

# A static server on loopback: speedscope fetches the profile by URL.
cp "$TMP/leaks.pb.gz" "$SS/alloctrace-test.pb.gz"
PORT=$((20000 + $$ % 20000))
node -e '
	const http = require("http"), fs = require("fs"), path = require("path");
	const [root, port] = process.argv.slice(1);
	http.createServer((req, res) => {
		const file = path.join(root, decodeURIComponent(req.url.split(/[?#]/)[0]));
		fs.readFile(file, (err, data) => {
			res.writeHead(err ? 404 : 200);
			res.end(err ? "" : data);
		});
	}).listen(+port, "127.0.0.1", () => console.log("listening"));
	setTimeout(() => process.exit(0), 600000);
' "$SS" "$PORT" >"$TMP/server.out" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; rm -f "$SS"/alloctrace-*.pb.gz; cleanup' EXIT
# Started is not listening: node takes over a second to get there in QEMU
# without KVM.
wait_for 30 grep -q listening "$TMP/server.out" || fail "speedscope: server" "not listening in 30 s"

# open_page NAME [FRAGMENT]: speedscope's DOM once it has had 5 s (virtual
# time); Chromium alone took 59 s to dump a one-line page in QEMU without
# KVM (Debian's 6.12, one CPU, a loaded host).
open_page() {
	timeout -k 5 240 "$CHROME" --headless=new --no-sandbox --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TMP/chrome.XXXXXX")" --virtual-time-budget=5000 \
		--dump-dom "http://127.0.0.1:$PORT/index.html${2:-}" >"$TMP/$1.dom" 2>/dev/null
}

# open_profile NAME FILE: the page importing FILE, titled NAME.
open_profile() {
	open_page "$1" "#profileURL=http://127.0.0.1:$PORT/$2&title=$1"
}

open_profile leaks alloctrace-test.pb.gz
expect_true "speedscope: profile view of the pprof file" "$(head -c 300 "$TMP/leaks.dom")" \
	grep -q "Left Heavy" "$TMP/leaks.dom"
expect_true "speedscope: titled by the profile" "$(head -c 300 "$TMP/leaks.dom")" \
	grep -q "<title>leaks - speedscope</title>" "$TMP/leaks.dom"
# The check can fail: the page drawn without a profile has no such view.
# (A file speedscope cannot read makes it open an alert, which holds
# headless Chromium until it is killed.)
open_page landing
expect_true "speedscope: its page without a profile, drawn" "$(head -c 300 "$TMP/landing.dom")" \
	grep -q "Drag and drop a profile file" "$TMP/landing.dom"
expect_true "speedscope: no profile view without a profile" "$(head -c 300 "$TMP/landing.dom")" \
	test "$(grep -c "Left Heavy" "$TMP/landing.dom")" -eq 0

finish
