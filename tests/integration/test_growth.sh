#!/bin/bash
# --growth (issue 14): no uprobes; resident pages by the stack that first
# touched them. tests/workloads/growth.c: map_pages touches 64 pages that
# stay, fill_buffer's 1 MiB malloc is 258 pages first touched (256 by its
# memset, its mapping's header page by malloc, and malloc's first use of
# the heap), released touches 32 pages and unmaps them. The same numbers
# hold when the tool attaches with -p to a waiting process that then
# does the work, beside another tracer's return probes on malloc, and
# when the command exits before the final report. The folded, pprof and
# HTML exports carry the same pages, labelled as resident growth.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/growth" "$WL/bigmaps" "$WL/vdsofork"

# pages_of REPORT FUNCTION: resident pages of the stacks through FUNCTION.
pages_of() {
	jq --arg f "$2" '[.stacks[] | select([.frames[].function] | index($f))
		| .resident_pages] | add // 0' <<<"$1"
}

# why_short REPORT: what a report short of pages says of itself: whether
# its stacks are whole, its counters above 0, and the stacks that name none
# of the workload's functions (a frame skipped by a walk), the 8 largest by
# first frame.
why_short() {
	jq -r '[.stacks | sort_by(-.resident_pages)[] | select([.frames[].function] as $f
		| all("fill_buffer", "map_pages", "released"; . as $n | $f | index($n) | not))
		| "\(.frames[0].function // "?")=\(.resident_pages)"][:8] as $other
		| "stacks_complete \(.stacks_complete | tostring); counters: \(.counters // {}
		| to_entries | map(select(.value > 0) | "\(.key)=\(.value)") | join(" "));"
		+ " other stacks: \($other | join(" "))"' <<<"$1"
}

# check_pages NAME REPORT: the stacks of REPORT (a report, or a process of
# one) hold the known pages exactly; when fill_buffer's are not, the report
# says what it knows of why beside them.
check_pages() {
	local fb
	fb=$(pages_of "$2" fill_buffer)
	[[ $fb == 258 ]] || fb="$fb ($(why_short "$2"))"
	expect_eq "$1: map_pages: 64 pages resident" 64 "$(pages_of "$2" map_pages)"
	expect_eq "$1: map_pages: bytes are pages * 4096" 262144 \
		"$(jq '[.stacks[] | select(.frames[0].function == "touch_pages"
			and .frames[1].function == "map_pages" and .frames[2].function == "main")
			| .resident_bytes] | add' <<<"$2")"
	expect_eq "$1: fill_buffer: 258 pages resident" 258 "$fb"
	# The report drops memset's own frames (libc's), not its instructions: a
	# page is on the stack of the store that touched it first. x86-64's
	# memset fills the buffer by one rep stosb; arm64's by a loop and then
	# two stores of the last 64 bytes, the second of which writes the last
	# 16 (alone on the mapping's last page, past malloc's 16-byte header).
	# memset's pages are those of the stacks the report shows as its call.
	expect_eq "$1: fill_buffer's memset: 256 pages" 256 \
		"$(jq '[.stacks[] | select(.frames[0].function == "fill_buffer")]
			| group_by([.frames[].addr]) | map(map(.resident_pages) | add) | max' <<<"$2")"
	expect_eq "$1: released: unmapped pages drop out" 0 "$(pages_of "$2" released)"
}

# check NAME: the final report of run NAME holds the known pages exactly.
check() {
	local r
	r=$(final_report "$TMP/$1.out")
	expect_eq "$1: labelled as growth" true "$(report_get "$r" .growth)"
	check_pages "$1" "$r"
	expect_eq "$1: nothing lost" 0 "$(report_get "$r" .totals.lost)"
	expect_eq "$1: no uprobe attached" "" "$(grep -E '^alloctrace: (uprobe|uretprobe) ' \
		"$TMP/$1.err")"
}

