#!/bin/bash
# The C sources are as clang-format (the project's .clang-format) writes
# them: one "ok"/"not ok" line, naming the files that differ. `make format`
# rewrites them.
set -u
# One result: the TAP plan first.
echo "1..1"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
if ! command -v clang-format >/dev/null; then
	echo "not ok - format: clang-format is missing: run make deps"
	exit 0
fi
# One clang-format for them all (make unit's time): each place it would
# change is an error naming the file; its status says whether any was.
# shellcheck disable=SC2046 # the files are meant to split
out=$(clang-format --dry-run --Werror $(make -s --no-print-directory print-format-files) 2>&1)
rc=$?
bad=$(sed -n 's/^\([^: ]*\):[0-9]*:[0-9]*: error: .*/ \1/p' <<<"$out" | sort -u | tr -d '\n')
if ((rc != 0)) && [[ -z $bad ]]; then
	echo "not ok - format: clang-format failed: $(head -c 300 <<<"$out")"
elif [[ -z $bad ]]; then
	echo "ok - format: every C source as clang-format writes it"
else
	echo "not ok - format: differs from clang-format (run make format):$bad"
fi
