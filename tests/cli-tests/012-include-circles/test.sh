#!/bin/bash
# No include circle larger than the kernel's own read path (issue 25): the
# largest strongly connected component of the #include graph of
# kernel-shared/ and common/, a .c and its .h counted as one node, has at
# most 6 nodes (today: ctree, disk-io, reada, tree-checker, volumes).
# include-circles.py prints every circle; a new one that joins the read
# path is cut by moving a declaration to the header of the file that
# defines it, or a struct forward-declared where only pointers are used
# (Documentation/dev/architecture.md, "Include circles").
# First the check is shown to catch one: a planted ring of 7 fails, of 6
# passes.

source "$TEST_TOP/common" || exit

check_prereq python3

here=$(dirname "${BASH_SOURCE[0]}")
scc="$here/include-circles.py"
max=6

# plant_ring DIR N: kernel-shared/rI.c includes r(I+1).h, the last the first
plant_ring()
{
	local dir=$1 n=$2 i

	rm -rf "$dir"
	mkdir -p "$dir/kernel-shared" "$dir/common"
	for ((i = 0; i < n; i++)); do
		printf '#include "kernel-shared/r%d.h"\n' $(((i + 1) % n)) > "$dir/kernel-shared/r$i.c"
		: > "$dir/kernel-shared/r$i.h"
	done
}

plant_ring "$TEST_TMP/ring7" 7
run_mustfail "a ring of 7 nodes is a circle larger than $max" python3 "$scc" --max "$max" "$TEST_TMP/ring7"
plant_ring "$TEST_TMP/ring6" 6
run_check python3 "$scc" --max "$max" "$TEST_TMP/ring6"

out=$(python3 "$scc" --max "$max" "$TOP")
rc=$?
echo "$out"
[ "$rc" = 0 ] ||
	fail "an include circle of $(echo "$out" | sed -n 's/^largest: //p') nodes in kernel-shared/ and common/ (at most $max): $(echo "$out" | head -1)"