run_tool launched 60 -v --growth --format json -T 0 -n 2 -i 1 --pprof "$TMP/g.pb.gz" \
	--folded "$TMP/g.folded" --folded-count "$TMP/g.count" --html "$TMP/g.html" \
	-- "$WL/growth" 5
expect_tool_ok launched || finish
check launched

# A launched command that exits at once: its final report comes after it is
# gone, and holds what it had resident at its exit stop, read there.
run_tool at_exit 60 -v --growth --format json -T 0 -- "$WL/growth" 0
expect_tool_ok at_exit && check at_exit
# Launched through a shell that execs it (a wrapper script, pyenv's shims):
# the exec drops every probe and tracepoint and attaches them anew.
run_tool exec 60 --growth --format json -T 0 -- /bin/sh -c "exec '$WL/growth' 0"
expect_tool_ok exec && check exec
# The text header too ("0 bytes resident in 0 pages" once): at least
# map_pages' 64 and fill_buffer's 258 pages.
run_tool at_exit_text 60 --growth -T 0 -- "$WL/growth" 0
expect_eq "at_exit_text: exit status" 0 "$RC" &&
	expect_eq "at_exit_text: the final header's resident pages" yes \
	"$(grep -oE 'final report, .*resident in [0-9,]+ pages' "$TMP/at_exit_text.out" |
		grep -oE 'resident in [0-9,]+ pages' |
		tr -d , | awk '{ print ($3 >= 322 ? "yes" : $0) }')"
# Its peak is pages too, as the header says, not blocks.
expect_eq "at_exit_text: the peak in resident pages" 1 \
	"$(grep -cE '^  Peak: .* resident in [0-9,]+ pages at ' "$TMP/at_exit_text.out")"

# Attached before the work: exact pages per function, as when launched.
mkdir -p "$TMP/wait"
"$WL/growth" 30 "$TMP/wait" &
W=$!
track "$W"
if ! wait_for 10 test -e "$TMP/wait/ready"; then
	fail "attached before: target" "not ready in 10 s"
else
	start_tool attached_before 60 -v --growth --format json -T 0 -i 1 -p "$W"
	if ! wait_tracing attached_before 30; then
		fail "attached before: tracing" "no 'tracing pid' line in 30 s"
	else
		kill -USR1 "$W"
		wait_for 10 test -e "$TMP/wait/done" ||
			fail "attached before: target" "no done file 10 s after SIGUSR1"
		# A report after the work, then the final one from SIGINT.
		sleep 1.5
		kill -INT "$TOOL_PID"
		wait_tool
		expect_tool_ok attached_before && check attached_before
	fi
fi

# Beside another tracer's return probes: a second alloctrace tracking every
# allocation of the same process. While malloc touches the pages of its
# mapping, its return address is the kernel's uretprobe trampoline; the
# walk takes the real one from the thread's pending return instances, so
# the pages are fill_buffer's with whole stacks, not two unknown ones.
beside_returns() {
	local full
	start_workload "$TMP/ret" "$WL/growth" 30 "$TMP/ret" || {
		fail "beside return probes: target" "not ready in 10 s"
		return
	}
	start_tool full_beside 60 -T 0 -p "$WPID"
	full=$TOOL_PID
	wait_tracing full_beside 30 || {
		fail "beside return probes: full tracking" "no 'tracing pid' line in 30 s"
		return
	}
	start_tool beside 60 -v --growth --format json -T 0 -p "$WPID"
	wait_tracing beside 30 || {
		fail "beside return probes: --growth" "no 'tracing pid' line in 30 s"
		return
	}
	kill -USR1 "$WPID"
	wait_for 10 test -e "$TMP/ret/done" ||
		fail "beside return probes: target" "no done file 10 s after SIGUSR1"
	kill -INT "$TOOL_PID" "$full"
	wait_tool
	wait "$full"
	expect_tool_ok beside || return
	check beside
	expect_eq "beside: stacks complete" true \
		"$(report_get "$(final_report "$TMP/beside.out")" .stacks_complete)"
}
beside_returns

