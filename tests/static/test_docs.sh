#!/bin/bash
# The docs hold together: every relative link of README.md and docs/*.md
# names a file that exists and, with #anchor, a heading of that file (as
# GitHub makes anchors); every option of user/cli/options.c has an entry
# in the man page's OPTIONS, since the README lists only the common ones.
# Prints one "ok"/"not ok" line per rule, naming what is broken.
set -u
echo "1..2"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1

# anchors FILE: the GitHub anchor of each markdown heading, one a line.
anchors() {
	grep -E '^#+ ' "$1" | sed -E -e 's/^#+ +//' | tr '[:upper:]' '[:lower:]' |
		sed -E -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

bad=""
for md in README.md docs/*.md; do
	dir=$(dirname "$md")
	# Inline links outside code spans: [text](target), without a scheme.
	for target in $(sed -e 's/`[^`]*`//g' "$md" | grep -oE '\]\([^) ]+\)' |
		sed -E -e 's/^\]\(//' -e 's/\)$//' | grep -vE '^[a-z]+:'); do
		file=${target%%#*}
		anchor=""
		[[ $target == *#* ]] && anchor=${target#*#}
		path=$md
		[[ -n $file ]] && path=$dir/$file
		if [[ ! -e $path ]]; then
			bad+=" $md:$target"
		elif [[ -n $anchor ]] && ! anchors "$path" | grep -qxF -- "$anchor"; then
			bad+=" $md:$target"
		fi
	done
done
if [[ -z $bad ]]; then
	echo "ok - docs links: every relative link and anchor resolves"
else
	echo "not ok - docs links: broken:$bad"
fi

# An entry is the line after .TP, .B, .BR or .BI naming the option;
# the man page writes its dashes as \-.
entries=$(awk 'p { print } { p = /^\.TP/ }' docs/alloctrace.8 | sed -e 's/\\-/-/g')
missing=""
# The export options are made from user/export/kinds.def's rows.
for name in $(grep -ohE '\.name = "[a-z0-9-]+"' user/cli/*.c | cut -d'"' -f2) \
	$(grep -ohE '^EXPORT_KIND\([A-Z_]+, "[a-z0-9-]+"' user/export/kinds.def | cut -d'"' -f2); do
	grep -qE -- "--$name([^a-z0-9-]|$)" <<<"$entries" || missing+=" --$name"
done
if [[ -z $missing ]]; then
	echo "ok - man page: every option of user/cli/options.c has an entry"
else
	echo "not ok - man page: no entry for:$missing"
fi
