#!/bin/bash
# forecast --devices: the plan of RAID1 over 1, 2 and 5 GiB (the figures
# kernel test 052 measured: mkfs's three chunks on devids 2 and 3, data
# writable 2942238720 bytes, 2149580800 bytes of the 5 GiB device dead),
# JSON mode "planned"; a device given with it, a profile with too few
# devices, a malformed list, devices adding up to more than 16 EiB are usage
# errors (exit 2), a device smaller
# than mkfs.btrfs accepts exits 1 with mkfs's minimum.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq jq

json=$(run_check_stdout "$BTRFS_SPACE" --format json forecast --devices 1G,2G,5G \
	--data-profile raid1 --metadata-profile raid1) || exit
check()
{
	local got
	got=$(jq -c "$1" <<< "$json") || fail "jq $1"
	[ "$got" = "$2" ] || fail "$1: got $got, want $2"
	echo "ok: $1 = $2"
}
check .mode '"planned"'
check '.mkfs_layout.chunks | map([.logical, .length, .type, .profile, (.stripes | map(.devid))])' \
	'[[22020096,8388608,"SYSTEM","raid1",[2,3]],[30408704,268435456,"METADATA","raid1",[2,3]],[298844160,429457408,"DATA","raid1",[2,3]]]'
check '.mkfs_layout.devices | map(.allocated)' '[0,706281472,706281472]'
check .forecast.data_fill.writable_bytes 2942238720
check '.forecast.data_fill.unallocatable_hard."3"' 2149580800

text=$(run_check_stdout "$BTRFS_SPACE" forecast --devices 1G,2G,5G --data-profile raid1 \
	--metadata-profile raid1) || exit
grep -q "^Planned: mkfs.btrfs on empty devices" <<< "$text" || fail "no Planned section in the text"
# the answer first: the forecast's writable data, then mkfs's layout
[ "$(head -1 <<< "$text")" = "Forecast (formulas.md section 21):" ] ||
	fail "the plan does not start with the forecast: $(head -1 <<< "$text")"

# defaults: one device, DUP metadata and single data as mkfs
check_default=$(run_check_stdout "$BTRFS_SPACE" --format json forecast --devices 3G) || exit
got=$(jq -c '.mkfs_layout.chunks | map(.type + "," + .profile)' <<< "$check_default")
[ "$got" = '["DATA,single","SYSTEM,dup","METADATA,dup"]' ] || fail "defaults on one device: $got"
echo "ok: defaults on one device: $got"

run_mustfail_code 2 "a device with --devices" "$BTRFS_SPACE" forecast --devices 1G /dev/null
run_mustfail_code 2 "raid1 on one device" "$BTRFS_SPACE" forecast --devices 1G --data-profile raid1
run_mustfail_code 2 "raid1c3 metadata on two" "$BTRFS_SPACE" forecast --devices 1G,1G --metadata-profile raid1c3
run_mustfail_code 2 "an empty size" "$BTRFS_SPACE" forecast --devices 1G,,2G
run_mustfail_code 2 "not a size" "$BTRFS_SPACE" forecast --devices big
run_mustfail_code 2 "more than 16 EiB" "$BTRFS_SPACE" forecast --devices 8E,8E
run_mustfail_code 1 "a device too small" "$BTRFS_SPACE" forecast --devices 100M
