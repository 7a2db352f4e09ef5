#!/bin/bash
# --help of the tool and of each command (inspect, chunks, block-groups): exit
# status 0, usage printed on stdout with a synopsis line "btrfs-space ..." for
# the tool and "btrfs-space <command> ..." for each command (an optional
# "usage: " prefix and "[global options]" before the command are accepted).
# Laid out as btrfs-progs does: the global and unit options under their
# headings once, in "btrfs-space --help"; a command's --help lists only its
# own options and points there; every line but the synopsis fits in 80
# columns, and each option's description starts in its group's column.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space

out="$TEST_TMP/out"

# run_help ARGS...: "btrfs-space ARGS" must exit 0 and print usage on stdout
run_help()
{
	run_check_stdout "$BTRFS_SPACE" "$@" > "$out"
	[ -s "$out" ] || fail "btrfs-space $*: nothing on stdout"
}

# synopsis line: optional indentation and "usage:", btrfs-space, optional
# bracketed global options, then the command name as a whole word
synopsis_re()
{
	echo "^[[:space:]]*([Uu]sage:[[:space:]]*)?btrfs-space([[:space:]]+\\[[^]]*\\])*[[:space:]]+$1([[:space:]]|\$)"
}

run_help --help
grep -Eq '^[[:space:]]*([Uu]sage:[[:space:]]*)?btrfs-space([[:space:]]|$)' "$out" || {
	cat "$out"
	fail "btrfs-space --help: no synopsis line 'btrfs-space ...' on stdout"
}
for cmd in inspect chunks block-groups; do
	grep -qw -- "$cmd" "$out" ||
		fail "btrfs-space --help does not mention the command '$cmd'"
done

for cmd in inspect chunks block-groups; do
	run_help "$cmd" --help
	grep -Eq "$(synopsis_re "$cmd")" "$out" || {
		cat "$out"
		fail "btrfs-space $cmd --help: no synopsis line 'btrfs-space $cmd ...' on stdout"
	}
	# the same with a global option in front
	run_help --format json "$cmd" --help
	grep -Eq "$(synopsis_re "$cmd")" "$out" || {
		cat "$out"
		fail "btrfs-space --format json $cmd --help: no synopsis line 'btrfs-space $cmd ...' on stdout"
	}
done

# layout: lines within 80 columns; descriptions of a group in one column
# (the option, two blanks or more, the description)
check_layout()
{
	awk -v what="$1" '
		/^(usage|   or):/ { next }
		length > 80 { print "PROBLEM " what ": line over 80 columns: " $0; bad = 1 }
		/^$/ || /:$/ { col = 0; next }
		/^    -/ && match($0, /^    [^ ]+( [^ ]+)*  +/) {
			if (RLENGTH > 31) next
			if (col && RLENGTH != col) { print "PROBLEM " what ": description out of column: " $0; bad = 1 }
			col = RLENGTH
		}
		END { exit bad }' "$out" || fail "$1: help layout (lines above)"
}

run_help --help
for heading in "Global options" "Units" "Commands"; do
	[ "$(grep -c "^    $heading.*:\$" "$out")" = 1 ] ||
		fail "btrfs-space --help: heading '$heading' not there once"
done
grep -q -- "^    --super N  " "$out" || fail "btrfs-space --help does not list --super"
check_layout "btrfs-space --help"
for cmd in inspect chunks block-groups global-rsv overcommit preempt csum-delete mount-estimate map; do
	run_help "$cmd" --help
	if grep -qE -- "--super|--format|--raw|--iec" "$out"; then
		fail "btrfs-space $cmd --help repeats the global or unit options"
	fi
	grep -q "^    Global and unit options .*btrfs-space help" "$out" ||
		fail "btrfs-space $cmd --help does not say where the global options are"
	check_layout "btrfs-space $cmd --help"
done
echo "help layout: ok"
exit 0
