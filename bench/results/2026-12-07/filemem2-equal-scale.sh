#!/bin/bash
# the scale image's files, before vs after: text and JSON byte for byte, -v with the timings out
img=/tmp/filemem2-img/files.img
for n in 100000 1000000 10000000; do
	for fmt in "-v" "--format json"; do
		b=$(/tmp/filemem2-base/btrfs-space-ad92ec5 $fmt csum-delete --file /f$n $img 2>&1; echo "rc=$?")
		a=$(/tmp/filemem2-base/btrfs-space-after2 $fmt csum-delete --file /f$n $img 2>&1; echo "rc=$?")
		bs=$(sed -E 's/in [0-9.]+ m?s//g' <<< "$b"); as=$(sed -E 's/in [0-9.]+ m?s//g' <<< "$a")
		r=$(grep -E "^read: [0-9]+ reads" <<< "$a" | head -1 | cut -d, -f1)
		[ "$bs" = "$as" ] && echo "files.img /f$n ${fmt:-text}: equal ${r}" || echo "files.img /f$n ${fmt:-text}: DIFFER"
	done
done
