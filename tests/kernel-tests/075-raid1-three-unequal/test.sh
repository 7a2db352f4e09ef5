#!/bin/bash
# A RAID1 of three unequal devices (1, 2 and 4 GiB) filled to ENOSPC
# (formulas.md 19.6): 1 GiB of devid 3 is dead (no second device with
# room), data is critical.  Every remedy printed is run on a copy with
# the kernel (070-summary-levels/lib.sh, check-remedy.py): the balance
# that cannot help (-dusage=100 fails, nothing moves), a 1 GiB device
# added for data and for the dead space, -dconvert=single, and devid 1
# replaced by a 2 GiB device and grown.  On 6.18.44 each was exact to
# 64 KiB: 1,072,693,248 new data bytes predicted, 1,072,627,712 written;
# the conversion's unallocated bytes per device equal, 4,033,937,408
# writable predicted, 4,033,871,872 written; dead space 3 MiB and 2 MiB
# left as predicted.  About 90 s.
source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

LEVELS=no run_case raid1-124 nearly-full "-d raid1 -m raid1" 1G 2G 4G
[ -z "$failed" ] || fail "remedies disagree with the kernel in:$failed"
