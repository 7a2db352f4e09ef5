#!/bin/bash
# quiet-machine scale series: series.sh OUTPREFIX  (BTRFS_SPACE= binary)
D=${DIR:-/tmp/quiet-bench}	# what bench/scale.sh --build DIR made
S=$(cd "$(dirname "$0")/../.." && pwd)/scale.sh
out=$1
pts() { local p=$1; for n in 1000 3000 10000 30000 100000; do printf -- '--point %s=%s ' $n "$D/$p-$n-1.img+$D/$p-$n-2.img+$D/$p-$n-3.img"; done; }
args=()
for c in inspect forecast chunks block-groups mount-estimate map global-rsv; do
	args+=(--series "full: $c" --cmd "$c" $(pts bgs))
done
for c in inspect forecast; do
	args+=(--series "empty: $c" --cmd "$c" $(pts empty))
done
args+=(--series "30%: inspect" --cmd inspect $(pts part))
args+=(--series "30%: reclaim" --cmd "forecast --periodic-reclaim data --reclaim-threshold data=50" $(pts part))
fp=""; for n in 10000 30000 100000 300000 1000000; do fp="$fp --point $n=$D/files.img"; done
args+=(--series "files: csum-delete --file" --cmd 'csum-delete --file /f{x}' $fp)
args+=(--series "files: csum-delete --top 10" --cmd 'csum-delete --top 10' --point 1=$D/files.img)
p4=$(ls $D/pool4-*.img | paste -sd+); p16=$(ls $D/pool16-*.img | paste -sd+)
for c in inspect forecast; do
	args+=(--series "pools: $c" --cmd "$c" --point 60=$p4 --point 240=$p16)
done
"$S" --repeat 5 --tsv "$out.tsv" "${args[@]}" > "$out.md" 2>&1
