#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The tree's structural limits, checked on every `make test` (tests/run.sh
# runs this as the suite "check/structure"; `make check` runs it alone).
# One check per rule; each violation is printed as "FILE:LINE: what", and
# the last line is "N passed, N failed" as tests/run.sh reads it:
#
#   file-size      no C source or header over 700 lines
#   function-size  no C function body over 80 lines (kernel style: a
#                  function's braces stand in column 0; the lines between
#                  them are counted)
#   module-cycles  no include cycle between modules (a module is a .c and
#                  its .h: user/maps.c + user/maps.h; an edge is a file of
#                  one module including another module's header; a call
#                  goes through a header, so this also finds call cycles)
#   spdx           every tracked text file carries an SPDX line
#   doc-citations  docs and comments cite only what ships: nothing from
#                  outside the repo (DESIGN.md, TESTBED.md, ../shared/,
#                  "the brief", "the issue")
#   doc-paths      every path the docs and the sources' comments name
#                  (bpf/..., user/..., tests/..., docs/..., scripts/...,
#                  configs/..., packaging/...) exists in the repo
#
# Known debt that another change is already reworking is listed in the
# allow-lists below, each entry with the file and the issue; remove an
# entry when its file is fixed (an entry that no longer matches anything
# is reported, so the lists only shrink).
#
#   scripts/check-structure.sh [-v]     -v also lists what each check read
set -u
cd "$(dirname "$0")/.." || exit 1

MAX_FILE_LINES=700
MAX_FUNC_LINES=80

# Modules in several files: NAME.c, NAME.h and every NAME_*.c/.h are one
# module (one job split by section, sharing a private header), so their
# includes of each other are not edges between modules.
MODULE_FAMILIES=(
	# The config parser: config.c, config_nat.c, config_iface.c and
	# their private config_parse.h.
	user/config
)

# Allowed over MAX_FILE_LINES for now: "path" (issue 8).
# shellcheck disable=SC2034 # read through a nameref in report_allowing
ALLOW_FILE_SIZE=(
)

# Allowed over MAX_FUNC_LINES for now: "path:function" (issue 8).
# shellcheck disable=SC2034 # read through a nameref in report_allowing
ALLOW_FUNC_SIZE=(
)

verbose=0
[ "${1:-}" = -v ] && verbose=1

pass=0 fail=0
tmp=$(mktemp -d /tmp/xnat-structure.XXXXXX) || exit 1
trap 'rm -rf -- "$tmp"' EXIT

# The files the checks read: what git tracks plus new files it does not
# ignore (so a check sees a change before it is committed); every file
# below the top when this is not a git checkout.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard | sort -u >"$tmp/files"
else
	find . -type f -not -path './.output/*' -not -path './.git/*' |
		sed 's|^\./||' | sort >"$tmp/files"
fi
# Deleted but not yet committed files are still listed by git.
while read -r f; do [ -f "$f" ] && echo "$f"; done <"$tmp/files" >"$tmp/present"
mv "$tmp/present" "$tmp/files"
grep -E '\.(c|h)$' "$tmp/files" >"$tmp/cfiles"
grep -E '(^|/)[^/]*\.md$|\.8$' "$tmp/files" >"$tmp/docs"
# Where comments live: the sources and scripts (this one names rules, not
# files).
grep -E '\.(c|h|sh|py)$|(^|/)Makefile$' "$tmp/files" |
	grep -v -x scripts/check-structure.sh >"$tmp/sources"

# in_list NEEDLE ELEMENTS...: is NEEDLE one of ELEMENTS?
in_list() {
	local needle=$1 e
	shift
	for e in "$@"; do [ "$e" = "$needle" ] && return 0; done
	return 1
}

# report RULE OUTFILE: one check's result from its violation lines.
report() {
	local rule=$1 out=$2 n
	n=$(wc -l <"$out")
	if [ "$n" -eq 0 ]; then
		echo "#$((pass + fail + 1)) $rule:OK"
		pass=$((pass + 1))
	else
		cat "$out"
		echo "#$((pass + fail + 1)) $rule:FAIL ($n)"
		fail=$((fail + 1))
	fi
}

