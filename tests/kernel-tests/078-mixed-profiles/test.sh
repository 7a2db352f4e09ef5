#!/bin/bash
# A conversion not finished (formulas.md 19.6): two 1.5 GiB devices,
# single data, RAID1 metadata, a quarter of the space preallocated, then one data
# block group converted by -dconvert=raid1,limit=1 (as a cancelled or
# interrupted conversion leaves it): new data chunks are RAID1, the single
# groups keep one copy and the mount sets them read-only.  Main said
# nothing of it; now the first screen advises -dconvert=raid1,soft with
# what data can write after it, checked on a copy (check-remedy.py:
# unallocated per device, then the data fill against writable_after), and
# the levels are held to the kernel's fills (check.py).  By hand on
# 6.18.44, a conversion cancelled after 4 s on an aged pool (3 single
# groups, 647.93 MiB): unallocated 336,592,896 bytes per device predicted
# and left, 336,359,424 data bytes predicted and written.  Then
# convert-tight: 1,000 MiB written single, a 64 MiB file of it deleted
# (so a single group is partly used), one group converted: the rest
# does not fit in RAID1 (the soft conversion ends in ENOSPC on the kernel
# and in the what-if), so the advice is -dconvert=raid1,soft,usage=N, the
# largest N whose what-if completes; checked on a copy as above.  By hand
# (6.18.44): usage=91, 3 groups, unallocated 1,007,681,536 and 1,048,576,
# data 226,217,984 bytes, predicted and measured alike.  The block groups
# the writes fill vary from run to run, so N and the bytes do too: two
# runs, usage=99 both, 4 groups (unallocated after 336,592,896 and
# 1,048,576, data 282,353,664) and 3 groups (336,592,896 twice, data
# 619,708,416), kernel and tool equal each time.  Without the deleted file
# a run can fill every single group: no usage=N then has a group to take,
# and none was advised, rightly (3 runs in a row at 06:1x UTC, 2026-12-07);
# with it, usage=81, unallocated 672,137,216 and 1,048,576, kernel and tool
# equal in two runs.  About 120 s.
source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit

REMEDY_KINDS='btrfs balance start -dconvert=*,soft MNT' run_case convert-limit convert-limit "-d single -m raid1" 1536M 1536M
jq -e '[.summary.remedies[] | select(.finding == "mixed profiles" and
	.command == "btrfs balance start -dconvert=raid1,soft MNT" and .effect.soft)] | length == 1' \
	"$TEST_TMP/convert-limit/inspect.json" > /dev/null ||
	failed="$failed convert-limit:no-soft-conversion"
# too little room for the whole conversion: its what-if ends in ENOSPC (the
# kernel's balance too, 6.18.44), so the advice is the largest usage=N whose
# what-if completes, run on a copy like the one above (main printed none)
REMEDY_KINDS='btrfs balance start -dconvert=*,soft,usage=* MNT' run_case convert-tight convert-tight "-d single -m raid1" 1536M 1536M
jq -e '[.summary.remedies[] | select(.finding == "mixed profiles" and
	(.command | test("^btrfs balance start -dconvert=raid1,soft,usage=[0-9]+ MNT$")) and
	.effect.completes and .effect.moved_bytes > 0)] | length == 1' \
	"$TEST_TMP/convert-tight/inspect.json" > /dev/null ||
	failed="$failed convert-tight:no-usage-conversion"
[ -z "$failed" ] || fail "the tool disagrees with the kernel in:$failed"
