#!/bin/bash
# Kernel versions live in one place (issue 25): KERNEL_VERSION( appears in no
# .c or .h of the tree but kernel-shared/kernel-version.[ch], which hold every
# version the tool knows as a model field or a named constant, and the unit
# test of them (tests/unit/test-kernel-version.c). A new use elsewhere fails
# here, naming each file and line; move the version into kernel-version.c.
# First the check is shown to catch one: a copy of the tree's file list with
# a planted use must fail.

source "$TEST_TOP/common" || exit

allowed='^(kernel-shared/kernel-version\.[ch]|tests/unit/test-kernel-version\.c)$'

# versions_outside DIR: print file:line:text of each KERNEL_VERSION( use under
# DIR outside the allowed files
versions_outside()
{
	local dir=$1 f

	(cd "$dir" && find . -name '*.[ch]' -not -path './.git/*' | sed 's|^\./||' | sort) |
	while read -r f; do
		[[ "$f" =~ $allowed ]] && continue
		grep -Hn 'KERNEL_VERSION(' "$dir/$f" | sed "s|^$dir/||"
	done
}

# the check catches a planted use
plant="$TEST_TMP/plant"
mkdir -p "$plant/cmds" "$plant/kernel-shared"
printf 'u32 v = KERNEL_VERSION(6, 1, 0);\n' > "$plant/cmds/planted.c"
printf '#define V KERNEL_VERSION(5, 15, 0)\n' > "$plant/kernel-shared/kernel-version.h"
found=$(versions_outside "$plant")
[ "$found" = "cmds/planted.c:1:u32 v = KERNEL_VERSION(6, 1, 0);" ] ||
	fail "the check did not catch exactly the planted use: '$found'"

found=$(versions_outside "$TOP")
if [ -n "$found" ]; then
	echo "$found"
	fail "KERNEL_VERSION( outside kernel-shared/kernel-version.[ch]: $(echo "$found" | wc -l) use(s); name them in kernel-version.c"
fi
[ -f "$TOP/kernel-shared/kernel-version.c" ] && grep -q 'KERNEL_VERSION(' "$TOP/kernel-shared/kernel-version.c" ||
	fail "kernel-shared/kernel-version.c not found or holds no KERNEL_VERSION(: wrong tree?"
exit 0
