# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
# bench/lib.sh: what the bench scripts share, sourced by each: error exit,
# the scratch directory, free ports and waits, installing a missing peer,
# medians and ranges, per-round ratios and verdicts, following a tracer to
# its exit for its peak RSS, bounded runs, and the rounds of a script.

die() {
	echo "bench: $*" >&2
	exit 1
}

# The scratch directory $TMP goes, unless BENCH_KEEP=1 (or a failed round) keeps it.
drop_scratch() {
	if [[ ${BENCH_KEEP:-0} == 1 ]]; then
		echo "bench: scratch files kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}

# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	local port

	for _ in {1..50}; do
		port=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
	done
	return 1
}

# wait_until SECONDS PID COMMAND...: poll COMMAND while PID lives.
wait_until() {
	local deadline=$((SECONDS + $1)) pid=$2
	shift 2

	until "$@"; do
		kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# Install a peer's Debian package when it is missing; 1 if still missing.
ensure_peer() {
	local cmd=$1 pkg=$2

	command -v "$cmd" >/dev/null && return 0
	if [[ ${BENCH_NO_INSTALL:-0} == 1 ]] || ! command -v apt-get >/dev/null; then
		echo "bench: $cmd is missing (Debian package $pkg): its row will say so" >&2
		return 1
	fi
	echo "bench: $cmd is missing: installing Debian package $pkg for the comparison" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "$pkg" >&2 ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "$pkg" >&2; }
	command -v "$cmd" >/dev/null
}

# "median min max" of the numbers on stdin, "-" for none.
summarize() {
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (!NR) { print "-"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			print m, v[1], v[NR]
		}'
}

# median_of SUMMARY A B C: the median SUMMARY A B C prints, to 2 decimals;
# - when the includer's NA says A or B is not measured.
median_of() {
	if [[ -n ${NA[$2]:-} || -n ${NA[$3]:-} ]]; then
		echo -
	else
		"$1" "$2" "$3" "$4" | awk '{ print ($1 == "-" ? "-" : sprintf("%.2f", $1)) }'
	fi
}

# values VARIANT KEY: summary of VARIANT's figures at KEY in $RESULTS, whose
# lines are "round variant key figure".
values() {
	awk -v v="$1" -v t="$2" '$2 == v && $3 == t { print $4 }' "$RESULTS" | summarize
}

# ratios A B KEY [N]: summary of the per-round ratios A / B at KEY in
# $RESULTS, or with N of the per-round differences (A - B) / N.
ratios() {
	awk -v a="$1" -v b="$2" -v t="$3" -v n="${4:-}" '
		$3 == t && $2 == a { x[$1] = $4 }
		$3 == t && $2 == b { y[$1] = $4 }
		END { for (r in x) if (r in y) {
			if (n != "") print (x[r] - y[r]) / n
			else if (y[r] > 0) print x[r] / y[r] } }' "$RESULTS" | summarize
}

median_ratio() {
	median_of ratios "$@"
}

# verdict VALUE LIMIT: PASS when VALUE <= LIMIT, n/a for "-" (not
# measured); anything else that is no number (a failed or cut run) fails.
verdict() {
	awk -v v="$1" -v l="$2" 'BEGIN {
		print (v == "-" ? "n/a" : v !~ /^-?[0-9.]+$/ ? "FAIL" : v <= l ? "PASS" : "FAIL") }'
}

target_row() {
	local label=$1 value=$2 limit=$3

	printf '%-52s %-10s %-8s %s\n' "$label" "$value" "<= $limit" "$(verdict "$value" "$limit")"
}

