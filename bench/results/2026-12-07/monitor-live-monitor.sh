#!/bin/bash
# monitor.sh MNT OUT: every 2 s, the tool's level and headroom next to sysfs
mnt=$1 out=$2
uuid=$(findmnt -no UUID "$mnt")
a=/sys/fs/btrfs/$uuid/allocation
echo "t level dlevel mlevel nagios_rc data_headroom meta_headroom d_total d_used d_may_use d_pinned d_reserved m_total m_used m_may_use m_pinned m_reserved unalloc" > "$out"
while [ -e "$mnt"/../run ]; do
	t=$(date +%s.%N | cut -c1-14)
	j=$(btrfs-space inspect --format json "$mnt" 2>/dev/null)
	btrfs-space inspect --format nagios "$mnt" >/dev/null 2>&1; rc=$?
	s=$(jq -r '[.summary.level, .summary.space.data.level, .summary.space.metadata.level, .summary.space.data.headroom.bytes, .summary.space.metadata.headroom.bytes] | join(" ")' <<< "$j")
	set -- $s
	echo "$t $1 $2 $3 $rc $4 $5 $(cat $a/data/{total_bytes,bytes_used,bytes_may_use,bytes_pinned,bytes_reserved} $a/metadata/{total_bytes,bytes_used,bytes_may_use,bytes_pinned,bytes_reserved} | tr '\n' ' ') $(jq -r .summary.unallocated.bytes <<< "$j")" >> "$out"
	sleep 2
done
