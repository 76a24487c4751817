#!/bin/bash
# --leak-check at the exit of real programs from Debian's packages (sqlite3,
# python3, perl, git) against valgrind memcheck's leak search on the same
# command: the totals per class, bytes and blocks.
#
# Two causes make valgrind's figures differ, both removed or computed here
# (docs/reliability.md, "Leak verdicts on real programs"):
# - valgrind adds GLIBCPP_FORCE_NEW, GLIBCXX_FORCE_NEW, LD_LIBRARY_PATH,
#   LD_PRELOAD (its preloads) and PWD to the command's environment, and
#   perl copies its environment into %ENV, git reads PWD: the tool's run
#   gets the same variables, LD_PRELOAD naming absent files of the same
#   length (ld.so says so and goes on);
# - by default valgrind calls glibc's __libc_freeres before its search,
#   which frees glibc's own buffers: with --run-libc-freeres=no the totals
#   are equal; with it, they are the tool's minus the blocks that glibc
#   allocated for the subsystems __libc_freeres frees.
# test: serial (valgrind runs the code it reads: another run's uprobe there is an
# int3 to it, and it dies of SIGTRAP)
set -u
source "$(dirname "$0")/../lib.sh"

cd "$TMP" || exit 1
git init -q repo
git -C repo -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
printf 'a\n' >repo/untracked

# One environment for both tools; hash seeds fixed so that perl's hashes
# grow the same way in both runs; git's optional locks off, so that two
# runs of git status at once (valgrind's, below) cannot meet at the
# index's lock and take different paths.
BASE=(env -i PATH=/usr/bin:/bin HOME="$TMP" PWD="$TMP" LC_ALL=C
	PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 GIT_OPTIONAL_LOCKS=0)
PRELOAD=$("${BASE[@]}" valgrind -q perl -e 'print $ENV{LD_PRELOAD}')
LIBPATH=$("${BASE[@]}" valgrind -q perl -e 'print $ENV{LD_LIBRARY_PATH}')
AS_VALGRIND=(GLIBCPP_FORCE_NEW=1 GLIBCXX_FORCE_NEW=1 LD_LIBRARY_PATH="$LIBPATH"
	LD_PRELOAD="${PRELOAD//valgrind/xalgrind}")

CLASSES='definitely_lost indirectly_lost possibly_lost reachable'

# "B N B N B N B N": a report's totals, classes in valgrind's order.
tool_totals() {
	jq -r '.totals | [.definitely_lost_bytes, .definitely_lost_allocs,
		.indirectly_lost_bytes, .indirectly_lost_allocs,
		.possibly_lost_bytes, .possibly_lost_allocs,
		.reachable_bytes, .reachable_allocs] | map(tostring) | join(" ")' <<<"$1"
}

valgrind_totals() {
	local s
	s=$(sed -n 's/^==[0-9]*== *\(definitely lost\|indirectly lost\|possibly lost\|still reachable\): \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\2 \3/p' "$1" | tr -d , | tr '\n' ' ')
	# "All heap blocks were freed": no summary at all.
	echo "${s:-0 0 0 0 0 0 0 0 }" | sed 's/ $//'
}

# The glibc functions that allocate for what __libc_freeres frees: stdio
# buffers, NSS's databases and modules, getpw*'s static buffer, setenv's
# environment and its tsearch tree, textdomain bindings, tzset's strings;
# and in ld.so, which it calls too: _dl_find_object's segments and a
# dlopen'd object's dependency list.
FREERES='^(_IO_file_doallocate|__nss_.*|nss_.*|global_state_allocate|getpwuid|getpwnam|__add_to_environ|__tsearch|set_binding_values.*|__textdomain|__tzfile_read|__tzstring_len|tzset_internal|_dlfo_mappings_segment_allocate|_dl_map_object_deps)$'

