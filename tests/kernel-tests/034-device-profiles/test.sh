#!/bin/bash
# The devices table's bytes per type and profile, against the kernel: on
# sparse copies of the multi-device fixtures (RAID1, RAID10, RAID5, a
# device added and converted to RAID1), DUP and mixed ones, and on a
# filesystem made here with one data chunk converted to RAID1 after a
# device was added (Data single and Data RAID1 side by side), each
# mounted -o ro, every cell of "btrfs filesystem usage -T -b" (the bytes
# of each type and profile on each device, its unallocated bytes and its
# slack, one device grown past the filesystem; the Total and Used rows)
# must be what "btrfs-space inspect" gives for the unmounted images.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

mnt=$TEST_TMP/mnt
nr=0

# compare NAME FILE...: mount the files' filesystem -o ro, take the kernel's
# table, unmount, and hold the tool's figures for the files to it
compare()
{
	local name=$1 f loops=() table=$TEST_TMP/$1.usage
	shift
	for f in "$@"; do
		loops+=("$(setup_loop "$f")") || exit
	done
	btrfs device scan "${loops[@]}" > /dev/null || fail "$name: btrfs device scan failed"
	setup_mount "${loops[0]}" "$mnt" -o ro
	btrfs filesystem usage -T -b "$mnt" > "$table" || fail "$name: btrfs filesystem usage -T failed"
	umount "$mnt" || fail "$name: cannot unmount $mnt"
	sed -i "\|^$mnt\$|d" "$_BS_STATE/mounts"
	for f in "${loops[@]}"; do
		btrfs device scan --forget "$f" > /dev/null 2>&1
		losetup -d "$f"
		sed -i "\|^$f |d" "$_BS_STATE/loops"
	done
	run_check_stdout "$BTRFS_SPACE" --format json inspect "$@" > "$TEST_TMP/$name.json"
	echo "$name:"
	python3 ./usage-table.py "$table" "$TEST_TMP/$name.json" | sed 's/^/    /'
	[ "${PIPESTATUS[0]}" = 0 ] || { cat "$table"; fail "$name: the tool's devices differ from btrfs filesystem usage -T"; }
	nr=$((nr + 1))
}

for name in raid1-2dev raid10-4dev raid5-3dev devadd-convert-raid1 ns16k-1g mixed-256m; do
	mapfile -t src < <(fixture_images "$name" "$TEST_TMP/src-$name") || exit
	copies=()
	for f in "${src[@]}"; do
		cp --sparse=always "$f" "$TEST_TMP/$(basename "$f")" || fail "cannot copy $f"
		copies+=("$TEST_TMP/$(basename "$f")")
	done
	compare "$name" "${copies[@]}"
	rm -f "${copies[@]}"
done

# two data profiles: single on one device, then a second device and one
# data chunk converted to RAID1
a=$TEST_TMP/two-a.img
b=$TEST_TMP/two-b.img
truncate -s 1G "$a" "$b" || fail "cannot make the images"
la=$(setup_loop "$a") || exit
lb=$(setup_loop "$b") || exit
run_check mkfs.btrfs -q -f -d single -m dup "$la" > /dev/null
setup_mount "$la" "$mnt"
dd if=/dev/urandom of="$mnt/fill" bs=1M count=300 status=none || fail "cannot write $mnt/fill"
sync
run_check btrfs device add -f "$lb" "$mnt" > /dev/null
run_check btrfs balance start -dconvert=raid1,limit=1 "$mnt" > /dev/null
umount "$mnt" || fail "cannot unmount $mnt"
sed -i "\|^$mnt\$|d" "$_BS_STATE/mounts"
for f in "$la" "$lb"; do
	btrfs device scan --forget "$f" > /dev/null 2>&1
	losetup -d "$f"
	sed -i "\|^$f |d" "$_BS_STATE/loops"
done
# the second file grown by 64 MiB the filesystem does not use: its slack
truncate -s +64M "$b" || fail "cannot grow $b"
compare two-profiles "$a" "$b"
jq -e '.devices[1].slack == 67108864 and .device_totals.slack == 67108864' "$TEST_TMP/two-profiles.json" > /dev/null ||
	fail "the grown device's slack is not 64 MiB: $(jq -c '[.devices[].slack]' "$TEST_TMP/two-profiles.json")"
jq -e '[.devices[].profiles[] | select(.type_name == "DATA") | .profile] | unique == ["raid1", "single"]' \
	"$TEST_TMP/two-profiles.json" > /dev/null ||
	fail "the made filesystem does not have data single and RAID1 side by side"
echo "$nr filesystems: every device's bytes per type and profile, slack, and the Total and Used rows as btrfs filesystem usage -T shows them"
