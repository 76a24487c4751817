#!/bin/bash
# --html FILE: one self-contained page. The data blob holds the demo's
# exact leaks and its big allocation; headless Chromium (offline) draws
# the page without a script error, with both flame graphs and the
# timeline, and a click zooms a flame graph. On make demo's run the top
# leakers table shows each stack's trend as the text report says it, the
# growing stacks first. Screenshots are left in build/test-artifacts/
# (html.png, demo.png) for a person to look at.
set -u
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

require_built "$WL/leaky"

ARTIFACTS=$ROOT/build/test-artifacts
PAGE=$TMP/leaky.html
# The page's JSON blob: the template keeps it on one line, and it holds no
# '<' (checked below), so the first "</script>" after it is its end.
blob() {
	sed -n 's/.*<script type="application\/json" id="alloctrace-data">\(.*\)<\/script>.*/\1/p' \
		"$PAGE"
}

# --- the file ----------------------------------------------------------------

run_tool html 60 -i 0.2 --big 1M --html "$PAGE" -- "$WL/leaky" 1
expect_eq "exit status" 0 "$RC"
if [[ ! -s "$PAGE" ]]; then
	fail "page written" "no $PAGE; stderr: $(head -c 300 "$TMP/html.err")"
	finish
fi
ok "page written"

blob >"$TMP/blob.json"
# One JSON object, said quietly: a redirection of expect_true would hide its result.
json_object() {
	jq -e -s 'length == 1 and (.[0] | type == "object")' "$1" >/dev/null
}
expect_true "blob is JSON" "$(head -c 300 "$TMP/blob.json")" json_object "$TMP/blob.json"
expect_true "blob has no '<'" "a '<' could end the <script> element" \
	test "$(tr -cd '<' <"$TMP/blob.json" | wc -c)" -eq 0
expect_true "page needs no network" "$(grep -Eo '(src|href)="?https?:[^ >]*' "$PAGE" | head -n 3)" \
	test -z "$(grep -Eo '(src|href)="?(https?:)?//' "$PAGE")"

r=$(jq -c '.report' "$TMP/blob.json")
expect_eq "final report" true "$(report_get "$r" .final)"
expect_eq "comm" '"leaky"' "$(report_get "$r" .comm)"
expect_eq "exit" '{"status":0,"signal":null,"oom_killed":false}' "$(report_get "$r" .exit)"
# One second at 50 ticks: 50 requests remembered, 5 pages cached.
expect_leak "$r" load_config 1000 1 1
expect_leak "$r" remember_request 3200 50 50
expect_leak "$r" cache_page 20480 5 5
expect_no_stack "$r" handle_request
expect_totals_consistent blob "$r"
expect_match "a timeline point per report" '^([3-9]|[1-9][0-9]+)$' \
	"$(jq '.series | length' "$TMP/blob.json")"
expect_eq "series ends with the final numbers" \
	"$(report_get "$r" '[.totals.outstanding_bytes, .totals.outstanding_allocs]')" \
	"$(jq -c '.series[-1][1:3]' "$TMP/blob.json")"
expect_eq "the big allocation" '"malloc 3145728 rebuild_index"' \
	"$(jq -c '[.big_allocs[] | "\(.func) \(.size) \(.frames[0].function)"] | unique | join(";")' \
		"$TMP/blob.json")"

# --- the page in a browser ---------------------------------------------------

expect_page_drawn dom "$PAGE" || finish
dom=$DOM
for id in flame-bytes-svg flame-blocks-svg timeline-svg timeline-outstanding timeline-rss \
	leakers-table big-table complete stacks-complete; do
	expect_match "element #$id" "id=\"$id\"" "$dom"
done
# Boxes with the demo's functions, and the leakers table's first row.
flame=$(sed -n '/id="flame-bytes-svg"/,/<\/svg>/p' <<<"$dom")
expect_match "flame graph has boxes" '(<rect[^>]*>.*){6}' "$(tr -d '\n' <<<"$flame")"
for f in main remember_request cache_page; do
	expect_match "flame graph names $f" "<text[^>]*>$f</text>" "$flame"
done
expect_match "top leaker is cache_page" '<td class="mono">cache_page</td>' "$dom"

