#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fixture-outputs.sh OUT [BTRFS_SPACE]: every output a refactor must keep,
# recorded into the folder OUT, one file a run (stdout with the exit status,
# stderr with elapsed times masked): on each image of tests/fixtures (the
# truth images, log-replay/ and traced/, several devices given together),
# inspect, mount-estimate, csum-delete --top 5, --extents 1000 --extent-size
# 128K and --file of the three files --top names first (and traced/'s /f of
# subvolume 256), each in text and JSON, plain and -v (the reads).  Run it
# with the binary before and after, then `diff -r BEFORE AFTER`.
set -u
out=${1:?usage: fixture-outputs.sh OUT [BTRFS_SPACE]}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${2:-$top/btrfs-space}")
fix=$top/tests/fixtures
mkdir -p "$out"
out=$(realpath "$out")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "$fix"/*.tar.xz "$fix"/log-replay/*.tar.xz "$fix"/traced/*.tar.xz; do
	tar -xSJf "$t" -C "$tmp"
done
cd "$tmp" || exit 1

run() {
	local tag=$1

	shift
	"$bin" "$@" >"$out/$tag.out" 2>"$tmp/err"
	echo "rc $?" >>"$out/$tag.out"
	sed -E 's/in [0-9]+\.[0-9]+ s/in T s/g' "$tmp/err" >"$out/$tag.err"
}

for img in *.img; do
	case $img in *.dev[2-9].img) continue ;; esac
	base=${img%.img}
	base=${base%.dev1}
	devs=()
	for d in "$base".img "$base".dev*.img; do
		[ -e "$d" ] && devs+=("$d")
	done
	files=$("$bin" --format json csum-delete --top 3 "${devs[@]}" 2>/dev/null |
		jq -r '.top[]?.path')
	for fmt in text json; do
		for v in "" -v; do
			t=$base.$fmt$v
			run "$t.inspect" $v --format $fmt inspect "${devs[@]}"
			run "$t.mount" $v --format $fmt mount-estimate "${devs[@]}"
			run "$t.top" $v --format $fmt csum-delete --top 5 "${devs[@]}"
			run "$t.ext" $v --format $fmt csum-delete --extents 1000 \
				--extent-size 128K "${devs[@]}"
			n=0
			for f in $files; do
				n=$((n + 1))
				run "$t.file$n" $v --format $fmt csum-delete --file "$f" "${devs[@]}"
			done
			if [ "$base" = csum-delete-partly-copied ]; then
				run "$t.filef" $v --format $fmt csum-delete --file /f --subvol 256 \
					"${devs[@]}"
			fi
		done
	done
done
echo "$(find "$out" -type f | wc -l) files in $out"
