#!/bin/bash
# startpairs.sh ROUNDS N CMD... : interleaved perf stat -r N of each command (one argument each, word-split)
R=$1; N=$2; shift 2
for r in $(seq $R); do
  line="load $(cut -d' ' -f1 /proc/loadavg)"
  for c in "$@"; do
    o=$(perf stat -x, -r $N -e task-clock,page-faults $c 2>&1 >/dev/null)
    t=$(echo "$o" | grep task-clock | cut -d, -f1); f=$(echo "$o" | grep page-faults | cut -d, -f1)
    line="$line | $t $f"
  done
  echo "$line"
done