# An allow-list entry that matched nothing is stale: say so (as a
# violation, so that the list is kept honest).
stale_entries() {
	local what=$1 used=$2
	shift 2
	local e
	for e in "$@"; do
		grep -qxF -- "$e" "$used" ||
			echo "scripts/check-structure.sh:1: $what allow-list entry '$e' no longer needed: remove it"
	done
}

# Report RULE from candidate violations on stdin, "KEY<tab>MESSAGE"
# lines, leaving out those whose KEY stands in the allow-list named
# ALLOW (and naming its entries that no longer match anything).
report_allowing() {
	local rule=$1 out=$tmp/$1 key msg
	local -n allow=$2
	: >"$out"
	: >"$tmp/used"
	while IFS=$'\t' read -r key msg; do
		if in_list "$key" "${allow[@]}"; then
			echo "$key" >>"$tmp/used"
			continue
		fi
		echo "$msg" >>"$out"
	done
	stale_entries "$rule" "$tmp/used" "${allow[@]}" >>"$out"
	report "$rule" "$out"
}

check_file_size() {
	local f n
	while read -r f; do
		n=$(wc -l <"$f")
		[ "$n" -le $MAX_FILE_LINES ] ||
			printf '%s\t%s\n' "$f" "$f:$n: $n lines, over $MAX_FILE_LINES"
	done <"$tmp/cfiles" >"$tmp/big"
	report_allowing file-size ALLOW_FILE_SIZE <"$tmp/big"
}