# A click on remember_request must give it the whole width, Escape undo it.
# The probe runs after the page's own script, in a copy of the page.
zoom_probe() {
	cat <<'EOF'
<script>
(function () {
	'use strict';
	const svgOf = () => document.getElementById('flame-bytes-svg');
	const box = (name) => [...svgOf().querySelectorAll('g[data-i]')]
		.find((g) => g.textContent === name);
	const width = (g) => +g.querySelector('rect').getAttribute('width');
	const full = +svgOf().getAttribute('width');
	const before = width(box('remember_request'));
	box('remember_request').querySelector('rect')
		.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	const zoomed = width(box('remember_request'));
	document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
	const after = width(box('remember_request'));
	document.documentElement.setAttribute('data-zoom',
		(before < full && Math.abs(zoomed - full) < 1 && Math.abs(after - before) < 1)
			? 'ok' : 'bad ' + [before, zoomed, after, full].join(' '));
})();
</script>
EOF
}
{
	sed '/<\/body>/,$d' "$PAGE"
	zoom_probe
	printf '</body>\n</html>\n'
} >"$TMP/zoom.html"
chrome zoom --dump-dom "file://$TMP/zoom.html"
expect_match "click zooms, Escape resets" 'data-zoom="ok"' \
	"$(grep -o 'data-zoom="[^"]*"' "$TMP/zoom.dom")"
expect_eq "no script error while zooming" "" "$(console_errors zoom)"

# The warnings name each counter above 0 with the reason the text report
# gives it: the page takes them from the loader's own table (the blob's
# "counters", every counter of counters.def that is not plain), so a
# counter added there is explained here too. A copy of the page whose
# report says stacks were cut and pages left unclassified:
expect_eq "blob: the counters that warn, as counters.def has them" \
	"$(grep -oE '^COUNTER\([A-Z_]+, "[a-z_]+", [A-Z_]+' "$ROOT/include/counters.def" |
		awk -F'"' '$3 !~ /PLAIN/ { print $2 }' | sort | paste -sd ' ')" \
	"$(jq -r '.counters | keys | join(" ")' "$TMP/blob.json")"
jq -c '.report.counters.stacks_cut = 3 | .report.counters.pages_unclassified = 2
	| .report.complete = false | .report.stacks_complete = false' "$TMP/blob.json" >"$TMP/warn.json"
awk -v f="$TMP/warn.json" -v tag='id="alloctrace-data">' '
	BEGIN { getline blob <f }
	i = index($0, tag) {
		rest = substr($0, i + length(tag))
		print substr($0, 1, i + length(tag) - 1) blob substr(rest, index(rest, "</script>"))
		next
	}
	{ print }' "$PAGE" >"$TMP/warn.html"
if expect_page_drawn warn "$TMP/warn.html"; then
	expect_match "warn: numbers incomplete, and why" \
		'pages_unclassified=2 \(page faults whose mapping was busy and gone before it was read, not recorded\)' "$DOM"
	expect_match "warn: stacks incomplete, and why" \
		'stacks_cut=3 \(the walk stopped before the outermost frame\)' "$DOM"
fi

# --- make demo's run: the trend, as the text report says it (issue 43) -------

# text_trends FILE: each stack of the text report's final report as
# "FUNCTION<tab>TREND", TREND as its stack line says it ("growing +20.0
# KiB", "stable"), the exact byte counts in parentheses left out.
text_trends() {
	sed -n '/final report/,$p' "$1" | awk '
		/^  [^ ].* in [0-9,]+ blocks?, / { line = $0; next }
		/^    #0 / && line != "" {
			f = $2; sub(/\+0x[0-9a-f]+$/, "", f)
			t = line; gsub(/ \([0-9,]+ bytes?\)/, "", t); sub(/^.* allocs?, /, "", t)
			print f "\t" t; line = ""
		}'
}
DEMO=$TMP/demo.html
run_tool demo 60 -i 1 --big 1M --html "$DEMO" -- "$WL/leaky" 4
expect_eq "demo: exit status" 0 "$RC"
expect_eq "demo: the text report's growing stacks" "cache_page remember_request" \
	"$(text_trends "$TMP/demo.out" | awk -F'\t' '$2 ~ /^growing/ { print $1 }' | sort | paste -sd ' ')"
if expect_page_drawn demo "$DEMO"; then
	rows=$(leaker_row "$DOM" "")
	for f in cache_page remember_request load_config; do
		expect_eq "demo: the page's trend of $f is the text report's" \
			"$(text_trends "$TMP/demo.out" | awk -F'\t' -v f="$f" '$1 == f { print $2 }')" \
			"$(awk -F'\t' -v f="$f" '$3 == f { print $7 }' <<<"$rows")"
	done
	expect_eq "demo: the growing stacks first, the largest growth first" \
		"cache_page remember_request load_config" \
		"$(cut -f 3 <<<"$rows" | paste -sd ' ')"
fi

mkdir -p "$ARTIFACTS"
rm -f "$ARTIFACTS/html.png" "$ARTIFACTS/demo.png"
chrome shot --hide-scrollbars --screenshot="$ARTIFACTS/html.png" "file://$PAGE"
expect_match "screenshot" 'PNG image data, 1400 x 1800' "$(file "$ARTIFACTS/html.png" 2>&1)"
chrome demoshot --hide-scrollbars --screenshot="$ARTIFACTS/demo.png" "file://$DEMO"
expect_match "screenshot of the demo's page" 'PNG image data, 1400 x 1800' \
	"$(file "$ARTIFACTS/demo.png" 2>&1)"
cp "$PAGE" "$ARTIFACTS/html.html"

finish
