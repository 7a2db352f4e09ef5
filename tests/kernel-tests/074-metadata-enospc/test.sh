#!/bin/bash
# Metadata ENOSPC with data free (formulas.md 19.6): a 1 GiB single/DUP
# filesystem filled with small files and an extended attribute each until
# the kernel returns ENOSPC; metadata holds every unallocated byte, data
# its first chunk with 8 MiB free.  Both types are critical and the
# remedy for each is a device added.  Each is run on a copy and the
# type filled (070-summary-levels/check-remedy.py): the data fill's own
# transactions cannot reserve metadata, so the kernel makes a metadata
# chunk on the new device, before the first data chunk or after it
# (timing: of a 256 MiB device data got 128 MiB in three runs, nothing in
# one).  The remedy counts it first, the least data gets: a 512 MiB
# device, 191 MiB (main before this test: 256 MiB, "2 new data chunks,
# 255.00MiB more"; the kernel wrote 142,540,800 or 8,388,608 bytes).

source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

LEVELS=no REMEDY_KINDS='btrfs device add*' run_case small-files small-files "-d single -m dup" 1G
[ -z "$failed" ] || fail "remedies disagree with the kernel in:$failed"
