#!/bin/bash
# --help of the tool and of each command (inspect, chunks, block-groups): exit
# status 0, usage printed on stdout with a synopsis line "btrfs-space ..." for
# the tool and "btrfs-space <command> ..." for each command (an optional
# "usage: " prefix and "[global options]" before the command are accepted).

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

exit 0
