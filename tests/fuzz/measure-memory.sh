#!/bin/bash
# Peak memory (maximum RSS) and time of "btrfs-space inspect" over image
# folders, for the resource bounds of Documentation/dev/fuzzing.md.
#
# Usage: tests/fuzz/measure-memory.sh [DIR...]    (default: /tmp/corpus /tmp/truth)
#   BTRFS_SPACE=./btrfs-space  the binary (a normal build, no sanitizers)
#   TIMEOUT=60                 seconds per image
#
# Each regular file is one image; a folder holding test.img is that image;
# NAME.devN.img files are read together as one filesystem.  Prints one line
# per image (exit status, max RSS KiB, seconds, name), then the largest.
# Needs GNU time (/usr/bin/time, Debian package "time").

set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$TOP/btrfs-space}
TIMEOUT=${TIMEOUT:-60}
[ -x /usr/bin/time ] || { echo "measure-memory: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
[ -x "$BTRFS_SPACE" ] || { echo "measure-memory: $BTRFS_SPACE not built" >&2; exit 2; }
[ $# -gt 0 ] || set -- /tmp/corpus /tmp/truth

out=$(mktemp)
trap 'rm -f "$out" "$out.time"' EXIT
max_rss=0
max_name=
nr=0
printf '%-5s %10s %8s  %s\n' exit maxrss_KiB seconds image
for dir in "$@"; do
	declare -A groups=()
	for f in "$dir"/*; do
		if [ -d "$f" ]; then
			[ -f "$f/test.img" ] && groups[$f]=$f/test.img
		elif [ -f "$f" ]; then
			case "$f" in
			*.dev[0-9]*.img) key=${f%.dev[0-9]*.img}; groups[$key]="${groups[$key]:-} $f" ;;
			*.img|*.raw|*.bin) groups[$f]=$f ;;
			esac
		fi
	done
	for key in $(printf '%s\n' "${!groups[@]}" | LC_ALL=C sort); do
		# word splitting of the device list is intended
		# shellcheck disable=SC2086
		timeout "$TIMEOUT" /usr/bin/time -f '%x %M %e' -o "$out.time" \
			"$BTRFS_SPACE" inspect ${groups[$key]} > /dev/null 2> "$out"
		rc=$?
		read -r _ rss secs < <(tail -1 "$out.time" 2>/dev/null || echo "- 0 0")
		[ "$rc" -le 1 ] || echo "    !! exit $rc: $(head -1 "$out")"
		printf '%-5s %10s %8s  %s\n' "$rc" "$rss" "$secs" "$(basename "$key")"
		nr=$((nr + 1))
		if [ "${rss:-0}" -gt "$max_rss" ]; then
			max_rss=$rss
			max_name=$(basename "$key")
		fi
	done
	unset groups
done
echo "$nr images; largest max RSS: $max_rss KiB ($max_name)"
