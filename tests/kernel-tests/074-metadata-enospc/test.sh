#!/bin/bash
# Metadata ENOSPC with data free (formulas.md 19.6): a 1 GiB single/DUP
# filesystem filled with small files and an extended attribute each until
# the kernel returns ENOSPC; metadata holds every unallocated byte, data
# its first chunk with 8 MiB free.  Both types are critical and the
# remedy for each is a device added.  Each is run on a copy and the
# type filled (070-summary-levels/check-remedy.py): the data fill's own
# transactions cannot reserve metadata, so once metadata's over-commit
# room is gone the kernel makes a metadata chunk on the new device, and
# data gains one 128 MiB chunk of a 256 MiB device, not two (main before
# this test: "2 new data chunks, 255.00MiB more"; the kernel filled
# 142,540,800 bytes).

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount findmnt python3 truncate fallocate fstrim jq
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

LEVELS=no REMEDY_KINDS='btrfs device add*' run_case small-files small-files "-d single -m dup" 1G
[ -z "$failed" ] || fail "remedies disagree with the kernel in:$failed"
