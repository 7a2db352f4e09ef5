#!/bin/bash
# csmem equal outputs: BEFORE vs AFTER on the fixture images (tests/fixtures, unpacked
# into FIX), the fresh images of filemem-mkimgs.sh (FRESH) with csmem-equal.sh (a copy of
# filemem2-equal.sh), and the scale image's files (IMG) in text with -v (timings out) and JSON
B=$1 A=$2 FIX=${FIX:-/tmp/csmem-fix} FRESH=${FRESH:-/tmp/csmem-fresh} IMG=${IMG:-/tmp/csmem-img/files.img}
here=$(dirname "$0")
specs=()
for d in "$FIX"/*/; do
	imgs=$(ls "$d"*.img | sort | paste -sd+)
	specs+=("$imgs")
done
echo "## fixtures"
"$here/csmem-equal.sh" "$B" "$A" "${specs[@]}" | sed "s|$FIX/||g"
echo "## fresh images"
"$here/csmem-equal.sh" "$B" "$A" "$FRESH"/fresh-*.img | sed "s|$FRESH/||g"
echo "## scale image"
for n in ${SCALE:-100000 1000000 10000000}; do
	for fmt in "-v" "--format json"; do
		b=$("$B" $fmt csum-delete --file /f$n "$IMG" 2>&1; echo "rc=$?")
		a=$("$A" $fmt csum-delete --file /f$n "$IMG" 2>&1; echo "rc=$?")
		bs=$(sed -E 's/in [0-9.]+ m?s//g' <<< "$b"); as=$(sed -E 's/in [0-9.]+ m?s//g' <<< "$a")
		r=$(grep -E "^read: [0-9]+ reads" <<< "$a" | head -1 | cut -d, -f1)
		[ "$bs" = "$as" ] && echo "files.img /f$n ${fmt:-text}: equal ${r}" || echo "files.img /f$n ${fmt:-text}: DIFFER"
	done
done
