#!/bin/bash
# csum-delete --file with the path an administrator types: on a mounted
# filesystem, "$PWD/mnt/dir/f", a relative "mnt/dir/f" and a file inside a
# subvolume ("mnt/sv/sub/g") are resolved by the kernel (the subvolume by
# BTRFS_IOC_INO_LOOKUP, the inode by stat) and must give the "file" object
# of the path from the subvolume's top ("/dir/f", "--subvol ID /sub/g"),
# live through the mount point and offline on the loop device after a
# sync.  A path whose subvolume is not the --subvol given is a usage error
# (exit 2); a path from the subvolume's top keeps working.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq truncate
need_btrfs_module

new_btrfs_mount 1G realpath
mkdir -p "$mnt/dir" || fail "mkdir"
head -c 3M /dev/urandom > "$mnt/dir/f" || fail "write f"
btrfs subvolume create "$mnt/sv" > /dev/null || fail "subvolume create"
mkdir -p "$mnt/sv/sub" || fail "mkdir sub"
head -c 1M /dev/urandom > "$mnt/sv/sub/g" || fail "write g"
sync
svid=$(btrfs inspect-internal rootid "$mnt/sv") || fail "rootid"

file_json()
{
	run_check_stdout "$BTRFS_SPACE" --format json csum-delete "$@" | jq -S -c .file
}

for target in "$mnt" "$dev"; do
	want=$(file_json --file /dir/f "$target") || exit
	[ "$(jq -r .path <<< "$want")" = /dir/f ] || fail "no /dir/f: $want"
	got=$(file_json --file "$mnt/dir/f" "$target") || exit
	[ "$got" = "$want" ] || fail "$target: --file $mnt/dir/f gave $got, want $want"
	got=$(cd "$TEST_TMP" && file_json --file realpath/dir/f "$target") || exit
	[ "$got" = "$want" ] || fail "$target: a relative path gave $got, want $want"
	echo "ok: $target: $mnt/dir/f and realpath/dir/f are /dir/f of subvolume 5"
	want=$(file_json --file /sub/g --subvol "$svid" "$target") || exit
	got=$(file_json --file "$mnt/sv/sub/g" "$target") || exit
	[ "$got" = "$want" ] || fail "$target: --file $mnt/sv/sub/g gave $got, want $want"
	[ "$(jq -r .subvolume <<< "$got")" = "$svid" ] || fail "not in subvolume $svid: $got"
	echo "ok: $target: $mnt/sv/sub/g is /sub/g of subvolume $svid"
	run_mustfail_code 2 "a path in another subvolume than --subvol" \
		"$BTRFS_SPACE" csum-delete --file "$mnt/sv/sub/g" --subvol 5 "$target"
done