# --comm: each process of the name has its own pages, exact, as with -p.
comm_growth() {
	local name=gr$$ a b r
	name=${name:0:15}
	cp "$WL/growth" "$TMP/$name"
	start_workload "$TMP/ca" "$TMP/$name" 30 "$TMP/ca" || return
	a=$WPID
	start_workload "$TMP/cb" "$TMP/$name" 30 "$TMP/cb" || return
	b=$WPID
	start_tool comm 60 -v --growth --format json -T 0 --top-processes 0 -i 1 --comm "$name"
	wait_line comm "tracing every process named '$name'" || {
		fail "comm: tracing" "no 'tracing every process named' line: $(head -c 300 "$TMP/comm.err")"
		return
	}
	kill -USR1 "$a" "$b"
	wait_for 10 test -e "$TMP/ca/done" -a -e "$TMP/cb/done" ||
		fail "comm: targets" "no done files 10 s after SIGUSR1"
	kill -INT "$TOOL_PID"
	wait_tool
	expect_tool_ok comm || return
	r=$(final_report "$TMP/comm.out")
	expect_eq "comm: labelled as growth" true "$(report_get "$r" .growth)"
	expect_eq "comm: the two processes" "$(printf '%s\n' "$a" "$b" | sort -n | paste -sd ' ')" \
		"$(jq -r '[.processes[].pid] | sort | map(tostring) | join(" ")' <<<"$r")"
	check_pages "comm: first" "$(proc_of "$r" "$a")"
	check_pages "comm: second" "$(proc_of "$r" "$b")"
}
comm_growth

# --- the exports: resident growth, labelled so, with the same exact pages ----

# fill_buffer's pages are those of the report (258 when every stack is whole,
# checked above); map_pages' 64 need no unwind table of libc.
FB=$(pages_of "$(final_report "$TMP/launched.out")" fill_buffer)

# folded_through FILE NAME: the weights of the lines through NAME, added up.
folded_through() {
	grep -E "(^|;)$2(;| )" "$1" | awk '{ s += $NF } END { print s + 0 }'
}
expect_eq "folded: fill_buffer's resident bytes" $((FB * 4096)) \
	"$(folded_through "$TMP/g.folded" fill_buffer)"
expect_eq "folded: map_pages' resident bytes" $((64 * 4096)) \
	"$(folded_through "$TMP/g.folded" map_pages)"
expect_eq "folded-count: fill_buffer's resident pages" "$FB" \
	"$(folded_through "$TMP/g.count" fill_buffer)"
expect_eq "folded-count: map_pages' resident pages" 64 \
	"$(folded_through "$TMP/g.count" map_pages)"
expect_eq "folded: released holds nothing" 0 "$(folded_through "$TMP/g.folded" released)"

if command -v go >/dev/null; then
	export HOME=${HOME:-$TMP}
	# pprof_cum INDEX NAME: what the stacks through NAME hold, by `go tool pprof -top`.
	pprof_cum() {
		local unit=()
		[[ $1 == *_space ]] && unit=(-unit=B)
		go tool pprof -top -nodefraction=0 -nodecount=10000 "${unit[@]}" -sample_index="$1" \
			"$TMP/g.pb.gz" 2>/dev/null | awk -v f="$2" '$NF == f { print $4 }'
	}
	expect_eq "pprof: sample types name resident pages, not allocations" \
		"touched_pages/count touched_space/bytes resident_pages/count resident_space/bytes[dflt]" \
		"$(go tool pprof -raw "$TMP/g.pb.gz" 2>/dev/null | grep -m1 '^touched_pages')"
	expect_eq "pprof: comments say resident growth" \
		$'complete: true\nstacks_complete: '"$(report_get "$(final_report "$TMP/launched.out")" \
			.stacks_complete)"$'\nresident growth, not allocations: pages still resident, by the stack that first touched each (page faults)' \
		"$(go tool pprof -comments "$TMP/g.pb.gz" 2>/dev/null)"
	expect_eq "pprof resident_space: fill_buffer" "$((FB * 4096))B" \
		"$(pprof_cum resident_space fill_buffer)"
	expect_eq "pprof resident_pages: fill_buffer" "$FB" "$(pprof_cum resident_pages fill_buffer)"
	expect_eq "pprof resident_space: map_pages" "$((64 * 4096))B" \
		"$(pprof_cum resident_space map_pages)"
	expect_eq "pprof touched_pages: map_pages" 64 "$(pprof_cum touched_pages map_pages)"
	expect_eq "pprof: no block size label on pages" "" \
		"$(go tool pprof -raw "$TMP/g.pb.gz" 2>/dev/null | grep -m1 'bytes:\[')"
