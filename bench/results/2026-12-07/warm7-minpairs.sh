#!/bin/bash
# minpairs.sh IMG N A B: N alternating single runs of each binary's warm
# --format json inspect under perf stat -e task-clock (ABBA order); prints
# min, p10, p25 and median of each, in ms
IMG=$1; N=$2; A=$3; B=$4
one() { perf stat -x, -e task-clock $1 --format json inspect $IMG 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
: > a.t; : > b.t
for i in $(seq $N); do
	if [ $((i % 2)) = 1 ]; then one $A >> a.t; one $B >> b.t; else one $B >> b.t; one $A >> a.t; fi
done
for f in a.t b.t; do sort -g $f | awk -v f=$f '{v[NR]=$1} END {printf "%s n %d min %.3f p10 %.3f p25 %.3f median %.3f\n", f, NR, v[1], v[int(NR/10)+1], v[int(NR/4)+1], v[int((NR+1)/2)]}'; done