# The report's totals without the blocks whose allocating frames include
# one of those functions in libc or ld.so: what valgrind's default run finds.
without_freeres() {
	jq -r --arg re "$FREERES" '
		def freed: [.frames[] | select((.module // "") | test("/(libc|ld-linux-[a-z0-9-]+)\\.so")) |
			(.function // "") | test($re)] | any;
		[.stacks[] | select(freed | not)] as $s |
		[("definitely_lost", "indirectly_lost", "possibly_lost", "reachable") as $c |
		 ([$s[][$c + "_bytes"]] | add // 0), ([$s[][$c + "_allocs"]] | add // 0)] |
		map(tostring) | join(" ")' <<<"$1"
}

# ld.so's _dl_find_object segments are aligned up to 64 bytes inside their
# malloc blocks and only the aligned pointer is kept: where malloc (glibc's
# in the tool's run, valgrind's own in valgrind's) put a block decides
# whether that pointer is its start (reachable) or inside it (possibly
# lost). Both tools are right about the run each saw; the comparison counts
# those blocks as reachable on both sides.
DLFO=_dlfo_mappings_segment_allocate

# "B N": the possibly lost _dlfo blocks of a report, of a valgrind log.
tool_dlfo() {
	jq -r --arg f "$DLFO" '[.stacks[] | select([.frames[].function] | index($f))] |
		"\([.[].possibly_lost_bytes] | add // 0) \([.[].possibly_lost_allocs] | add // 0)"' <<<"$1"
}

valgrind_dlfo() {
	awk -v f="$DLFO" '
		/bytes in .* blocks are / { n = $2; b = $5; p = / possibly lost /; next }
		p && index($0, f) { gsub(",", "", n); gsub(",", "", b); B += n; N += b; p = 0 }
		END { print B + 0, N + 0 }' "$1"
}

# dlfo_as_reachable "TOTALS" "B N": the totals with those blocks moved from
# possibly lost to reachable.
dlfo_as_reachable() {
	local t=($1) d=($2)
	echo "${t[0]} ${t[1]} ${t[2]} ${t[3]} $((t[4] - d[0])) $((t[5] - d[1])) $((t[6] + d[0])) $((t[7] + d[1]))"
}

# memcheck LOG [OPTION...] COMMAND...: valgrind's leak search on the
# command, its log in $TMP/LOG; its stderr in $TMP/LOG.err.
memcheck() {
	local log=$1
	shift
	"${BASE[@]}" timeout 120 valgrind --leak-check=full --show-leak-kinds=all \
		--log-file="$TMP/$log" "$@" >/dev/null 2>"$TMP/$log.err"
}

# memcheck_wait LOG PID: that run's end; a failure said in the script's own shell.
memcheck_wait() {
	wait "$2" || fail "$1: valgrind" "exit status $?: $(tail -n 2 "$TMP/$1.err" "$TMP/$1")"
}

# compare NAME COMMAND...: both tools on the command at its exit.
compare() {
	local name=$1 R
	shift
	RC=0
	"${BASE[@]}" "${AS_VALGRIND[@]}" timeout -k 5 60 "$TOOL" --leak-check -T 0 --format json \
		-o "$TMP/$name.json" -- "$@" >"$TMP/$name.cmd" 2>"$TMP/$name.err" || RC=$?
	R=$(final_report "$TMP/$name.json")
	expect_eq "$name: exit status" 0 "$RC"
	expect_eq "$name: every call counted" true "$(report_get "$R" .complete)"
	expect_eq "$name: the glibc heap walked whole" '["untracked_blocks_as_roots","target_stopped_for_scan"]' \
		"$(report_get "$R" .leak_check.assumptions)"
	# valgrind's two runs at once: no probe is left in the code they read.
	local vg vgfree
	memcheck "$name.vg" --run-libc-freeres=no "$@" &
	vg=$!
	memcheck "$name.vgfree" "$@" &
	vgfree=$!
	memcheck_wait "$name.vg" $vg
	memcheck_wait "$name.vgfree" $vgfree
	local T
	T=$(tool_totals "$R")
	expect_eq "$name: totals per class as valgrind's without __libc_freeres ($CLASSES)" \
		"$(dlfo_as_reachable "$(valgrind_totals "$TMP/$name.vg")" "$(valgrind_dlfo "$TMP/$name.vg")")" \
		"$(dlfo_as_reachable "$T" "$(tool_dlfo "$R")")"
	expect_eq "$name: valgrind's default totals: less what __libc_freeres frees" \
		"$(valgrind_totals "$TMP/$name.vgfree")" "$(without_freeres "$R")"
	echo "# $name: $T"
}

compare sqlite3 sqlite3 :memory: 'create table t(a, b); insert into t values (1, 2), (3, 4);
	select sum(a * b) from t;'
compare python3 /usr/bin/python3 -c 'import json; print(json.dumps({"a": [1, 2]}))'
compare perl perl -e 'my %h = (a => 1); my @l = map { $_ * 2 } 1 .. 10; print scalar(@l), "\n"'
compare git-log git -C repo log --oneline
compare git-status git -C repo status --short
# The counts the comparisons rest on are not all zero: real verdicts, not empty ones.
expect_match "perl: something lost in every class but reachable" '^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9][0-9]* ' \
	"$(tool_totals "$(final_report "$TMP/perl.json")")"
finish
