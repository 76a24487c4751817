#!/bin/bash
# The loader's layers, checked from what each file really includes
# (transitively, as the compiler sees it): the core rooms build without
# libbpf and know nothing of the session or the BPF side, lib/ needs no
# other room, and the BPF program includes only include/ and vmlinux.h.
# Then the room table of docs/ARCHITECTURE.md, row by row: each room's
# files include headers only of the rooms its "uses" cell names, every
# room has a row, and the table has no cycle. Prints one "ok"/"not ok"
# line per rule.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
CORE_ROOMS=$(make -s --no-print-directory print-core-rooms)
CC=${CC:-cc}
CPPFLAGS=(-Iinclude -Iuser -Ibuild -D_GNU_SOURCE)
ARCH=$(scripts/host-arch.sh)
BPF_FLAGS=(-target bpf -D__TARGET_ARCH_"$ARCH" -Iinclude -Ivmlinux/"$ARCH")

# deps FILE: every header FILE reads, one a line (BPF sources as clang
# builds them); "unreadable" when the compiler cannot follow its includes.
deps() {
	local cc=("$CC" "${CPPFLAGS[@]}") out
	[[ $1 == bpf/* ]] && cc=(clang "${BPF_FLAGS[@]}")
	out=$("${cc[@]}" -MM -MT x "$1" 2>/dev/null) || { echo unreadable; return; }
	sed -e 's/^x://' -e 's/\\$//' <<<"$out" | tr ' ' '\n' | sed '/^$/d'
}

# check NAME PATTERN FILES...: no file reads a header matching PATTERN.
# Each file's headers are asked of the compiler once (DEPS), not once a
# check: three checks read the core, and make unit has a minute.
CHECKS=0
declare -A DEPS=()
check() {
	local name=$1 pattern=$2 f d bad=""
	shift 2
	CHECKS=$((CHECKS + 1))
	for f in "$@"; do
		[[ -v DEPS[$f] ]] || DEPS[$f]=$(deps "$f")
		d=${DEPS[$f]}
		if grep -Eq "^unreadable$|$pattern" <<<"$d"; then
			bad+=" $f ($(grep -E "^unreadable$|$pattern" <<<"$d" | head -n 1))"
		fi
	done
	if [[ -z $bad ]]; then
		echo "ok - layers: $name"
	else
		echo "not ok - layers: $name:$bad"
	fi
}

# Another architecture's arch/ file is read by its own compiler only: it
# stops this one's with #error.
ARCH_OTHERS=" $(make -s --no-print-directory print-arch-others) "
core=()
for room in $CORE_ROOMS; do
	for f in user/"$room"/*.c user/"$room"/*.h; do
		[[ $ARCH_OTHERS == *" $f "* ]] || core+=("$f")
	done
done
check "core rooms build without libbpf" '(^|/)bpf/(libbpf|bpf|btf)\.h$|/usr/include/bpf/' "${core[@]}"
check "core rooms know nothing of the BPF side" '^user/tracer/' "${core[@]}"
check "core rooms know nothing of the session" '^user/app/' "${core[@]}"
others=$(ls -d user/*/ | xargs -n 1 basename | grep -vx lib | paste -sd '|')
check "lib/ needs no other room" "^user/($others)/" user/lib/*.c
check "the BPF program reads only include/ and vmlinux/" '^user/' bpf/*.c

# The room table: "ROOM USES..." lines, one a row, the uses as room names
# ("the core rooms" and "everything" spelled out, remarks in parentheses
# dropped); "unknown:WORD" for a word that names no room.
ROOMS=$(find user -mindepth 1 -maxdepth 1 -type d -printf "%f\n" | sort)
room_table() {
	awk '/^## The loader.s rooms/ { on = 1; next } /^## / { on = 0 }
	     on && /^\| `[a-z_]+\/` \|/' docs/ARCHITECTURE.md |
		while IFS= read -r line; do
			local room uses word out=""
			room=$(sed -e 's/^| `\([a-z_]*\)\/`.*/\1/' <<<"$line")
			uses=$(sed -e 's/.*| \([^|]*\) |$/\1/' -e 's/([^)]*)//g' <<<"$line")
			while IFS= read -r word; do
				word=$(sed -e 's/^ *//' -e 's/ *$//' -e 's/\/$//' <<<"$word")
				case $word in
				nothing) ;;
				"the core rooms") out+=" $CORE_ROOMS" ;;
				everything) out+=" ${ROOMS//$'\n'/ }" ;;
				*) grep -qx "$word" <<<"$ROOMS" && out+=" $word" || out+=" unknown:${word// /_}" ;;
				esac
			done < <(tr ',' '\n' <<<"$uses")
			echo "$room$out"
		done
}

table=$(room_table)
bad=""
for room in $ROOMS; do
	grep -q "^$room\b" <<<"$table" || bad+=" user/$room/ has no row"
done
bad+=$(grep -o 'unknown:[^ ]*' <<<"$table" | sed 's/^/ a cell names no room: /')
for room in $ROOMS; do
	allowed=$(grep "^$room\b" <<<"$table" | head -n 1)
	for f in user/"$room"/*.[ch]; do
		for used in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
			[[ $used == "$room" ]] && continue
			grep -qx "$used" <<<"$ROOMS" || continue
			grep -qw "$used" <<<"${allowed#"$room"}" || bad+=" $f uses $used/"
		done
	done
done
if [[ -z $bad ]]; then
	echo "ok - layers: every file uses only the rooms its row of the room table names"
else
	echo "not ok - layers: the room table of docs/ARCHITECTURE.md:$bad"
fi
# tsort reads "room used" pairs and complains of a loop.
loop=$(awk '{ for (i = 2; i <= NF; i++) if ($i != $1) print $1, $i }' <<<"$table" | tsort 2>&1 >/dev/null)
if [[ -z $loop ]]; then
	echo "ok - layers: the room table has no cycle"
else
	echo "not ok - layers: the room table has a cycle: $(tr '\n' ' ' <<<"$loop")"
fi
# The TAP plan: as many results as checks, and the two of the room table.
echo "1..$((CHECKS + 2))"
