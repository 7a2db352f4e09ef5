#!/bin/bash
# Rebuild tests/fuzz/templates/*.bfz from the truth fixtures.
#
# Each template is the part of a fixture image that "btrfs-space inspect"
# (and for some, CSUM_DELETE, "csum-delete --top 3") reads, found with
# strace: every pread64 of the runs; then the second
# superblock copy, and for some (MIRRORED) the other copies of every tree
# block read, packed by bfz-pack.  The fuzz targets embed the templates;
# the image target also takes them as its seeds.
#
# Usage: tests/fuzz/make-templates.sh [BTRFS_SPACE [FUZZ_BUILD]]
#   (defaults: ./btrfs-space and tests/fuzz/build with bfz-pack and
#   mirror-ranges built: make fuzz-templates does it all)
#   FROM=N: only the templates from index N on, the others left as they are
#   (an appended template, without touching the bytes the seeds and
#   regression inputs of the others were made on: the reads of inspect
#   change with the code, and a rebuilt template with them)
# Needs strace, tar, xz.  The order of TEMPLATES is the template index that
# seeds and regression inputs hold in their first byte: append, never
# reorder.

set -eu

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BTRFS_SPACE=${1:-$TOP/btrfs-space}
FUZZ_BUILD=${2:-$TOP/tests/fuzz/build}
OUT=$TOP/tests/fuzz/templates

# (a fixture under a folder of tests/fixtures is named with it; the
# template takes the last part: log-replay/scatter-third -> NN-scatter-third)
TEMPLATES="ns4k-1g mixed-256m bg-spread-ns4k-50 bgt-1g raid1-2dev raid10-4dev raid5-3dev
	pop-quota raid0-2dev many-bgs-1t-bgt csum-xxhash-1g log-replay/scatter-third
	fuzz/snap-shared"
# templates that also carry the second copy of each block they read
MIRRORED="ns4k-1g raid1-2dev raid10-4dev"
# templates that also carry what "csum-delete --top 3" reads (the others'
# populated fs trees would make them 2-5 times larger)
CSUM_DELETE="ns4k-1g mixed-256m bgt-1g pop-quota raid0-2dev csum-xxhash-1g"

for tool in strace tar xz; do
	command -v "$tool" > /dev/null || { echo "make-templates: $tool not found" >&2; exit 1; }
done
[ -x "$BTRFS_SPACE" ] || { echo "make-templates: build $BTRFS_SPACE first (make)" >&2; exit 1; }
for tool in bfz-pack mirror-ranges; do
	[ -x "$FUZZ_BUILD/$tool" ] ||
		{ echo "make-templates: $FUZZ_BUILD/$tool not built (make fuzz-build)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bfz-templates.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"
FROM=${FROM:-0}
[ "$FROM" -gt 0 ] || rm -f "$OUT"/*.bfz

i=0
for name in $TEMPLATES; do
	[ "$i" -ge "$FROM" ] || { i=$((i + 1)); continue; }
	dir=$work/$name
	mkdir -p "$dir"
	tar -xSJf "$TOP/tests/fixtures/$name.tar.xz" -C "$dir"
	mapfile -t imgs < <(find "$dir" -name '*.img' | LC_ALL=C sort)
	# one thread: every read is a plain pread64 of the main process
	strace -qq -y -e trace=pread64 -o "$dir/trace" \
		"$BTRFS_SPACE" --io-threads 1 inspect "${imgs[@]}" > /dev/null
	# and the fs tree that csum-delete --top walks (FZ_CSUM_DELETE)
	case " $(echo $CSUM_DELETE) " in
	*" $name "*)
		strace -qq -y -e trace=pread64 -o "$dir/trace.csum" \
			"$BTRFS_SPACE" --io-threads 1 csum-delete --top 3 "${imgs[@]}" > /dev/null
		cat "$dir/trace.csum" >> "$dir/trace"
		;;
	esac
	# pread64(3</path/x.img>, "..."..., LEN, OFF) = LEN  ->  "path OFF LEN"
	# (only the images: the dynamic loader reads libraries with pread64 too)
	sed -n -E 's/^pread64\([0-9]+<([^>]*)>, .*, ([0-9]+), ([0-9]+)\) = [0-9]+$/\1 \3 \2/p' \
		"$dir/trace" | grep -F -f <(printf '%s \n' "${imgs[@]}") > "$dir/ranges"
	case " $(echo $MIRRORED) " in
	*" $name "*)
		ASAN_OPTIONS=detect_leaks=0 "$FUZZ_BUILD/mirror-ranges" "${imgs[@]}" \
			< "$dir/ranges" > "$dir/mirrors"
		cat "$dir/mirrors" >> "$dir/ranges"
		;;
	esac
	for img in "${imgs[@]}"; do
		# superblock copy 1, for --super 1
		[ "$(stat -c %s "$img")" -lt $((64 * 1024 * 1024 + 4096)) ] ||
			echo "$img $((64 * 1024 * 1024)) 4096" >> "$dir/ranges"
	done
	out=$OUT/$(printf %02d "$i")-${name##*/}.bfz
	"$FUZZ_BUILD/bfz-pack" "$out" "${imgs[@]}" < "$dir/ranges"
	echo "$out: $(wc -l < "$dir/ranges") reads, $(stat -c %s "$out") bytes"
	i=$((i + 1))
done
