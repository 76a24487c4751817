#!/bin/bash
# shellcheck disable=SC2317 # the cases are called by name, by errors_lib.sh's table
# Bad input refused before anything is traced, a table of cases
# (tests/errors_lib.sh says what each must do, with the loader and its ASan
# build): every option that takes a number or a size with a value that is
# not one or is out of its range, options that contradict each other, and
# export files that cannot be created. Nothing here reaches BPF, a probe or
# ptrace, so the host's run alone has it (scripts/vmtest.sh, HOST_ONLY);
# test_errors.sh has the cases that do, and the read-only file system
# (mounting one needs root: in a user namespace of our own, / would be
# another user's, which alloctrace refuses before it tries).
# test: no root (refused before any BPF, probe or ptrace: make unit runs it)
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../errors_lib.sh
. "$(dirname "$0")/../errors_lib.sh"

mkfifo "$TMP/fifo"

# --- the table -----------------------------------------------------------------

NUMBERS=(--pid --interval --count --top --max-depth --tid --show-data --min-age
	--max-allocs --max-stacks --top-processes)
SIZES=(--big --sample --min-size --max-size --ringbuf-size)

# Every option that takes a number, with a value that is not one: a word,
# a negative number, one past any range, trailing garbage, a leading blank.
bad_numbers() {
	local opt v
	for opt in "${NUMBERS[@]}"; do
		for v in abc -5 99999999999999999999 5x ' 5'; do
			expect_error 2 "$opt '$v'" "invalid value '$v' for $opt: expected " \
				"$opt" "$v" -- "$WL/leaks"
		done
	done
	for opt in "${SIZES[@]}"; do
		for v in 12Q 4KX -1K 16777216T 4K4 ' 4K'; do
			expect_error 2 "$opt '$v'" "invalid value '$v' for $opt: expected " \
				"$opt" "$v" -- "$WL/leaks"
		done
	done
}

# Values that are numbers, out of their option's range.
out_of_range() {
	local v
	for v in "--pid 0" "--pid 4294967296" "--count 0" "--interval 0.001" \
		"--interval 86401" "--interval nan" "--min-age inf" "--max-depth 0" \
		"--max-depth 128" "--show-data 257" "--max-allocs 0" "--max-allocs 16777217" \
		"--max-stacks 0" "--ringbuf-size 3K" "--ringbuf-size 2K" "--ringbuf-size 2G" \
		"--big 0" "--sample 0" "--max-size 0"; do
		# shellcheck disable=SC2086 # option and value
		expect_error 2 "$v" "invalid value '${v#* }' for ${v% *}: expected " \
			$v -- "$WL/leaks"
	done
}

usage() {
	expect_error 2 "--format xml" "invalid value 'xml' for --format" --format xml -- "$WL/leaks"
	expect_error 2 "--thread-name bad regex" "invalid value '\(' for --thread-name: not a regular" \
		--thread-name '(' -- "$WL/leaks"
	expect_error 2 "--module regex that would eat memory" "invalid value for --module: " \
		--module "a$(printf '+%.0s' {1..40})" -- "$WL/leaks"
	expect_error 2 "--allocator ''" "invalid value '' for --allocator" --allocator '' -- "$WL/leaks"
	expect_error 2 "--min-size above --max-size" "--min-size is larger than --max-size" \
		--min-size 2K --max-size 1K -- "$WL/leaks"
	expect_error 2 "an option without its value" "option --max-allocs needs a value" --max-allocs
	expect_error 2 "an unknown option" "unknown option '--bogus'" --bogus -p 1
	expect_error 2 "both -p and a command" "give either -p PID or a command" -p 1 -- "$WL/leaks"
	expect_error 2 "nothing to trace" "nothing to trace"
	expect_error 2 "--unwind dwarf" "invalid value 'dwarf' for --unwind: expected " \
		--unwind dwarf -- "$WL/leaks"
	expect_error 2 "--big-only without --big" "--big-only needs --big SIZE" \
		--big-only -- "$WL/leaks"
	expect_error 2 "--big-only with --sample" "--big-only takes neither --sample nor --mmap" \
		--big 1M --big-only --sample 64K -- "$WL/leaks"
	expect_error 2 "--all with -p" "--all traces every process: give no -p PID" --all -p 1
	# Only what was given is named; --comm and --cgroup are not --all.
	expect_error 2 "--growth with --sample" \
		"--growth takes no --sample: it counts pages, not allocations" \
		--growth --sample 64K --comm leaks
	expect_error 2 "--growth with --all and --min-age" \
		"--growth takes no --all, --min-age: it counts pages, not allocations" \
		--growth --all --min-age 1
	expect_error 2 "--leak-check with --sample" \
		"--leak-check takes no --sample: a verdict needs every block of the processes it" \
		--leak-check --sample 64K --cgroup /sys/fs/cgroup
	expect_error 2 "a pid given twice" "invalid value '1,1' for --pid: pid 1 is given twice" \
		-p 1,1
	expect_error 2 "--cgroup with -p" "--cgroup and --comm choose the processes: give no " \
		--cgroup /sys/fs/cgroup -p 1
	expect_error 2 "--comm with --all" "--cgroup and --comm choose the processes: give no " \
		--comm leaks --all
	expect_error 2 "--comm of 16 characters" \
		"invalid value 'abcdefghijklmnop' for --comm: expected a program name of 1 to 15" \
		--comm abcdefghijklmnop
	expect_error 2 "--comm a path" "invalid value '/usr/bin/leaks' for --comm: expected " \
		--comm /usr/bin/leaks
}

exports() {
	expect_error 2 "--folded into a directory" "cannot create /tmp: Is a directory" \
		--folded /tmp -- "$WL/leaks"
	expect_error 2 "--pprof /proc/version" "cannot create /proc/version: it is a file of /proc" \
		--pprof /proc/version -- "$WL/leaks"
	expect_error 2 "--html in a directory that does not exist" \
		"cannot create /nonexistent/x.html: No such file or directory" \
		--html /nonexistent/x.html -- "$WL/leaks"
	expect_error 2 "--folded a FIFO" "cannot create $TMP/fifo: it is not a regular file" \
		--folded "$TMP/fifo" -- "$WL/leaks"
	expect_error 2 "--folded-count a device" "cannot create /dev/null: it is not a regular file" \
		--folded-count /dev/null -- "$WL/leaks"
}

error_tables bad_numbers out_of_range usage exports
live_target_end

finish
