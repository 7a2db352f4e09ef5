#!/bin/bash
# The summary's levels (formulas.md 19.2) against the kernel's own fills.
# Filesystems at several fill levels (empty, a quarter, half, nearly full;
# metadata full with data free; RAID1 on unequal devices, empty and half
# full) are read by "inspect --format json", then the kernel measures the
# true headroom: a copy filled with extended attributes until
# ENOSPC (metadata: growth of bytes_used), the original filled with
# fallocate until ENOSPC (data). check.py holds the levels to the rule's
# promises: no critical where the kernel could still write 10 % of the
# type's size in data and a metadata chunk's worth of metadata; data
# critical where the kernel's data fill was under one chunk and a tenth,
# metadata critical where it could not take one transaction's reservation.
# Every remedy printed is then run on a copy (a balance, a device added,
# a block group's data deleted, a profile conversion) and its predicted
# effect compared with the kernel's (check-remedy.py).

source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit
# the conversions: kernel test 071
REMEDY_KINDS="!(btrfs balance start -[dm]convert=*)"

run_case empty empty "-d single -m dup" 1G
run_case quarter quarter "-d single -m dup" 1G
run_case half half "-d single -m dup" 1G
run_case nearly-full nearly-full "-d single -m dup" 1G
# single data with free space in its block groups: a -dusage balance gives
# it back as unallocated, but data writes no more (not a remedy)
REMEDY_KINDS="btrfs balance start -dusage=*" LEVELS=no run_case holes holes "-d single -m dup" 1G
run_case data-free data-free "-d single -m dup" 384M
run_case meta-full meta-full "-d single -m dup" 384M
run_case raid1-unequal empty "-d raid1 -m raid1" 1G 2G
run_case raid1-unequal-half half "-d raid1 -m raid1" 1G 2G
run_case empty-3g empty "-d single -m dup" 3G
run_case quarter-3g quarter "-d single -m dup" 3G
[ -z "$failed" ] || fail "levels break their rule against the kernel in:$failed"
