#!/bin/bash
# sametreat.sh IMG READSET ROUNDS TOOL: each round runs the tool's warm
# --format json inspect, readset-limit with one pass and /bin/true, each a
# fresh process under its own perf stat (task-clock ms, page faults), no mount
IMG=$1; RS=$2; R=$3; TOOL=$4
tc() { perf stat -x, -e task-clock,page-faults "$@" 2>&1 >/dev/null | grep -E 'task-clock|faults' | cut -d, -f1 | tr '\n' ' '; }
for i in $(seq $R); do echo "$(tc $TOOL --format json inspect $IMG)| $(tc ./readset-limit $IMG $RS 1)| $(tc /bin/true)| load $(cut -d' ' -f1 /proc/loadavg)"; done
