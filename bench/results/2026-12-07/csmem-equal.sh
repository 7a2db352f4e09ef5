#!/bin/bash
# equal.sh BEFORE AFTER DEVSPEC...: csum-delete --top 10 of subvolumes 5, 256-263 and
# --file of every file they list, text, -v (timing lines out) and JSON, before vs after
B=$1 A=$2; shift 2
n=0 bad=0
run() { # bin args...
	local bin=$1; shift
	"$bin" "$@" 2>&1; echo "rc=$?"
}
cmp_one() {
	local label=$1; shift
	local ob oa
	ob=$(run "$B" "$@" | sed -E 's/in [0-9.]+ m?s//g'); oa=$(run "$A" "$@" | sed -E 's/in [0-9.]+ m?s//g')
	n=$((n + 1))
	if [ "$ob" != "$oa" ]; then bad=$((bad + 1)); echo "DIFF $label: $*"; fi
}
for spec in "$@"; do
	devs=${spec//+/ }
	for sv in 5 256 257 258 259 260 261 262 263; do
		top=$("$A" --format json csum-delete --top 10 --subvol $sv $devs 2>/dev/null) || continue
		cmp_one "$spec top $sv" csum-delete --top 10 --subvol $sv $devs
		cmp_one "$spec top $sv json" --format json csum-delete --top 10 --subvol $sv $devs
		for p in $(jq -r '.top[].path' <<< "$top" 2>/dev/null); do
			for fmt in "" "-v" "--format json"; do
				cmp_one "$spec $sv $p $fmt" $fmt csum-delete --file "$p" --subvol $sv $devs
			done
			reads=$("$A" -v csum-delete --file "$p" --subvol $sv $devs 2>&1 | grep -E "^read: [0-9]+ reads" | head -1)
			echo "$spec sv $sv $p: $reads"
		done
	done
done
echo "compared $n outputs, $bad differ"
