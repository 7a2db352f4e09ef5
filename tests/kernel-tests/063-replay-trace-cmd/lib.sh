#!/bin/bash
# Sourced by kernel tests 063 and 065: the workload both record
# (replay_work DEST writes it as a script: "bash DEST DIR N") and the
# events they enable, so the two layouts are compared on one workload, and
# same_events, which compares the two recordings' events.

replay_work()
{
	cat > "$1" <<'EOS'
# work.sh DIR N
d=$1 n=$2
mkdir -p "$d"
for ((i = 0; i < n; i++)); do
	: > "$d/f$i" && setfattr -n user.x -v "$(head -c 1000 /dev/zero | tr '\0' x)" "$d/f$i" || exit
done
for ((i = 0; i < n; i++)); do
	dd if=/dev/urandom of="$d/f$i" bs=4k count=4 conv=notrunc status=none || exit
done
sync
for ((i = 0; i < n; i += 2)); do
	rm "$d/f$i" || exit
done
sync
sleep 1
EOS
}

events=btrfs_done_preemptive_reclaim,btrfs_trigger_flush,btrfs_flush_space,btrfs_fail_all_tickets,btrfs_reserve_ticket,update_bytes_may_use,update_bytes_pinned,btrfs_set_extent_bit,btrfs_clear_extent_bit,btrfs_convert_extent_bit,add_delayed_ref_head,run_delayed_ref_head,add_delayed_data_ref,btrfs_space_reservation,btrfs_transaction_commit

# same_events NAME1 FILE1 NAME2 FILE2: the two recordings hold as many of
# four events of this filesystem ($fsid), and some; else the test fails
same_events()
{
	local f

	for f in "$2" "$4"; do
		grep -c "\(update_bytes_may_use\|btrfs_set_extent_bit\|add_delayed_ref_head\|btrfs_space_reservation\): $fsid:" "$f"
	done > "$TEST_TMP/counts"
	echo "events (may_use, set_extent_bit, ref heads, space_reservation): $1 $(sed -n 1p "$TEST_TMP/counts"), $3 $(sed -n 2p "$TEST_TMP/counts")"
	[ "$(sed -n 1p "$TEST_TMP/counts")" -gt 0 ] || fail "no event recorded"
	[ "$(sed -n 1p "$TEST_TMP/counts")" = "$(sed -n 2p "$TEST_TMP/counts")" ] ||
		fail "the two recordings hold different events"
}
