#!/bin/bash
# The --help of the tool and of each command against its man page (the idea of
# git's t0450-txt-doc-vs-help), and what "make install" puts in place:
# - every command listed by "btrfs-space --help" has Documentation/btrfs-space-CMD.rst
#   and is named in Documentation/btrfs-space.rst;
# - each synopsis line of "--help" (the "usage: " line and any further
#   "btrfs-space ..." lines under it) is a line of the page's SYNOPSIS section;
# - every long option "--name" that "--help" mentions is in the page's OPTIONS
#   section (".. include::" parts expanded) and in the generated .8 next to
#   it, and contrib/bash-completion/btrfs-space offers it after "btrfs-space
#   [CMD] --" (as it offers every command after "btrfs-space ");
# - "make install DESTDIR=..." installs the binary (which runs), every
#   Documentation/*.8 under man8/ and the bash completion under
#   bash-completion/completions/; "make uninstall" removes them again.
# Every problem is listed, then the test fails with the count. Skipped (77)
# only before the install part, when the tree is not configured (no Makefile),
# not built, or make is missing.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq awk sed grep find cmp

doc=$TOP/Documentation
completion=$TOP/contrib/bash-completion/btrfs-space
problems=0

problem()
{
	echo "PROBLEM: $*"
	problems=$((problems + 1))
}

# rst_expand FILE: the page with each ".. include:: PART" replaced by PART
# (relative to the page's folder, nested includes too)
rst_expand()
{
	local file=$1 dir line part
	dir=$(dirname "$file")
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line =~ ^\.\.[[:space:]]+include::[[:space:]]+(.+)$ ]]; then
			part=${BASH_REMATCH[1]}
			part=${part%"${part##*[![:space:]]}"}
			if [ -f "$dir/$part" ]; then
				rst_expand "$dir/$part"
			else
				echo "MISSING-INCLUDE $part"
			fi
		else
			printf '%s\n' "$line"
		fi
	done < "$file"
}

# rst_section NAME < page: the lines of the top-level section NAME (a title
# underlined with "="), up to the next such title
rst_section()
{
	awk -v want="$1" '
		{ line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				is_title = (i < NR && line[i] != "" && line[i + 1] ~ /^=+$/ &&
					    length(line[i + 1]) >= length(line[i]) &&
					    line[i] !~ /^=+$/)
				if (is_title) {
					inside = (line[i] == want)
					i++
					continue
				}
				if (inside)
					print line[i]
			}
		}'
}

# normalize: drop leading/trailing blanks and inline markup, squeeze blanks
normalize()
{
	sed -E -e 's/^[[:space:]]*(\|[[:space:]]+)?//' -e 's/[[:space:]]+$//' \
		-e 's/\*\*|``//g' -e 's/[[:space:]]+/ /g'
}

# help_synopsis: the synopsis lines of a --help text on stdin
help_synopsis()
{
	awk '
		NR == 1 { sub(/^[[:space:]]*[Uu]sage:[[:space:]]*/, ""); print; next }
		{
			l = $0
			sub(/^[[:space:]]+/, "", l)
			if (l ~ /^btrfs-space([[:space:]]|$)/) { print l; next }
			exit
		}'
}

# long_options: every "--name" in the text on stdin, one per line, sorted
long_options()
{
	grep -oE -- '(^|[^[:alnum:]-])--[[:alnum:]][[:alnum:]-]*' | sed -E 's/^[^-]*//' | sort -u
}

# has_option OPT FILE: OPT appears in FILE not as part of a longer option name
has_option()
{
	grep -qE -- "(^|[^[:alnum:]-])$1([^[:alnum:]-]|\$)" "$2"
}

# check_page NAME HELPFILE: Documentation/NAME.rst against the --help text
check_page()
{
	local name=$1 help=$2 rst=$doc/$1.rst man=$doc/$1.8
	local expanded=$TEST_TMP/$1.expanded synopsis=$TEST_TMP/$1.synopsis
	local options=$TEST_TMP/$1.options man_text=$TEST_TMP/$1.man line opt

	if [ ! -f "$rst" ]; then
		problem "$name: no man page source $rst"
		return
	fi
	rst_expand "$rst" > "$expanded"
	if grep -q '^MISSING-INCLUDE ' "$expanded"; then
		problem "$name.rst: included file not found: $(grep '^MISSING-INCLUDE ' "$expanded" | cut -d' ' -f2 | tr '\n' ' ')"
	fi
	rst_section SYNOPSIS < "$expanded" | normalize | grep -v '^$' > "$synopsis"
	rst_section OPTIONS < "$expanded" > "$options"
	[ -s "$synopsis" ] || problem "$name.rst: no SYNOPSIS section"
	[ -s "$options" ] || problem "$name.rst: no OPTIONS section"

	if [ -f "$man" ]; then
		# the roff escapes that matter here: \- is -, \e is \, \(aq is '
		sed -e 's/\\-/-/g' -e 's/\\(aq/'"'"'/g' -e 's/\\e/\\/g' "$man" > "$man_text"
	else
		problem "$name: no generated man page $man (run: make -C Documentation)"
		: > "$man_text"
	fi

	while IFS= read -r line; do
		[ -n "$line" ] || continue
		grep -qxF -- "$line" "$synopsis" ||
			problem "$name.rst: SYNOPSIS lacks the --help synopsis line: $line"
		[ -s "$man_text" ] && ! grep -qF -- "$line" "$man_text" &&
			problem "$name.8: lacks the --help synopsis line (regenerate: make -C Documentation): $line"
	done < <(help_synopsis < "$help" | normalize)

	while IFS= read -r opt; do
		has_option "$opt" "$options" ||
			problem "$name.rst: OPTIONS does not document $opt (listed by --help)"
		[ -s "$man_text" ] && ! has_option "$opt" "$man_text" &&
			problem "$name.8: does not document $opt (regenerate: make -C Documentation)"
		if [ -f "$completion" ] && ! grep -qxF -- "$opt" "$completed"; then
			problem "bash completion: '${words[*]} --' does not offer $opt (listed by --help)"
		fi
	done < <(long_options < "$help")
}

