#!/bin/bash
# Quota limits on the first screen (formulas.md 19.9): a subvolume limited
# to 64 MiB referenced, 40 MiB of it written and committed, on a 1 GiB
# single/DUP filesystem whose data and metadata have plenty of room.  Main
# said only "ok: data can grow by ..." and the next writes into the
# subvolume failed with EDQUOT 24 MiB later.  inspect now names the
# qgroup, its limit, what is counted and what is left, and the bytes the
# kernel preallocates in the subvolume before EDQUOT (qfill.py, twice on
# fresh copies) are at most what it says is left and less than 1 MiB
# short of it (6.18.44: 24,203,264 of 24,281,088: the subvolume's new tree
# blocks count in its referenced bytes too).  A second subvolume, created
# after it, is not limited.  About 20 s.
source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

new_fs "$TEST_TMP/quota" 1G -d single -m dup
btrfs quota enable "$mnt" || fail "btrfs quota enable"
btrfs subvolume create "$mnt/vol" > /dev/null || fail "btrfs subvolume create"
btrfs qgroup limit 64M "$mnt/vol" || fail "btrfs qgroup limit"
# a subvolume after it: 0/256's INFO item is then not the quota tree's last
# (the INFO items all sort before the LIMIT items; a count taken from the
# last INFO item read gave 0/256 its whole 64 MiB left)
btrfs subvolume create "$mnt/later" > /dev/null || fail "btrfs subvolume create later"
head -c 40M /dev/urandom > "$mnt/vol/a" || fail "write"
sync
btrfs qgroup show -re --raw "$mnt" | sed 's/^/    | /'
umount "$mnt" || fail "umount"
release "$dev"

"$BTRFS_SPACE" --format json inspect "$img" > "$dir/inspect.json" || fail "inspect"
"$BTRFS_SPACE" inspect "$img" | sed '/^$/q' > "$dir/screen.txt"
sed 's/^/    | /' "$dir/screen.txt"
jq -e '.summary.quota | .enabled and .limited == 1 and .tightest.qgroup == "0/256"
	and .tightest.limit_kind == "referenced" and .tightest.limit == 67108864' \
	"$dir/inspect.json" > /dev/null || fail "summary.quota does not name 0/256's 64 MiB referenced limit"
tr '\n' ' ' < "$dir/screen.txt" | tr -s ' ' |
	grep -q 'Quotas: 1 qgroup limited; the tightest, 0/256, has .* left of its 64.00MiB referenced limit .*EDQUOT' ||
	fail "the first screen does not name the quota limit"
# monitoring: the same bytes as a gauge
"$BTRFS_SPACE" --format openmetrics inspect "$img" |
	grep -q "^btrfs_space_quota_left_bytes{.*qgroup=\"0/256\",limit=\"referenced\"} $(jq '.summary.quota.tightest.left' "$dir/inspect.json")\$" ||
	fail "no btrfs_space_quota_left_bytes gauge for 0/256"
# data can still grow far past the limit: the limit, not ENOSPC, stops writes
left=$(jq '.summary.quota.tightest.left' "$dir/inspect.json")
data=$(jq '.summary.space.data.headroom.bytes' "$dir/inspect.json")
[ "$data" -gt $((left * 4)) ] || fail "the case needs data headroom ($data) far above the quota's ($left)"

for run in 1 2; do
	cp --sparse=always "$img" "$dir/copy.img" || fail "cp"
	dev=$(setup_loop "$dir/copy.img") || exit
	mount_devs "$dev"
	out=$(python3 "$TOP/tests/kernel-tests/088-quota-limit/qfill.py" "$mnt/vol") || fail "qfill.py"
	read -r written stop <<< "$out"
	umount "$mnt" || fail "umount"
	release "$dev"
	echo "    run $run: kernel preallocated $written bytes until $stop; inspect: $left left"
	[ "$stop" = EDQUOT ] || fail "the fill stopped with $stop, not EDQUOT"
	[ "$written" -le "$left" ] && [ $((left - written)) -lt $((1 << 20)) ] ||
		fail "the kernel wrote $written bytes, inspect said $left were left"
done
rm -f "$dir/copy.img"
