#!/bin/bash
# Usage and runtime errors: each exits non-zero, prints nothing on stdout
# and exactly one line on stderr, starting with "alloctrace: ".
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaks"

# A pid that existed a moment ago: our own reaped child.
sleep 0 &
gone=$!
wait "$gone"
dead "$gone" || fail "setup" "pid $gone was reused"

expect_error "nonexistent pid" -p "$gone"
expect_error "pid not a number" -p abc
expect_error "--interval abc" --interval abc -- "$WL/leaks"
expect_error "-i abc" -i abc -- "$WL/leaks"
expect_error "--count abc" --count abc -- "$WL/leaks"
expect_error "--top -1" --top -1 -- "$WL/leaks"
expect_error "--big 12Q" --big 12Q -- "$WL/leaks"
expect_error "--format xml" --format xml -- "$WL/leaks"
expect_error "command not found by path" -- /nonexistent/alloctrace-test-cmd
expect_error "command not found in PATH" -- alloctrace-test-no-such-command
expect_error "command not executable" -- /etc/passwd
expect_error "a kernel thread" -p 2
expect_error "both -p and a command" -p 1 -- "$WL/leaks"
expect_error "nothing to trace"
expect_error "--sample 0" --sample 0 -- "$WL/leaks"
expect_error "--thread-name bad regex" --thread-name '(' -- "$WL/leaks"
expect_error "--module regex that would eat memory" --module "a$(printf '+%.0s' {1..40})" -- "$WL/leaks"
expect_error "--min-size above --max-size" --min-size 2K --max-size 1K -- "$WL/leaks"
expect_error "--show-data 1000" --show-data 1000 -- "$WL/leaks"
expect_error "--folded into a directory" --folded /tmp -- "$WL/leaks"
expect_error "--allocator without malloc" --allocator /etc/passwd -- "$WL/leaks"

# A static, stripped program: no malloc symbol anywhere to probe.
printf '#include <stdlib.h>\nint main(void) { return malloc(1) == 0; }\n' >"$TMP/st.c"
if musl-gcc -static -s "$TMP/st.c" -o "$TMP/static-stripped"; then
	expect_error "static stripped program: no allocator" -- "$TMP/static-stripped"
else
	fail "static stripped program" "musl-gcc failed (make deps installs musl-tools)"
fi

finish
