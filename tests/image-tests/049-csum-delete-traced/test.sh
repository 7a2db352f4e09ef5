#!/bin/bash
# csum-delete --file on images whose deletion the kernel was traced doing
# (tests/fixtures/traced: each NAME.trace.json holds the command and the
# figures kernel test 040's replay of the delayed-ref and reservation
# tracepoints gave on Linux 6.18): every traced figure must equal the
# tool's.  Kernel test 040 makes such images afresh and checks them on the
# running kernel, but their layout differs from run to run; these keep a
# layout that once told the model apart from the kernel.  Needs no mount.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar

failures=0
checked=0
for trace in "$TEST_TOP"/fixtures/traced/*.trace.json; do
	name=$(basename "$trace" .trace.json)
	tar -xSJf "$TEST_TOP/fixtures/traced/$name.tar.xz" -C "$TEST_TMP" ||
		fail "cannot unpack $name.tar.xz"
	mapfile -t cmd < <(jq -r '.command[]' "$trace")
	img=$TEST_TMP/$(jq -r .image "$trace")
	out=$("$BTRFS_SPACE" --format json "${cmd[@]}" "$img") ||
		fail "$name: btrfs-space ${cmd[*]} failed"
	got=$(jq -c '.csum_delete | {total, tree_refs, peak, reserved, commit_tree_refs}
		+ {subvol_copies: $cow.blocks}' --argjson cow "$(jq -c .cow <<< "$out")" <<< "$out")
	want=$(jq -c '.traced' "$trace")
	checked=$((checked + 1))
	if [ "$(jq -S . <<< "$got")" = "$(jq -S . <<< "$want")" ]; then
		echo "match $name $got"
	else
		echo "MISMATCH $name: traced $want, tool $got"
		failures=$((failures + 1))
	fi
	rm -f "$img"
done
[ "$checked" -gt 0 ] || fail "no traced fixture in $TEST_TOP/fixtures/traced"
echo "$checked traced image(s), $failures differ"
[ "$failures" -eq 0 ] || fail "$failures traced image(s) differ from the kernel's figures"