# Functions: a line "{" in column 0 opens a body, the next "}" in column
# 0 closes it; the name is the identifier before "(" on the last line
# that began in column 0 before the "{" (the signature's first line).
function_sizes() {
	awk -v max=$MAX_FUNC_LINES '
		FNR == 1 { sig = ""; sigline = 0; open = 0 }
		open == 0 && /^[A-Za-z_]/ && /\(/ {
			sig = $0; sigline = FNR
		}
		open == 0 && /^\{/ { open = FNR; next }
		open > 0 && /^\}/ {
			n = FNR - open - 1
			if (n > max) {
				name = sig
				sub(/\(.*/, "", name)
				sub(/.*[ *]/, "", name)
				printf "%s:%d:%s:%d\n", FILENAME, sigline, name, n
			}
			open = 0
		}
	' "$@"
}

check_function_size() {
	local file line name n
	# shellcheck disable=SC2046
	function_sizes $(cat "$tmp/cfiles") |
		while IFS=: read -r file line name n; do
			printf '%s\t%s\n' "$file:$name" \
				"$file:$line: function $name has $n lines, over $MAX_FUNC_LINES"
		done >"$tmp/long"
	report_allowing function-size ALLOW_FUNC_SIZE <"$tmp/long"
}

# Where an #include "x.h" of a file in DIR resolves: DIR first, then the
# compiler's -I directories (Makefile: -Iuser -Iuser/lib -Ibpf); headers
# generated into .output/ (skeletons, version.h) are not modules.
resolve_include() {
	local dir=$1 hdr=$2 d
	for d in "$dir" user user/lib bpf; do
		if [ -f "$d/$hdr" ]; then
			realpath --relative-to=. -m "$d/$hdr"
			return
		fi
	done
}

# The module a file (without its extension) belongs to.
module_of() {
	local stem=$1 fam
	for fam in "${MODULE_FAMILIES[@]}"; do
		case $stem in "$fam" | "$fam"_*) echo "$fam"; return ;; esac
	done
	echo "$stem"
}

check_module_cycles() {
	local out=$tmp/module-cycles f dir mod hdr target tmod
	: >"$out"
	: >"$tmp/edges"
	while read -r f; do
		dir=$(dirname "$f")
		mod=$(module_of "${f%.*}")
		echo "$mod $mod" >>"$tmp/edges"
		grep -E '^#[[:space:]]*include[[:space:]]+"' "$f" |
			sed -E 's/^#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/' |
			while read -r hdr; do
				target=$(resolve_include "$dir" "$hdr")
				[ -n "$target" ] || continue
				tmod=$(module_of "${target%.*}")
				[ "$tmod" = "$mod" ] && continue
				echo "$mod $tmod"
				[ $verbose -eq 1 ] && echo "  $f -> $target" >&2
			done >>"$tmp/edges"
	done <"$tmp/cfiles"
	# tsort names the members of each cycle it finds on stderr.
	tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort"
	if [ -s "$tmp/tsort" ]; then
		awk '/input contains a loop/ { if (n) print msg; msg = ""; n = 0; next }
			{ sub(/^tsort: /, ""); msg = msg (n++ ? " -> " : "") $0 }
			END { if (n) print msg }' "$tmp/tsort" |
			while read -r cycle; do
				first=${cycle%% *}
				[ -f "$first.c" ] && first=$first.c || first=$first.h
				echo "$first:1: include cycle between modules: $cycle"
			done >>"$out"
	fi
	report module-cycles "$out"
}

check_spdx() {
	local out=$tmp/spdx f
	: >"$out"
	while read -r f; do
		case $f in
		LICENSE | tests/fuzz/corpus/*) continue ;; # the licence itself; binary seeds
		esac
		grep -Iq . "$f" 2>/dev/null || continue # binary or empty
		head -5 "$f" | grep -q 'SPDX-License-Identifier:' ||
			echo "$f:1: no SPDX-License-Identifier line in its first 5 lines" >>"$out"
	done <"$tmp/files"
	report spdx "$out"
}

# Citations of what does not ship, in docs and in source comments alike.
check_doc_citations() {
	local out=$tmp/doc-citations
	: >"$out"
	grep -v -e '^scripts/check-structure.sh$' -e '^tests/fuzz/corpus/' "$tmp/files" |
		xargs -d '\n' grep -I -n -H -E -i \
			'DESIGN\.md|TESTBED\.md|STYLE\.md|\.\./shared/|the brief|\(the issue\)|see the issue' \
			2>/dev/null |
		while IFS= read -r hit; do
			echo "${hit%%:*}:$(cut -d: -f2 <<<"$hit"): cites what does not ship: $(cut -d: -f3- <<<"$hit" | sed 's/^[[:space:]]*//' | cut -c1-100)"
		done >>"$out"
	report doc-citations "$out"
}

# Path-like references in the docs: a top-level folder of the tree
# followed by a path, standing alone (not inside /sys/fs/bpf/..., not
# .output/tests/...). A reference with a glob must match something; one
# with a placeholder (<name>, {a,b}, $VAR) is taken as a pattern and
# only its fixed part before the placeholder is checked.
check_doc_paths() {
	local out=$tmp/doc-paths f lineno ref path
	: >"$out"
	while read -r f; do
		grep -n -o -E '(^|[^A-Za-z0-9_./~$<-])(bpf|user|tests|docs|scripts|configs|packaging)/[A-Za-z0-9_.*/+-]*[<{$]?' "$f" |
			while IFS=: read -r lineno ref; do
				ref=$(sed -E 's/^[^a-z]//' <<<"$ref")
				case $ref in
				*'<' | *'{' | *'$') path=${ref%?}; path=${path%/*}/ ;;
				*) path=$ref ;;
				esac
				# A placeholder word stands for a name (cmd_NAME.c,
				# configs/MODE.ini): check its folder.
				[[ ${path##*/} =~ (^|[^A-Za-z])(NAME|MODE|FILE|FEATURE|SUITE|TEST|ROLE|TAG)([^A-Za-z]|$) ]] &&
					path=${path%/*}/
				path=${path%%[.,:;)]}
				path=${path%.}
				# shellcheck disable=SC2086
				if [[ $path == *'*'* ]]; then
					compgen -G "$path" >/dev/null && continue
				elif [ -e "$path" ]; then
					continue
				fi
				echo "$f:$lineno: names $path, which is not in the repo"
			done
	done < <(cat "$tmp/docs" "$tmp/sources") >>"$out"
	report doc-paths "$out"
}

check_file_size
check_function_size
check_module_cycles
check_spdx
check_doc_citations
check_doc_paths

[ "$fail" -eq 0 ] || echo "check-structure: fix what is listed; only debt another change is already reworking goes in an allow-list above, with its issue"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
