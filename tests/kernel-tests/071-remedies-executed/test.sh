#!/bin/bash
# The profile conversions inspect advises, executed (formulas.md 19.6):
# on filesystems where one helps (RAID1 data on unequal devices, empty
# and nearly full: dead space and a data finding; metadata DUP on two
# devices; RAID1 aged with real files: /usr/share copied in, half of it
# deleted, copied in again to 92 %; data full beside empty metadata
# chunks: -musage=0; a full RAID1 whose first device grew, not the
# filesystem: resize DEVID:max, only it run; a RAID1 pool full on every
# device: two devices added, only that run) every remedy printed is run
# on a copy with the real kernel, replaces of the smallest device for dead
# space included,
# the conversions included, and the predicted unallocated bytes per
# device, writable bytes and dead space after it compared with the
# kernel's (070-summary-levels/check-remedy.py); the levels are held to
# the kernel's fills as in test 070 (check.py).

source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

run_case raid1-unequal-full nearly-full "-d raid1 -m raid1" 1G 2G
run_case raid1-three half "-d raid1 -m raid1" 512M 1G 2G
run_case dup-two-devices quarter "-d single -m dup" 1G 1G
run_case aged-raid1 aged "-d raid1 -m raid1" 768M 1536M
run_case meta-empty meta-empty "-d single -m dup" 1G
# a RAID1 pool full on every device: one device added gives no chunk, two do
LIVE_SAME=yes LEVELS=no REMEDY_KINDS='btrfs device add*' run_case raid1-all-full nearly-full "-d raid1 -m raid1" 1G 1G 2G
# a partition grown under a full RAID1 (slack): btrfs filesystem resize 1:max
LEVELS=no REMEDY_KINDS='btrfs filesystem resize*' run_case raid1-grown nearly-full-grown "-d raid1 -m raid1" 1G 1G 1G
[ -z "$failed" ] || fail "remedies or levels disagree with the kernel in:$failed"
