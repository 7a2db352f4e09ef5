#!/bin/bash
# forecast --balance against the kernel: a 2 GiB single-data filesystem is
# filled with 8 MiB files and half emptied (files deleted so that every
# data block group keeps some), forecast --balance -dusage=N is run on the
# unmounted image, then btrfs balance start -dusage=N on a loop mount.
# The chunks left afterwards must be balance.block_groups_after's (new
# chunks take freed starts), and each device's unallocated space within
# 1 MiB of balance.unallocated_after when exact, else within may_differ
# plus one chunk's stripe.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"
img=$TEST_TMP/half.img
truncate -s 2G "$img" || fail "truncate"
run_check mkfs.btrfs -q -f -d single -m dup "$img"
dev=$(setup_loop "$img") || fail "cannot set up a loop device"
setup_mount "$dev" "$mnt"
for i in $(seq 0 139); do
	head -c 8M /dev/urandom > "$mnt/f$i" || fail "write f$i"
	[ $((i % 20)) -eq 19 ] && sync
done
sync
# keep every third file in the first half, every other one after it
for i in $(seq 0 139); do
	if { [ "$i" -lt 70 ] && [ $((i % 3)) -ne 0 ]; } ||
	   { [ "$i" -ge 70 ] && [ $((i % 2)) -ne 0 ]; }; then
		rm "$mnt/f$i"
	fi
done
sync
run_check umount "$mnt"

run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$img" > "$TEST_TMP/bg.json" || exit
run_check_stdout "$BTRFS_SPACE" --format json chunks --list-chunks "$img" > "$TEST_TMP/before.json" || exit
for n in 50 40; do
	run_check_stdout "$BTRFS_SPACE" --format json forecast --balance "-dusage=$n" "$img" \
		> "$TEST_TMP/fc$n.json" || exit
done
# one balance: the one whose selection is neither empty nor everything
n=$(python3 - "$TEST_TMP/fc50.json" "$TEST_TMP/fc40.json" <<'PY'
import json, sys
for f, n in zip(sys.argv[1:], (50, 40)):
    if json.load(open(f))["forecast"]["balance"]["selected"]:
        print(n)
        break
PY
)
[ -n "$n" ] || fail "no data block group under 50 % used: the half-emptying did not work"
setup_mount "$dev" "$mnt"
run_check btrfs balance start "-dusage=$n" "$mnt"
sync
run_check umount "$mnt"
run_check_stdout "$BTRFS_SPACE" --format json chunks --list-chunks "$img" > "$TEST_TMP/after.json" || exit
run_check_stdout "$BTRFS_SPACE" --format json forecast --balance "-dlimit=0" "$img" \
	> "$TEST_TMP/now.json" || exit
python3 - "$n" "$TEST_TMP"/{bg,before,after,fc$n,now}.json <<'PY' || fail "balance -dusage=$n against the forecast"
import json, sys
n = sys.argv[1]
bgs = json.load(open(sys.argv[2]))["block_groups"]
before = json.load(open(sys.argv[3]))["chunks"]
after = {c["logical"]: c for c in json.load(open(sys.argv[4]))["chunks"]}
bal = json.load(open(sys.argv[5]))["forecast"]["balance"]
now = json.load(open(sys.argv[6]))["forecast"]["balance"]["unallocated_after"]
gone = sorted(c["logical"] for c in before if c["type"] & 1 and c["logical"] not in after)
bad = []
model = {b["start"]: b["length"] for b in bal["block_groups_after"]}
kernel = {s: c["length"] for s, c in after.items()}
if model != kernel:
    bad.append("chunks left: kernel %s, forecast %s" % (sorted(kernel.items()), sorted(model.items())))
slack = max(c["stripe_size"] for c in before)
for d, want in bal["unallocated_after"].items():
    diff = now[d] - want
    lim = (1 << 20) if bal["exact"] else bal["may_differ"][d] + slack
    print("-dusage=%s: %d of %d data block groups selected (usage %s), moved %d; devid %s "
          "unallocated after %d, predicted %d (%+d, exact %s, may differ %d)" %
          (n, len(bal["relocated"]), sum(1 for b in bgs if b["flags"] & 1),
           sorted(b["used"] * 100 // b["length"] for b in bgs if b["flags"] & 1),
           bal["moved_bytes"], d, now[d], want, diff, bal["exact"], bal["may_differ"][d]))
    if abs(diff) > lim:
        bad.append("devid %s: unallocated %d, predicted %d, allowed %d" % (d, now[d], want, lim))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
