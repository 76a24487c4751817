#!/bin/bash
# Symbols for a stripped program from wherever production keeps them:
# tests/workloads/leaks stripped of every symbol and all debug information
# gets its function names and file:line back through a separate debug
# file found by build id, through .gnu_debuglink (beside it and in its
# .debug directory), from a real debuginfod server on 127.0.0.1, and its
# names (no lines) from MiniDebugInfo (.gnu_debugdata). Each time with the
# exact leaks of tests/workloads/leaks.c; without any of them the same
# binary shows ?? and offsets, and a debug file of another build is
# refused. A dead or silent debuginfod server costs a bounded time, once
# per object. Every frame's build id, in JSON and pprof, is readelf's.
#
# The build-id case mounts its own directory over /usr/lib/debug in a
# private mount namespace, and the debuginfod cases run server and tool in
# a network namespace of their own: nothing outside is touched or reached.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"
for cmd in objcopy strip nm xz readelf unshare ip debuginfod python3 curl; do
	command -v "$cmd" >/dev/null || { fail "prerequisites" "$cmd is missing (make deps)"; finish; }
done

SRC=tests/workloads/leaks.c
ID=$(build_id_of "$WL/leaks")
expect_match "readelf -n: the workload has a build id" '^[0-9a-f]{40}$' "$ID"

# Leaks of leaks.c whose allocating call is known by its text:
#     function       bytes  blocks call
LEAKS=(
	leak_small 2400 100 'keep(malloc(24));'
	leak_medium 28672 7 'keep(calloc(64, 64));'
	leak_realloc 5000 5 'p = realloc(p, 1000);'
	leak_memalign 1000 5 'keep(memalign(32, 200));'
)

# The debug information split off as distributions do.
FULL=$TMP/full.debug
objcopy --only-keep-debug "$WL/leaks" "$FULL"

# stripped DIR: the workload without .symtab nor any debug section, as
# DIR/leaks; readelf still finds its build id note.
stripped() {
	mkdir -p "$1"
	strip --strip-all -o "$1/leaks" "$WL/leaks"
}

# trace NAME SECONDS COMMAND...: COMMAND (env, unshare...) whose last
# arguments run the tool; no debuginfod unless the command sets one.
trace() {
	local name=$1 secs=$2
	shift 2
	RC=0
	timeout -k 5 "$secs" env -u DEBUGINFOD_URLS "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		RC=$?
}

# leaks_in NAME BIN: trace BIN, a copy of the workload, as NAME.
leaks_in() {
	trace "$1" 60 "$TOOL" --format json -T 0 -- "$2"
}

# frame0 REPORT FUNCTION JQ: JQ of frames[0] of the stacks allocating from
# FUNCTION's call, found by its offset, whose name may be unknown.
frame0() {
	jq -c --arg o "$2" "[.stacks[] | select(.frames[0].offset == \$o) | .frames[0] | $3] | unique" \
		<<<"$1"
}

