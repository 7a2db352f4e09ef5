#!/bin/bash
# Relocation replayed against the kernel (formulas.md 21.8, 21.9), the
# profiles and the aging 055-relocation-replay leaves out: RAID6 data with
# RAID1C3 metadata on four unequal devices, RAID1C3 data and metadata on
# four unequal devices, and a data conversion (single to RAID1 on three
# unequal devices) cancelled half-way, so that single and RAID1 data block
# groups live side by side (then converted back to single).  The same
# comparison as 055 (tests/common-relocation.sh): the kernel log's
# "relocating block group" order, success or ENOSPC, unallocated per device
# (`btrfs device usage -b`) and the block groups left, every figure printed;
# the forecast twice on a copy, the kernel on two fresh copies.
# RELOC_CASES="1 5" runs only those.

source "$TEST_TOP/common" || exit
source "$TEST_TOP/common-relocation.sh" || exit
reloc_setup

# age_more_conv MNT: a conversion of the data to RAID1 cancelled once
# about half of its chunks are done (`btrfs balance cancel` waits for the
# block group being relocated); the image then holds both profiles
age_more_conv()
{
	local mnt=$1 pid n t done=? total=? how=cancelled
	btrfs balance start -dconvert=raid1 "$mnt" > "$base/conv-balance.out" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		read -r n t < <(btrfs balance status "$mnt" 2>/dev/null |
			sed -n 's/^ *\([0-9]*\) out of about \([0-9]*\) chunks balanced.*/\1 \2/p')
		if [ -n "$t" ]; then
			done=$n
			total=$t
			[ "$total" -gt 0 ] && [ $((done * 2)) -ge "$total" ] && break
		fi
		kill -0 "$pid" 2> /dev/null || { how="ended by itself"; break; }
		sleep 0.05
	done
	btrfs balance cancel "$mnt" > /dev/null 2>&1
	wait "$pid"
	echo "conversion $how after $done of about $total chunks (exit $?)"
	btrfs filesystem df "$mnt" | grep -i data
	sync
}

make_base raid6 61 25 "-d raid6 -m raid1c3" 512M 640M 768M 1G
make_base c3 37 30 "-d raid1c3 -m raid1c3" 512M 768M 768M 1G
make_base conv 83 30 "-d single -m raid1" 768M 1G 1G

run_case raid6 "--balance|-dlimit=3" btrfs balance start -dlimit=3 MNT
run_case raid6 "--remove|1" btrfs device remove 1 MNT
run_case c3 "--balance|-dusage=60" btrfs balance start -dusage=60 MNT
run_case c3 "--balance|-dconvert=raid6" btrfs balance start -dconvert=raid6 MNT
run_case c3 "--balance|-mconvert=raid1" btrfs balance start -mconvert=raid1 MNT
run_case conv "--balance|-dconvert=raid1,soft" btrfs balance start -dconvert=raid1,soft MNT
run_case conv "--balance|-dusage=50" btrfs balance start -dusage=50 MNT
run_case conv "--resize|1:500M" btrfs filesystem resize 1:500M MNT
# back to single: a single data allocation fits a data block group of any
# profile (block_group_bits()), the lists walked in raid index order
run_case conv "--balance|-dconvert=single" btrfs balance start -dconvert=single MNT
reloc_done
