#!/bin/bash
# csmem-pairs.sh BEFORE AFTER IMG ROUNDS N...: csum-delete --file /fN of the scale image,
# before and after interleaved (the order swapped every round), one line a run:
# N, binary, round, CPU s (user + system, from wait4()), max RSS KB, blocks read (-v), load
B=$1 A=$2 IMG=$3 R=$4; shift 4
one() { # label bin n round
	local out rss
	out=$(python3 -c '
import os, re, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read().decode()
_, status, ru = os.wait4(p.pid, 0)
reads = [l.split()[1] for l in err.splitlines() if re.match(r"read: [0-9]+ reads,", l)]
print("%.3f %d %s" % (ru.ru_utime + ru.ru_stime, ru.ru_maxrss, reads[0] if reads else "-"))
' "$2" -v csum-delete --file /f$3 "$IMG")
	echo "$3 $1 $4 $out $(cut -d' ' -f1 /proc/loadavg)"
}
echo "# n binary round cpu_s rss_kb reads load1"
for n in "$@"; do
	for r in $(seq "$R"); do
		if [ $((r % 2)) = 1 ]; then one before "$B" "$n" "$r"; one after "$A" "$n" "$r"
		else one after "$A" "$n" "$r"; one before "$B" "$n" "$r"; fi
	done
done