else
	fail "go tool pprof" "go is not installed (apt-get install golang-go)"
fi

expect_page_drawn growth-page "$TMP/g.html" && {
	dom=$DOM
	expect_match "HTML: the title says resident growth (page faults)" \
		'<p id="title-mode" class="mode">resident growth \(page faults\), not allocations' "$dom"
	expect_match "HTML: summary of resident bytes and pages" \
		'id="stat-held"><div class="label">Resident</div><div class="value">[^<]*</div><div class="sub">[0-9,]* bytes in [0-9,]* pages<' \
		"$dom"
	expect_match "HTML: leakers are growing stacks" '<h2 id="leakers-title">Top growing stacks</h2>' \
		"$dom"
	expect_match "HTML: a flame graph of resident bytes" '<h3>By resident bytes</h3>' "$dom"
	expect_match "HTML: and of resident pages" '<h3>By resident pages</h3>' "$dom"
	flame=$(sed -n '/id="flame-bytes-svg"/,/<\/svg>/p' <<<"$dom")
	for f in fill_buffer map_pages touch_pages; do
		expect_match "HTML: the flame graph names $f" "<text[^>]*>$f</text>" "$flame"
	done
	# The leakers' columns: #, function, module, source, resident, share, pages, first touches.
	expect_eq "HTML: map_pages' touch_pages row: 256.0 KiB in 64 pages, 64 first touches" \
		$'touch_pages\t256.0 KiB\t64\t64' \
		"$(leaker_row "$dom" touch_pages | cut -f 3,6,9,10)"
	expect_eq "HTML: the table's fill_buffer pages are the report's" "$FB" \
		"$(leaker_row "$dom" fill_buffer | cut -f 9 | awk '{ s += $1 } END { print s }')"
}

mkdir -p "$TMP/p"
# Alive well past the attach: under TCG on a loaded host alloctrace took
# more than the 8 s it once lived to start ("exited before alloctrace
# could attach", the arm64 guest).
"$WL/growth" 120 &
P=$!
track "$P"
sleep 0.5
run_tool attached 60 -v --growth --format json -T 0 -n 2 -i 1 -p "$P"
kill "$P" 2>/dev/null
expect_tool_ok attached || finish
# Attached after the pages were touched: none of them is seen.
expect_eq "attached late: the touches before attach are not counted" 0 \
	"$(pages_of "$(final_report "$TMP/attached.out")" map_pages)"

# --big alerts without the syscall tracepoints: the big anonymous
# mappings bigmaps prints, each at its address (the 8 MiB one aligned to a
# huge page by the kernel, the moved one where it went), and nothing else.
run_tool bigmaps 60 -v --growth --big 2M --format json -- "$WL/bigmaps" "$TMP/bigmaps.truth"
expect_tool_ok bigmaps || finish
expect_eq "bigmaps: alerts at the addresses the mappings got" \
	"$(sort "$TMP/bigmaps.truth" | paste -sd ';')" \
	"$(jq -r 'select(.type == "big_alloc") | "\(.frames[0].function) \(.addr) \(.size)"' \
		"$TMP/bigmaps.out" | sort | paste -sd ';')"
