#!/bin/bash
# First run on a fresh machine: install what is missing, configure, build,
# and show `btrfs-space inspect` on a small image shipped in the repo
# (tests/fixtures/ns16k-1g: 1 GiB, nodesize 16K, as mkfs.btrfs 6.2 makes it).
# The report's first screen (the answer) is printed again at the end, where
# it stays on the terminal after the long sections.
set -euo pipefail
cd "$(dirname "$0")"

tests/install-deps.sh
[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure
make -j"$(nproc)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xSJf tests/fixtures/ns16k-1g.tar.xz -C "$tmp"
echo "== ./btrfs-space inspect tests/fixtures/ns16k-1g.img"
./btrfs-space inspect "$tmp/ns16k-1g.img" > "$tmp/inspect.txt"
cat "$tmp/inspect.txt"
echo "== the answer (inspect's first screen, from above):"
sed '/^$/q' "$tmp/inspect.txt"
