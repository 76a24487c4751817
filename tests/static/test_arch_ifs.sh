#!/bin/bash
# One plug-in point per architecture: no preprocessor conditional names
# an architecture outside the architecture files, whose choosers end in
# #error (bpf/arch.bpf.h for the BPF side, include/arch.h for what it
# shares with the loader, the Makefile's user/arch/arch_$(ARCH).c for the
# loader). An #if elsewhere would take one architecture's numbering in
# its #else for every other. tests/workloads/ is left out: a workload's
# inline assembly is the architecture's test itself. Then that every
# chooser's #else is an #error. Prints one "ok"/"not ok" line each.
set -u
echo "1..2"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
ARCH_MACROS='__x86_64__|__aarch64__|__TARGET_ARCH_|bpf_target_|__i386__|__arm__|__riscv'
COND='^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif)\b'
bad=$(find . \( -name build -o -name .git -o -path ./tests/workloads \) -prune -o -type f \
	\( -name '*.[chsS]' -o -name '*.cc' -o -name '*.def' \) -print |
	sed 's|^\./||' |
	grep -Ev '^(bpf/arch(_[a-z0-9]+)?\.bpf\.h|include/arch(_[a-z0-9]+)?\.h|user/arch/arch_[a-z0-9]+\.c)$' |
	sort | xargs -r grep -EHn "$COND.*($ARCH_MACROS)" | cut -d: -f1,2 | tr '\n' ' ')
if [[ -z $bad ]]; then
	echo "ok - arch: no architecture #if outside the architecture files"
else
	echo "not ok - arch: an architecture #if outside the architecture files (put it in bpf/arch_<name>.bpf.h, include/arch_<name>.h or user/arch/): $bad"
fi

# Each #else of a chooser followed by an #error: an unknown architecture
# stops the build instead of taking another's file.
bad=""
for f in bpf/arch.bpf.h include/arch.h; do
	awk '/^#else/ { e = NR; next } e && !/^#error / { print FILENAME ":" e } { e = 0 }' "$f" |
		grep -q . && bad+=" $f"
	grep -q '^#error ' "$f" || bad+=" $f (no #error)"
done
for f in user/arch/arch_*.c; do
	grep -q '^#error ' "$f" || bad+=" $f (no #error for another compiler's target)"
done
if [[ -z $bad ]]; then
	echo "ok - arch: every chooser ends in #error"
else
	echo "not ok - arch: a chooser's #else is not an #error:$bad"
fi
