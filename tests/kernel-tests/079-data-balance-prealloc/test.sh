#!/bin/bash
# A data balance on a filesystem whose metadata is nearly full (formulas.md
# 21.8, step 2): each extent of a data group is preallocated in a
# transaction of its own, btrfs_start_transaction(data_reloc_root, 3)
# (2.25 MiB at 16 KiB nodes with the free-space tree), while
# prepare_to_relocate()'s 4 MiB reserve is held.  512 MiB single/DUP, two
# data groups half used (1 MiB files, every other deleted), small files
# until ENOSPC (metadata takes every unallocated byte), then deleted 100
# at a time until metadata has 4.6 MiB free beside the global reserve:
# more than create_reloc_inode()'s 4.5 MiB and the 4 MiB reserve each,
# less than 4 MiB + 2.25 MiB.  Main predicted -dusage=90 to relocate
# both groups (4,833,280 bytes free by hand); 6.18.44 ended -ENOSPC on
# both ("2 enospc errors", 1 MiB unallocated), as now predicted.  By hand
# on an aged 1 GiB compress=zstd filesystem (5,226,496 bytes free), the
# kernel's failing ticket traced: 2,359,296 bytes, FLUSH_ALL, with
# bytes_may_use 9,961,472 (the 5.5 MiB global reserve and the 4 MiB).
# Compared: the exit status (completes), the enospc count (failed) and
# the unallocated bytes after; and the first screen's balance line says
# it ends with ENOSPC.  About 2 min.
source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

new_fs "$TEST_TMP/prealloc" 512M -d single -m dup
for i in $(seq 0 47); do fallocate -l 1M "$mnt/f$i" || fail "fallocate"; done
for i in $(seq 0 2 47); do rm -f "$mnt/f$i"; done
sync
python3 "$TOP/tests/kernel-tests/074-metadata-enospc/small-files-fill.py" "$mnt" > /dev/null ||
	fail "small-files-fill.py"
sync
# metadata free beside the global reserve, as the live summary reads it
headroom()
{
	"$BTRFS_SPACE" --format json inspect "$mnt" | jq '.summary.space.metadata.headroom.bytes'
}
want=$((4608 * 1024 + 32768))
h=$(headroom)
for d in $(cd "$mnt" && ls -d d* | sort -V); do
	[ "$h" -ge "$want" ] && break
	(cd "$mnt/$d" && ls | sort -V) > "$dir/list"
	while [ -s "$dir/list" ] && [ "$h" -lt "$want" ]; do
		head -n 100 "$dir/list" | sed "s|^|$mnt/$d/|" | xargs -r -d '\n' rm -f
		sed -i 1,100d "$dir/list"
		sync
		h=$(headroom)
	done
done
umount "$mnt" || fail "umount"
release "$dev"
"$BTRFS_SPACE" --format json inspect "$img" > "$dir/inspect.json" || fail "inspect"
h=$(jq '.summary.space.metadata.headroom.bytes' "$dir/inspect.json")
echo "    metadata headroom $h bytes (4 MiB + 2.25 MiB = 6553600)"
# the case this test is for: each reservation alone fits, both do not
[ "$h" -ge "$want" ] && [ "$h" -lt 6553600 ] ||
	fail "the preparation left $h bytes of metadata headroom, not in [$want, 6553600)"

# the first screen says the balance it tried fails, not what it would give
# back (main: "-dusage=51 MNT gives back 8.00MiB of the 128.00MiB one chunk
# needs"; the kernel gave back nothing)
"$BTRFS_SPACE" inspect "$img" | sed '/^$/q' > "$dir/screen.txt"
sed 's/^/    | /' "$dir/screen.txt"
jq -e '[.summary.remedies[] | select(.command | startswith("btrfs balance start -dusage="))
	| select(.effect.completes == false)] | length == 1' "$dir/inspect.json" > /dev/null ||
	fail "no -dusage remedy shown as not completing"
tr '\n' ' ' < "$dir/screen.txt" | tr -s ' ' | grep -q 'MNT ends with ENOSPC, [0-9]* block groups\? not relocated' ||
	fail "the first screen does not say the balance ends with ENOSPC"

filter=-dusage=90
"$BTRFS_SPACE" --format json forecast --balance "$filter" "$img" > "$dir/forecast.json" ||
	fail "forecast --balance $filter"
cp --sparse=always "$img" "$dir/copy.img" || fail "cp"
dev=$(setup_loop "$dir/copy.img") || exit
mount_devs "$dev"
# every block group cached, as the model takes them (lib.sh, remedies())
fstrim "$mnt" > /dev/null 2>&1
marker="btrfs-space-079 $$ $RANDOM"
echo "$marker" > /dev/kmsg
btrfs balance start "$filter" "$mnt" > "$dir/kernel.out" 2>&1 && rc=ok || rc=failed
enospc=$(dmesg | sed -n "/$marker/,\$p" | sed -n 's/.* \([0-9]*\) enospc errors during balance.*/\1/p')
umount "$mnt" || fail "umount"
unallocated "$dir" "$dev" > "$dir/unallocated"
release "$dev"
python3 - "$dir" "${enospc:-0}" "$rc" <<'PY' || fail "the balance what-if disagrees with the kernel"
import json, sys
d, enospc, rc = sys.argv[1], int(sys.argv[2]), sys.argv[3]
b = json.load(open(d + "/forecast.json"))["forecast"]["balance"]
after = {int(k): int(v) for k, v in (l.split() for l in open(d + "/unallocated"))}
model = {int(k): v for k, v in b["unallocated_after"].items()}
print("    kernel: %s, %d enospc, unallocated %s; forecast: completes %s, failed %s, unallocated %s"
      % (rc, enospc, after, b["completes"], b["failed"], model))
bad = []
if b["completes"] != (rc == "ok"):
    bad.append("outcome")
if len(b["failed"]) != enospc:
    bad.append("enospc count")
if model != after:
    bad.append("unallocated after")
for x in bad:
    print("    BROKEN: " + x)
sys.exit(1 if bad else 0)
PY
