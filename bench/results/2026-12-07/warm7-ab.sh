#!/bin/bash
# ab.sh IMG ROUNDS N A B: ABBA-interleaved perf stat -r N of two binaries' warm
# --format json inspect; prints task-clock ms and page faults of each, then
# the median of the per-round ratios B / A
IMG=$1; R=$2; N=$3; A=$4; B=$5
one() { perf stat -x, -r $N -e task-clock,page-faults $1 --format json inspect $IMG 2>&1 >/dev/null | grep -E 'task-clock|page-faults' | cut -d, -f1 | tr '\n' ' '; }
for r in $(seq $R); do
  if [ $((r % 2)) = 1 ]; then a=$(one $A); b=$(one $B); else b=$(one $B); a=$(one $A); fi
  echo "load $(cut -d' ' -f1 /proc/loadavg) | A $a| B $b"
done | tee /dev/stderr | awk -F'|' '{split($2,a," "); split($3,b," "); print a[2], b[2], b[2]/a[2]}' |
  sort -k3 -g | awk '{r[NR]=$3; x[NR]=$1; y[NR]=$2} END {print "median B/A", r[int((NR+1)/2)]}'