expect_eq "bigmaps: four alerts" 4 "$(grep -c . "$TMP/bigmaps.truth")"
expect_eq "bigmaps: no syscall tracepoint" "" "$(grep 'raw tracepoint sys_' "$TMP/bigmaps.err")"

# A forked child's first time() and clock_gettime() fault in pages of the
# kernel's [vdso] (fork copies none of it; glibc reads its symbols to bind
# time()): not the child's memory. Its growth is child_pages's 8 pages and
# the page clock_gettime's vDSO code touched first in vdso_touch, whose
# stack starts in [vdso] and is walked with the vDSO's own CFI (by frame
# pointers without it); every stack complete (issue 23, item 5).
# child_report: the last report of the child once child_pages's 8 pages are in.
child_report() {
	jq -c 'select(.type == "report") | .processes[]? | select(.parent != null)
		| select(([.stacks[] | select([.frames[].function] | index("child_pages"))
			| .resident_pages] | add) == 8)' "$TMP/vdso.out" 2>/dev/null | tail -n 1
}
has_child_report() { [[ -n $(child_report) ]]; }
mkdir -p "$TMP/vdso"
start_tool vdso 120 --growth --follow-forks --format json -T 0 -i 1 -- "$WL/vdsofork" "$TMP/vdso"
wait_for 60 has_child_report || fail "vdso child: report" "no report with its 8 pages in 60 s"
touch "$TMP/vdso/done"
wait_tool
expect_tool_ok vdso
r=$(child_report)
expect_eq "vdso child: no page of dl_vdso_vsym's" 0 \
	"$(jq '[.stacks[] | select([.frames[].function] | index("dl_vdso_vsym"))] | length' <<<"$r")"
# The vDSO reads the clock in user space only from a clocksource it can map
# (x86's tsc, kvm-clock, Hyper-V's page; arm64's architected timer); on
# others, such as an x86 TCG guest's hpet, clock_gettime() is a system call
# and the kernel writes the fresh page: no user fault, no stack in [vdso],
# 8 pages. x86's vDSO has CFI; Debian's arm64 one has no .eh_frame (6.1):
# frame pointers walk it. glibc's __libc_start_main is named by its
# default version, 2.34, on both.
vdso_flags=$(by_arch '[]' '["frame_pointers"]')
start_main=__libc_start_main@@GLIBC_2.34
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
if [[ $clocksource =~ ^(tsc|kvm-clock|hyperv_clocksource_tsc_page|arch_sys_counter)$ ]]; then
	expect_eq "vdso child: 9 pages resident, child_pages's and vdso_touch's" 9 \
		"$(jq '[.stacks[].resident_pages] | add' <<<"$r")"
	expect_eq "vdso child: the vDSO's first touch walked by its CFI or frame pointers, to _start" \
		'[1,"[vdso]",'"$vdso_flags"',["vdso_touch","main","__libc_start_call_main","'"$start_main"'","_start"]]' \
		"$(jq -c '[.stacks[] | select([.frames[].function] | index("vdso_touch"))][0]
			| [.resident_pages, .frames[0].module, .stack_flags, [.frames[].function][-5:]]' <<<"$r")"
else
	echo "# clocksource $clocksource: the vDSO's clock_gettime() is a system call here"
	expect_eq "vdso child: 8 pages resident, child_pages's (the kernel wrote vdso_touch's)" 8 \
		"$(jq '[.stacks[].resident_pages] | add' <<<"$r")"
fi
expect_eq "vdso child: stacks_complete" true "$(report_get "$r" .stacks_complete)"
expect_eq "vdso child: no stack cut" 0 "$(report_get "$r" .counters.stacks_cut)"

run_tool bad 10 --growth --big-only --big 1M -- "$WL/growth" 0
expect_eq "--growth with --big-only: command-line error" 2 "$RC"
finish
