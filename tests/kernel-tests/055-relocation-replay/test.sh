#!/bin/bash
# Relocation replayed against the kernel (formulas.md 21.8, 21.9, 21.13).
# Filesystems aged as users age them: files of mixed sizes (4 KiB to
# 24 MiB, seeded) copied in, a random half deleted; one device of 1.5 GiB
# (single data, DUP metadata) and two unequal devices (1 GiB + 1.5 GiB,
# single data, RAID1 metadata), three (0.5, 0.75, 1 GiB), four with RAID10
# data and three with RAID5 data.  On a fresh copy per case, forecast runs on
# the unmounted image, then the real command on a loop mount:
#   btrfs balance start -dusage=N (several N), -dlimit, -musage, -dconvert,
#   -mconvert -f, btrfs device remove, btrfs filesystem resize (shrink).
# Compared: the block groups relocated, in order, with the kernel log's
# "relocating block group" lines of this mount; success or ENOSPC; and
# per device the unallocated bytes of `btrfs device usage -b` with
# unallocated_after: within 1 MiB where the forecast says exact, within
# the new chunks' stripes plus one chunk where it does not; the block
# groups left (start, length, data used) are printed against the
# forecast's.  Every figure is printed; the forecast of each case is run
# twice and must be the same, and the kernel runs each case on two fresh
# copies, which must agree (order, exit status, unallocated space).
# RELOC_CASES="1 5" runs only those cases.

source "$TEST_TOP/common" || exit
source "$TEST_TOP/common-relocation.sh" || exit
reloc_setup

make_base one 23 65 "-d single -m dup" 1536M
make_base two 52 65 "-d single -m raid1" 1G 1536M
make_base three 71 35 "-d single -m raid1" 512M 768M 1G
make_base four 40 40 "-d raid10 -m raid1" 512M 512M 768M 1G
make_base five 55 40 "-d raid5 -m raid1" 768M 768M 1G

run_case one "--balance|-dusage=30" btrfs balance start -dusage=30 MNT
run_case one "--balance|-dusage=50" btrfs balance start -dusage=50 MNT
run_case one "--balance|-dusage=75" btrfs balance start -dusage=75 MNT
run_case one "--balance|-dlimit=2" btrfs balance start -dlimit=2 MNT
run_case two "--balance|-dusage=60" btrfs balance start -dusage=60 MNT
run_case two "--balance|-dconvert=raid1" btrfs balance start -dconvert=raid1 MNT
run_case one "--resize|1:1100M" btrfs filesystem resize 1:1100M MNT
run_case two "--remove|1" btrfs device remove 1 MNT
run_case three "--remove|2" btrfs device remove 2 MNT
run_case three "--resize|3:700M" btrfs filesystem resize 3:700M MNT
run_case three "--balance|-dusage=50" btrfs balance start -dusage=50 MNT
run_case three "--balance|-dconvert=raid1" btrfs balance start -dconvert=raid1 MNT
run_case four "--balance|-dusage=50" btrfs balance start -dusage=50 MNT
run_case four "--remove|4" btrfs device remove 4 MNT
run_case five "--balance|-dusage=50" btrfs balance start -dusage=50 MNT
run_case five "--resize|3:600M" btrfs filesystem resize 3:600M MNT
run_case one "--balance|-musage=50" btrfs balance start -musage=50 MNT
run_case two "--balance|-mconvert=single -f" btrfs balance start -f -mconvert=single MNT
reloc_done