# rotated ROUND FUNC JOB...: FUNC ROUND JOB for each JOB (its words as
# arguments), starting ROUND further along the list, so that no job is
# always the first or the last of a round.
rotated() {
	local r=$1 fn=$2 i n
	shift 2
	local -a jobs=("$@")

	n=${#jobs[@]}
	for ((i = 0; i < n; i++)); do
		# shellcheck disable=SC2086 # a job's words are its arguments
		"$fn" "$r" ${jobs[$(((i + r) % n))]}
	done
}

# bounded SECS BASE COMMAND...: COMMAND under timeout(1), which gives it a
# process group of its own, stdout to BASE.out and stderr to BASE.err; its
# status, 124 when it was cut at SECS (SIGTERM, SIGKILL 5 s later).
bounded() {
	local secs=$1 base=$2 pid rc
	shift 2

	timeout -k 5 "$secs" "$@" >"$base.out" 2>"$base.err" &
	pid=$!
	wait "$pid"
	rc=$?
	reap_group "$pid" "$base.err"
	return "$rc"
}

# reap_group PGID ERRFILE [STATES]: what a bounded run left behind in its
# group (a thread stopped for good keeps its process), ended by pid; those
# in STATES (a regex of /proc/PID/stat states, any by default) are said in
# ERRFILE and on stderr. 1 if any of those was left.
reap_group() {
	local p state left=0

	for p in $(pgrep -g "$1"); do
		state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$p/stat" 2>/dev/null)
		[[ -z $state || $state == Z ]] && continue
		kill -KILL "$p" 2>/dev/null
		[[ $state =~ ^${3:-.}$ ]] || continue
		echo "bench: left behind: pid $p ($(cat "/proc/$p/comm" 2>/dev/null)), state $state" |
			tee -a "$2" >&2
		left=1
	done
	return "$left"
}

# elapsed START END: seconds between two $EPOCHREALTIME readings.
elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

# fmt FORMAT "median min max" -> "median [min-max]"
fmt() {
	local f=$1 m lo hi

	read -r m lo hi <<<"$2"
	if [[ $m == - ]]; then
		echo "-"
	else
		# shellcheck disable=SC2059 # the format is the caller's
		printf "$f [$f-$f]" "$m" "$lo" "$hi"
	fi
}

# Where a process's stdout stands (its file offset): the report is written
# when this stops moving. Read with builtins, as often as possible.
stdout_pos() {
	local key val

	while read -r key val; do
		[[ $key == pos: ]] && echo "$val" && return
	done 2>/dev/null <"/proc/$1/fdinfo/1"
	echo -1
}

# cpu_mark PID: "TICKS SECONDS", the user and system time PID has used
# (clock ticks) and the time now (seconds since boot), or nothing.
cpu_mark() {
	local stat uptime
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return
	read -r uptime _ </proc/uptime
	# The fields after the command's closing parenthesis: utime is the
	# 12th of them, stime the 13th.
	awk -v s="${stat##*) }" -v up="$uptime" 'BEGIN { split(s, f, " "); print f[12] + f[13], up }'
}

# cpu_share MARK MARK: the CPU used between two of cpu_mark's marks, in
# percent of one CPU, or -.
cpu_share() {
	awk -v a="$1" -v b="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		print (y[2] > x[2] && b != "" && a != "" ? 100 * (y[1] - x[1]) / hz / (y[2] - x[2]) : "-") }'
}

# Follow a process until it is gone (a zombie has no VmHWM). Prints its
# peak RSS in KiB, when its stdout last grew and when it went:
# "kib report_end exit".
watch_exit() {
	local pid=$1 hwm=0 seen key val pos last=-1 wrote=$EPOCHREALTIME

	while [[ -r /proc/$pid/status ]]; do
		seen=0
		while read -r key val _; do
			[[ $key == VmHWM: ]] && hwm=$val seen=1
		done 2>/dev/null <"/proc/$pid/status"
		((seen)) || break
		pos=$(stdout_pos "$pid")
		[[ $pos != "$last" ]] && last=$pos wrote=$EPOCHREALTIME
		sleep 0.002
	done
	echo "$hwm $wrote $EPOCHREALTIME"
}

# One build for the whole run, even if the tree is rebuilt meanwhile: TOOL
# becomes a copy in TMP, TOOL_BUILD says which.
freeze_tool() {
	[[ -x $TOOL ]] || die "$TOOL is not built (make)"
	cp "$TOOL" "$TMP/alloctrace" || die "cannot copy $TOOL"
	# shellcheck disable=SC2034 # for the includer's header
	TOOL_BUILD="$TOOL, built $(date -u -r "$TOOL" '+%Y-%m-%d %H:%M UTC')"
	TOOL=$TMP/alloctrace
}

# run_rounds NAME: ROUNDS rounds of NAME_round N (each appends its line to
# $RESULTS, or says why it failed), then print_results, kept in
# bench/build/NAME.txt too; LOADAVG is the load at the start.
run_rounds() {
	local r

	LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
	: >"$RESULTS"
	for ((r = 1; r <= ROUNDS; r++)); do
		"${1}_round" "$r"
	done
	[[ -s $RESULTS ]] || die "no $1 round succeeded"
	print_results | tee "$B/$1.txt"
}