# Where each leak's call is in the workload, from a run with its symbols.
leaks_in plain "$WL/leaks"
expect_tool_ok plain || finish
PLAIN=$(final_report "$TMP/plain.out")
declare -A OFFSET
for ((i = 0; i < ${#LEAKS[@]}; i += 4)); do
	fn=${LEAKS[i]}
	OFFSET[$fn]=$(jq -r --arg f "$fn" \
		'[.stacks[] | select(.frames[0].function == $f) | .frames[0].offset] | unique | .[]' \
		<<<"$PLAIN")
	expect_match "plain: $fn allocates from one call" '^0x[0-9a-f]+$' "${OFFSET[$fn]}"
done

# expect_symbols NAME BIN LINES: the run NAME of BIN has each leak exactly,
# named, at its file:line when LINES is "lines", else with no source.
expect_symbols() {
	local name=$1 bin=$2 r fn at line
	expect_tool_ok "$name" || return
	r=$(final_report "$TMP/$name.out")
	for ((i = 0; i < ${#LEAKS[@]}; i += 4)); do
		fn=${LEAKS[i]}
		expect_eq "$name: $fn bytes, blocks" "${LEAKS[i + 1]} ${LEAKS[i + 2]}" \
			"$(fn_sum "$r" outstanding_bytes "$fn") $(fn_sum "$r" outstanding_allocs "$fn")"
		line=$(grep -nF "${LEAKS[i + 3]}" "$ROOT/$SRC" | cut -d: -f1)
		at='"null:null"'
		[[ $3 == lines ]] && at="\"$SRC:$line\""
		expect_eq "$name: $fn at $at" "[$at]" \
			"$(frame0 "$r" "${OFFSET[$fn]}" '"\(.file):\(.line)"')"
	done
	expect_eq "$name: totals" '51478 137' \
		"$(report_get "$r" '"\(.totals.outstanding_bytes) \(.totals.outstanding_allocs)"' |
			tr -d '"')"
}

# --- no debug information: addresses only ------------------------------------

stripped "$TMP/bare"
expect_eq "bare: stripped of .symtab and debug sections" 0 \
	"$(readelf -S "$TMP/bare/leaks" | grep -cE '\.symtab|\.debug_|\.gnu_debug')"
leaks_in bare "$TMP/bare/leaks"
if expect_tool_ok bare; then
	r=$(final_report "$TMP/bare.out")
	for ((i = 0; i < ${#LEAKS[@]}; i += 4)); do
		fn=${LEAKS[i]}
		expect_eq "bare: ${fn}'s call unnamed, with its module and offset, exact" \
			"[{\"module\":\"$TMP/bare/leaks\",\"function\":null,\"file\":null,\"build_id\":\"$ID\",\"bytes\":${LEAKS[i + 1]}}]" \
			"$(jq -c --arg o "${OFFSET[$fn]}" '[.stacks[] | select(.frames[0].offset == $o)
				| {module: .frames[0].module, function: .frames[0].function,
				   file: .frames[0].file, build_id: .frames[0].build_id,
				   bytes: .outstanding_bytes}]' <<<"$r")"
	done
	expect_eq "bare: no function of the workload named" 0 \
		"$(jq --arg m "$TMP/bare/leaks" '[.stacks[].frames[] | select(.module == $m and .function != null)] | length' <<<"$r")"
fi
trace bare-text 60 "$TOOL" -T 0 -- "$TMP/bare/leaks"
expect_eq "bare: text shows ?? and the offset" 1 \
	"$(grep -cF "#0 ?? ($TMP/bare/leaks+${OFFSET[leak_medium]})" "$TMP/bare-text.out")"

# --- a debug file by build id: /usr/lib/debug/.build-id/xx/yyyy.debug -------

stripped "$TMP/byid"
mkdir -p "$TMP/debugroot/.build-id/${ID:0:2}"
cp "$FULL" "$TMP/debugroot/.build-id/${ID:0:2}/${ID:2}.debug"
[[ -d /usr/lib/debug ]] || fail "build id" "/usr/lib/debug does not exist to mount over"
# shellcheck disable=SC2016 # the inner shell's arguments
trace byid 60 unshare -m --propagation private sh -c \
	'mount --bind "$1" /usr/lib/debug && shift && exec "$@"' sh "$TMP/debugroot" \
	"$TOOL" --format json -T 0 --pprof "$TMP/byid.pb.gz" -- "$TMP/byid/leaks"
expect_symbols byid "$TMP/byid/leaks" lines
expect_eq "byid: the real /usr/lib/debug is untouched" "" \
	"$(ls "/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug" 2>/dev/null)"

# Every frame's build id in JSON is its object's, as readelf -n says.
r=$(final_report "$TMP/byid.out")
mods=$(jq -r '[.stacks[].frames[].module | select(. != null)] | unique | .[]' <<<"$r")
expect_match "byid: frames in the workload and libc" "libc\\.so" "$mods"
while read -r mod; do
	expect_eq "byid JSON: build id of every frame in $mod" "[\"$(build_id_of "$mod")\"]" \
		"$(jq -c --arg m "$mod" '[.stacks[].frames[] | select(.module == $m) | .build_id] | unique' \
			<<<"$r")"
done <<<"$mods"

# And in pprof: each mapping's build id is readelf's.
if command -v go >/dev/null; then
	export HOME=${HOME:-$TMP}
	raw=$(go tool pprof -raw "$TMP/byid.pb.gz" 2>"$TMP/pprof.err")
	maps=$(sed -n '/^Mappings/,$p' <<<"$raw" | grep -E '^[0-9]+: ')
	expect_eq "byid pprof: a mapping per module" "$(wc -l <<<"$mods")" "$(wc -l <<<"$maps")"
	while read -r _ _ mod id _; do
		expect_eq "byid pprof: build id of $mod" "$(build_id_of "$mod")" "$id"
	done <<<"$maps"
	expect_eq "byid pprof: leak_small's bytes, named" 2400B \
		"$(go tool pprof -top -nodefraction=0 -unit=B -sample_index=inuse_space \
			"$TMP/byid.pb.gz" 2>/dev/null | awk '$NF == "leak_small" { print $1 }')"
else
	fail "go tool pprof" "go is not installed (make deps)"
fi

# --- .gnu_debuglink: beside the binary, then in its .debug directory --------

# The link names leaks-syms.dbg, not leaks.debug, which libdwfl would try
# even without a link.
stripped "$TMP/link"
cp "$FULL" "$TMP/link/leaks-syms.dbg"
(cd "$TMP/link" && objcopy --add-gnu-debuglink=leaks-syms.dbg leaks)
expect_eq "link: .gnu_debuglink names the file" leaks-syms.dbg \
	"$(readelf -p .gnu_debuglink "$TMP/link/leaks" | sed -n 's/^ *\[ *0\] *//p')"
leaks_in link "$TMP/link/leaks"
expect_symbols link "$TMP/link/leaks" lines

mkdir -p "$TMP/dotdebug"
cp "$TMP/link/leaks" "$TMP/dotdebug/leaks"
mkdir "$TMP/dotdebug/.debug"
cp "$FULL" "$TMP/dotdebug/.debug/leaks-syms.dbg"
leaks_in dotdebug "$TMP/dotdebug/leaks"
expect_symbols dotdebug "$TMP/dotdebug/leaks" lines

# A file of that name from another build fails the link's CRC: not used.
mkdir -p "$TMP/wronglink"
cp "$TMP/link/leaks" "$TMP/wronglink/leaks"
objcopy --only-keep-debug "$WL/many" "$TMP/wronglink/leaks-syms.dbg"
leaks_in wronglink "$TMP/wronglink/leaks"
expect_tool_ok wronglink &&
	expect_eq "wronglink: nothing named from another build's debug file" '[null]' \
		"$(frame0 "$(final_report "$TMP/wronglink.out")" "${OFFSET[leak_small]}" .function)"

# --- MiniDebugInfo: an xz-compressed .symtab in .gnu_debugdata ------------------

# As Fedora makes it (gdb's manual, "MiniDebugInfo"): the function symbols
# that .dynsym lacks, in an otherwise empty ELF, compressed into the
# stripped binary.
mini() {
	local dir=$TMP/mini
	mkdir -p "$dir"
	cp "$WL/leaks" "$dir/leaks"
	nm -D "$dir/leaks" --format=posix --defined-only | awk '{ print $1 }' | sort >"$dir/dynsyms"
	nm "$dir/leaks" --format=posix --defined-only |
		awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$dir/funcsyms"
	comm -13 "$dir/dynsyms" "$dir/funcsyms" >"$dir/keep"
	objcopy --only-keep-debug "$dir/leaks" "$dir/debug"
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols="$dir/keep" "$dir/debug" "$dir/mini"
	strip --strip-all -R .comment "$dir/leaks"
	xz --threads=1 "$dir/mini"
	objcopy --add-section .gnu_debugdata="$dir/mini.xz" "$dir/leaks"
	rm -f "$dir/debug" "$dir/mini.xz"
}
mini
expect_eq "mini: .gnu_debugdata, no .symtab" ".gnu_debugdata" \
	"$(readelf -S "$TMP/mini/leaks" | grep -oE '\.symtab|\.gnu_debugdata|\.debug_info' | paste -sd ' ')"
leaks_in mini "$TMP/mini/leaks"
expect_symbols mini "$TMP/mini/leaks" nolines

# --- debuginfod ----------------------------------------------------------------

# netns.sh SERVER LOG DIR COMMAND...: in a network namespace of its own
# (only its loopback), start SERVER (debuginfod or hole) on a random port
# of 127.0.0.1, then run COMMAND with DEBUGINFOD_URLS naming it; the
# server ends with the namespace's shell. With ROOT_FILES set, root's home
# is a fresh tmpfs, and the files left in it are listed there.
cat >"$TMP/netns.sh" <<'EOF'
set -u
server=$1 log=$2 dir=$3
shift 3
ip link set lo up || exit 90
root_home=$(getent passwd 0 | cut -d: -f6)
if [[ -n ${ROOT_FILES:-} ]]; then
	mount -t tmpfs none "$root_home" || exit 91
fi
port=$(shuf -i 20000-60000 -n 1)
if [[ $server == debuginfod ]]; then
	debuginfod -F -p "$port" -d "$dir/db.sqlite" -t 0 -g 0 "$dir/srv" >"$log" 2>&1 &
else
	python3 "$dir/hole.py" "$port" "$log" &
fi
pid=$!
trap 'kill "$pid"; wait "$pid"' EXIT
# Ready when it serves the debug file (debuginfod scans first) or listens.
for _ in $(seq 200); do
	if [[ $server == debuginfod ]]; then
		[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
			"http://127.0.0.1:$port/buildid/$ID/debuginfo") == 200 ]] && break
	else
		[[ -s $log.ready ]] && break
	fi
	sleep 0.1
done
rc=0
DEBUGINFOD_URLS=http://127.0.0.1:$port "$@" || rc=$?
if [[ -n ${ROOT_FILES:-} ]]; then
	(cd "$root_home" && find . -type f) >"$ROOT_FILES"
fi
exit $rc
EOF
# A server that takes requests and never answers; it logs each one.
cat >"$TMP/hole.py" <<'EOF'
import socket, sys, threading

srv = socket.socket()
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen(64)
log = open(sys.argv[2], "a", buffering=1)
open(sys.argv[2] + ".ready", "w").write("ready\n")
held = []


def read_request(conn):
    data = b""
    while b"\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    log.write(data.split(b"\r\n")[0].decode() + "\n")


while True:
    conn, _ = srv.accept()
    held.append(conn)
    threading.Thread(target=read_request, args=(conn,), daemon=True).start()
EOF
mkdir -p "$TMP/srv"
cp "$FULL" "$TMP/srv/leaks.debug"

# debuginfod_run NAME SERVER SECONDS BIN [ENV_ARG...]: trace BIN, SERVER
# in the namespace; ENV_ARGs for env(1), by default a cache of its own.
debuginfod_run() {
	local name=$1 server=$2 secs=$3 bin=$4
	shift 4
	rm -rf "$TMP/$name.cache"
	(($#)) || set -- DEBUGINFOD_CACHE_PATH="$TMP/$name.cache"
	trace "$name" "$secs" unshare -n -m --propagation private env "$@" ID="$ID" \
		bash "$TMP/netns.sh" "$server" "$TMP/$name.log" "$TMP" \
		"$TOOL" --format json -T 0 -- "$bin"
}

stripped "$TMP/dind"
debuginfod_run dind debuginfod 90 "$TMP/dind/leaks"
expect_symbols dind "$TMP/dind/leaks" lines
expect_eq "dind: the tool (libdebuginfod, elfutils' agent) fetched it, once" 1 \
	"$(grep -c "UA:elfutils.* GET /buildid/$ID/debuginfo 200 " "$TMP/dind.log")"
expect_true "dind: into DEBUGINFOD_CACHE_PATH" "$(find "$TMP/dind.cache" 2>&1 | head -c 300)" \
	cmp -s "$FULL" "$TMP/dind.cache/$ID/debuginfo"

# Run as root with another user's HOME (sudo -E): the cache is root's own,
# nothing lands in that home.
mkdir -p "$TMP/userhome"
chown 65534:65534 "$TMP/userhome"
debuginfod_run rootcache debuginfod 90 "$TMP/dind/leaks" -u DEBUGINFOD_CACHE_PATH \
	-u XDG_CACHE_HOME HOME="$TMP/userhome" ROOT_FILES="$TMP/rootcache.files"
expect_tool_ok rootcache &&
	expect_eq "rootcache: leak_small named" '["leak_small"]' \
		"$(frame0 "$(final_report "$TMP/rootcache.out")" "${OFFSET[leak_small]}" .function)"
expect_eq "rootcache: nothing in the user's home" "" "$(find "$TMP/userhome" -mindepth 1)"
expect_eq "rootcache: the debug file in root's cache" \
	"./.cache/debuginfod_client/$ID/debuginfo" \
	"$(grep -F "/$ID/" "$TMP/rootcache.files" 2>&1)"

# A server that never answers: each object asked once, for at most
# DEBUGINFOD_TIMEOUT (alloctrace makes libdebuginfod's 90 s with 2 retries
# 10 s without), the leaks exact, unnamed.
start=$SECONDS
debuginfod_run hole hole 60 "$TMP/bare/leaks" DEBUGINFOD_CACHE_PATH="$TMP/hole.cache" \
	DEBUGINFOD_TIMEOUT=2
elapsed=$((SECONDS - start))
expect_tool_ok hole &&
	expect_eq "hole: leak_medium exact, unnamed" "[{\"function\":null,\"bytes\":28672}]" \
		"$(jq -c --arg o "${OFFSET[leak_medium]}" '[.stacks[] | select(.frames[0].offset == $o)
			| {function: .frames[0].function, bytes: .outstanding_bytes}]' \
			<<<"$(final_report "$TMP/hole.out")")"
expect_eq "hole: the workload's debug info asked for once" 1 \
	"$(grep -c "^GET /buildid/$ID/debuginfo " "$TMP/hole.log")"
expect_eq "hole: no object asked for twice" "" "$(sort "$TMP/hole.log" | uniq -d)"
expect_true "hole: done in ${elapsed}s, 2 s for each of $(wc -l <"$TMP/hole.log") requests" \
	"took too long" [ "$elapsed" -le $((10 + 3 * $(wc -l <"$TMP/hole.log"))) ]

start=$SECONDS
debuginfod_run hole-default hole 90 "$TMP/bare/leaks"
elapsed=$((SECONDS - start))
expect_tool_ok hole-default
expect_true "hole-default: done in ${elapsed}s, 10 s for each of $(wc -l <"$TMP/hole-default.log") requests" \
	"took too long" [ "$elapsed" -le $((15 + 12 * $(wc -l <"$TMP/hole-default.log"))) ]

# Nothing listening: refused at once.
start=$SECONDS
# shellcheck disable=SC2016 # the inner shell's arguments
trace dead 60 unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
	env DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_CACHE_PATH="$TMP/dead.cache" \
	"$TOOL" --format json -T 0 -- "$TMP/bare/leaks"
elapsed=$((SECONDS - start))
expect_tool_ok dead
expect_true "dead: done in ${elapsed}s" "took too long" [ "$elapsed" -le 15 ]

finish
