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
bad=""
for f in $(make -s --no-print-directory print-format-files); do
	clang-format "$f" | cmp -s - "$f" || bad+=" $f"
done
if [[ -z $bad ]]; then
	echo "ok - format: every C source as clang-format writes it"
else
	echo "not ok - format: differs from clang-format (run make format):$bad"
fi
