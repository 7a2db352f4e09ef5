#!/bin/bash
# workload.sh MNT LOG: fill with 32 MiB files to ENOSPC, delete half, refill, delete all
mnt=$1 log=$2
ts() { date +%s.%N | cut -c1-14; }
fill() {
	local i=$1
	while :; do
		if ! dd if=/dev/urandom of="$mnt/f$i" bs=1M count=32 status=none 2>>"$log.err"; then
			echo "$(ts) ENOSPC at f$i ($(stat -c %s "$mnt/f$i") bytes written)" >> "$log"; return
		fi
		i=$((i+1)); sleep 0.5
	done
}
echo "$(ts) start fill" >> "$log"; fill 0
sleep 20; echo "$(ts) idle after ENOSPC done" >> "$log"
rm -f "$mnt"/f[0-9] "$mnt"/f1[0-4]; sync; echo "$(ts) deleted f0-f14 + sync" >> "$log"
sleep 20; echo "$(ts) start refill" >> "$log"; fill 100
sleep 20; rm -f "$mnt"/f*; sync; echo "$(ts) deleted all + sync" >> "$log"
sleep 30; echo "$(ts) end" >> "$log"