# complete WORD...: what contrib/bash-completion/btrfs-space offers for the
# command line "WORD..." (the last word is the one being completed), one per
# line; run in a separate bash without bash-completion loaded
complete_words()
{
	bash -c 'source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_btrfs_space btrfs-space "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' complete "$completion" "$@"
}

# --- the tool ------------------------------------------------------------------

help=$TEST_TMP/help
run_check_stdout "$BTRFS_SPACE" --help > "$help"
completed=$TEST_TMP/completed
words=(btrfs-space)
complete_words btrfs-space -- > "$completed" 2>/dev/null
check_page btrfs-space "$help"

# commands: the first word of each line after "Commands:"
commands=$(awk '
	/^[[:space:]]*Commands:[[:space:]]*$/ { on = 1; next }
	on && /^[[:space:]]*$/ { exit }
	on { print $1 }' "$help")
[ -n "$commands" ] || fail "btrfs-space --help lists no commands under 'Commands:'"
echo "commands: ${commands//$'\n'/ }"
[ -f "$completion" ] || problem "no bash completion: $completion"

for cmd in $commands; do
	grep -qE -- "\\*\\*$cmd\\*\\*" "$doc/btrfs-space.rst" 2>/dev/null ||
		problem "btrfs-space.rst does not name the command **$cmd**"
	if [ -f "$completion" ] && ! complete_words btrfs-space "" 2>/dev/null | grep -qxF -- "$cmd"; then
		problem "bash completion: 'btrfs-space ' does not offer the command $cmd"
	fi
	# "help" only prints the others' texts: btrfs-space(8) documents it
	[ "$cmd" != help ] || continue
	help=$TEST_TMP/help-$cmd
	run_check_stdout "$BTRFS_SPACE" "$cmd" --help > "$help"
	words=(btrfs-space "$cmd")
	complete_words btrfs-space "$cmd" -- > "$completed" 2>/dev/null
	check_page "btrfs-space-$cmd" "$help"
done

# every page source has its generated page
for rst in "$doc"/btrfs-space*.rst; do
	[ -e "$rst" ] || continue
	[ -f "${rst%.rst}.8" ] || problem "$(basename "$rst") has no generated ${rst%.rst}.8 (run: make -C Documentation)"
done

if [ -f "$completion" ]; then
	bash -n "$completion" || problem "bash completion: syntax error in $completion"
fi

if [ "$problems" -ne 0 ]; then
	fail "$problems problem(s) between --help, the man pages and the completion (listed above)"
fi
echo "help, man pages and completion agree"

# --- make install / uninstall ------------------------------------------------

command -v make > /dev/null 2>&1 || skip "make not found: make install not checked"
[ -f "$TOP/Makefile" ] || skip "tree not configured (no $TOP/Makefile): make install not checked"
[ -x "$TOP/btrfs-space" ] || skip "$TOP/btrfs-space not built: make install not checked"

inst=$TEST_TMP/inst
log=$TEST_TMP/make-install.log
# -o btrfs-space: install what is built, never rebuild it from here
if ! make -C "$TOP" -o btrfs-space install DESTDIR="$inst" > "$log" 2>&1; then
	tail -n 20 "$log"
	fail "make install DESTDIR=$inst failed"
fi

bin=$(find "$inst" -path '*/bin/btrfs-space' -type f 2>/dev/null | head -n 1)
if [ -z "$bin" ]; then
	problem "make install: no bin/btrfs-space under $inst"
elif [ ! -x "$bin" ]; then
	problem "make install: $bin is not executable"
else
	run_check "$bin" --help > /dev/null
fi

for man in "$doc"/*.8; do
	[ -e "$man" ] || continue
	page=$(basename "$man")
	installed=$(find "$inst" -path "*/man8/$page" -type f 2>/dev/null | head -n 1)
	if [ -z "$installed" ]; then
		problem "make install: man page $page not installed under man8/"
	elif ! cmp -s "$man" "$installed"; then
		problem "make install: $installed differs from $man"
	fi
done

comp=$(find "$inst" -path '*/bash-completion/completions/btrfs-space' -type f 2>/dev/null | head -n 1)
if [ -z "$comp" ]; then
	problem "make install: bash completion not installed as \$(datarootdir)/bash-completion/completions/btrfs-space"
elif ! cmp -s "$completion" "$comp"; then
	problem "make install: $comp differs from $completion"
fi

echo "installed:"
(cd "$inst" && find . -type f | sort)

if ! make -C "$TOP" -o btrfs-space uninstall DESTDIR="$inst" > "$log" 2>&1; then
	tail -n 20 "$log"
	problem "make uninstall DESTDIR=$inst failed"
fi
left=$(cd "$inst" && find . -type f | sort)
[ -z "$left" ] || problem "make uninstall left files behind: ${left//$'\n'/ }"

if [ "$problems" -ne 0 ]; then
	fail "$problems problem(s) with make install/uninstall (listed above)"
fi
echo "make install and uninstall: binary, man pages and completion"

# the committed .8 pages are what their .rst give (an edited page whose .8
# was not regenerated installs the old text)
if ! make -s -C "$doc" check > "$log" 2>&1; then
	cat "$log"
	fail "a committed man page differs from its .rst (make -C Documentation force)"
fi
echo "every Documentation/*.8 is what its .rst gives"
exit 0
