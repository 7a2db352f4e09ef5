#!/bin/bash
# The quota tree's items as btrfs_read_qgroup_config() (Linux 6.18.44)
# takes them, on fixture pop-quota (0/257 limited to 200 MiB referenced,
# 35,356,672 bytes counted; 0/258 and 0/259 after it), each item changed
# by tests/fuzz/quota-mutants.py (the leaf built again, checksum written):
# - the limit's count is its own qgroup's: every INFO key (0, 242, id)
#   sorts before every LIMIT key (0, 244, id), and the reader took the
#   count of the INFO item read last (0/259's) for every limit: "200.00MiB
#   left ... (0.00B counted)" where `btrfs qgroup show` says 33.72 MiB;
# - what the kernel logs and still mounts: status version 2 ("old qgroup
#   version, quota disabled": sysfs qgroups/enabled 0), status generation
#   one behind the superblock's ("qgroup generation mismatch": enabled,
#   inconsistent 1), a limit item without an info item ("inconsistent
#   qgroup config": the qgroup counts 0): the quota line names the leaf,
#   the slot and the field, and follows the kernel;
# - an item ending before a field read (status flags, info excl, limit
#   max_excl): the kernel reads past the item ("bad eb member end" when
#   past the leaf; no tree-checker rule for quota items), so the quotas
#   are not read: one line naming leaf, slot and field, exit 0;
# - absurd values (counts and limits of 2^64 - 1, limits of 0, every limit
#   flag) read, text and JSON, exit 0.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3

img=$(fixture_images pop-quota "$TEST_TMP/pq") || exit
# the quota tree's one leaf (quota-mutants.py checks its owner)
leaf=33128448
"$BTRFS_SPACE" --format json chunks --list-chunks "$img" > "$TEST_TMP/chunks.json" ||
	fail "cannot list the chunks"

# mutant MUTATION: the mutant's quota lines (q.txt), its JSON summary.quota (q.json)
mutant()
{
	local m=$1
	cp --sparse=always "$img" "$TEST_TMP/m.img" || fail "cannot copy"
	[ "$m" = none ] || python3 "$TEST_TOP/fuzz/quota-mutants.py" "$img" "$TEST_TMP/chunks.json" \
		"$leaf" "$m" "$TEST_TMP/m.img" || fail "$m: cannot mutate"
	"$BTRFS_SPACE" inspect "$TEST_TMP/m.img" > "$TEST_TMP/t.out" 2> "$TEST_TMP/t.err" ||
		fail "$m: inspect failed: $(cat "$TEST_TMP/t.err")"
	[ -s "$TEST_TMP/t.err" ] && fail "$m: inspect said on stderr: $(cat "$TEST_TMP/t.err")"
	"$BTRFS_SPACE" --format json inspect "$TEST_TMP/m.img" > "$TEST_TMP/j.out" 2> "$TEST_TMP/t.err" ||
		fail "$m: inspect --format json failed: $(cat "$TEST_TMP/t.err")"
	jq -c .summary.quota "$TEST_TMP/j.out" > "$TEST_TMP/q.json" || fail "$m: JSON does not parse"
	grep -q -i -E '[:,[] ?(-?nan|-?inf(inity)?)[],}]' "$TEST_TMP/j.out" && fail "$m: nan or inf: $(cat "$TEST_TMP/q.json")"
	# the quota lines of the first screen, joined
	awk '/^Quotas/ { on = 1; print; next } /^ / && on { print; next } { on = 0 }' \
		"$TEST_TMP/t.out" | tr -s ' \n' ' ' > "$TEST_TMP/q.txt"
}

says()
{
	grep -q -E -- "$2" "$TEST_TMP/q.txt" || fail "$1: the quota lines do not say /$2/: $(cat "$TEST_TMP/q.txt")"
	echo "ok: $1: $(cut -c1-160 "$TEST_TMP/q.txt")"
}

json_is()
{
	[ "$(jq -r "$2" "$TEST_TMP/q.json")" = "$3" ] ||
		fail "$1: $2 is $(jq -r "$2" "$TEST_TMP/q.json"), expected $3"
}

mutant none
says "limit counted by its own qgroup" "0/257, has 166.28MiB left .*\(33.72MiB counted\)"
json_is none .tightest.counted 35356672
json_is none .note null

mutant status-version
says "old version" "^Quotas off at mount: quota tree leaf $leaf slot 0: status version 2, not 1"
grep -q "qgroups limited\|qgroup limited" "$TEST_TMP/q.txt" && fail "status-version: limits shown"
json_is status-version .enabled false

mutant status-generation
says "generation" "slot 0: status generation [0-9]+, not the superblock's [0-9]+: the kernel marks quotas inconsistent"
says "generation" "inconsistent: a rescan is due"
json_is status-generation .inconsistent true

mutant info-missing
says "limit without info" "slot [0-9]+: a limit item without an info item: the kernel marks quotas inconsistent"
says "limit without info" "0/257, has 200.00MiB left .*\(0.00B counted, inconsistent"

mutant status-short
says "status short" "^Quotas not read: quota tree leaf $leaf slot 0: status item of 16 bytes ends before its flags field"
json_is status-short . null
mutant info-short
says "info short" "^Quotas not read: quota tree leaf $leaf slot [0-9]+: info item of 24 bytes ends before its excl field"
mutant limit-short
says "limit short" "^Quotas not read: quota tree leaf $leaf slot [0-9]+: limit item of 16 bytes ends before its max_excl field"

for m in status-off status-empty status-missing rfer-over-limit rfer-max limit-max limit-zero limit-flags-all; do
	mutant "$m"
	echo "ok: $m: $(cut -c1-160 "$TEST_TMP/q.txt")"
done
json_is limit-flags-all .limited 1
