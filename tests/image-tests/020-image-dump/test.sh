#!/bin/bash
# btrfs-image dumps read directly: dumps made here of fixture images (items
# plain and zlib-compressed) and every dump in $SHARED/corpus when it is
# there (found by its magic bytes, also inside xz) must give the same "chunks",
# "block-groups" and "inspect" JSON, and the same exit status, as the image
# "btrfs-image -r" restores from it.  Path names and I/O counters may
# differ.  Prints "equal NAME" or "DIFFER NAME command ..." per dump.
# With QUICK=1 (make check-quick) every fixture dump but only every sixth
# corpus dump in name order (8 of the 48, plain and xz, good and broken);
# make check reads them all.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq btrfs-image jq xz tar od timeout cmp

DUMP_MAGIC=8b669572e2255cbd
XZ_MAGIC=fd377a585a00

magic_of()
{
	case "$(od -An -tx1 -N 6 "$1" | tr -d ' \n')" in
	"$XZ_MAGIC") xz -dc "$1" 2>/dev/null | head -c 8 | od -An -tx1 | tr -d ' \n' ;;
	*) od -An -tx1 -N 8 "$1" | tr -d ' \n' ;;
	esac
}

# restore SRC OUT: btrfs-image -r of a dump, or of the dump inside an xz
restore()
{
	local src=$1 out=$2 plain=$TEST_TMP/plain.img rc
	if [ "$(od -An -tx1 -N 6 "$src" | tr -d ' \n')" = "$XZ_MAGIC" ]; then
		xz -dc "$src" > "$plain" || return 1
		src=$plain
	fi
	timeout 120 btrfs-image -r "$src" "$out" > /dev/null 2>&1
	rc=$?
	rm -f "$plain"
	return $rc
}

# run_json OUT CMD FILE: btrfs-space --format json CMD FILE, normalized
# into OUT; prints the exit status
run_json()
{
	local out=$1 cmd=$2 file=$3 rc
	_bs_cmd timeout 60 "$BTRFS_SPACE" --format json "$cmd" "$file"
	"${_BS_CMD[@]}" > "$out.raw" 2> "$out.err"
	rc=$?
	if _bs_has_report "$out.err" || { [ $rc -ge 124 ] && [ $rc != 255 ]; }; then
		cat "$out.err" >&2
		fail "btrfs-space $cmd $file: crashed, hung or sanitizer report (exit status $rc)"
	fi
	if [ -s "$out.raw" ]; then
		jq -S 'walk(if type == "object" then del(.path) | del(.io) else . end)' \
			"$out.raw" > "$out" 2>/dev/null || cp "$out.raw" "$out"
	else
		: > "$out"
	fi
	echo $rc
}

total=0
equal=0
differ=0

# compare_dump DUMP: the dump read directly against its restoration
compare_dump()
{
	local f=$1 name raw restore_rc rc rc_d rc_r ok cmd
	name=$(basename "$f")
	total=$((total + 1))
	raw=$TEST_TMP/restored.raw
	rm -f "$raw"
	restore "$f" "$raw"
	restore_rc=$?
	if [ ! -f "$raw" ]; then
		# nothing restored: reading the dump must fail as well
		rc=$(run_json "$TEST_TMP/d" chunks "$f")
		if [ "$rc" = 0 ]; then
			echo "DIFFER $name: btrfs-image -r failed ($restore_rc), reading the dump did not"
			differ=$((differ + 1))
		else
			echo "equal $name (neither restores)"
			equal=$((equal + 1))
		fi
		return
	fi
	ok=1
	for cmd in chunks block-groups inspect; do
		rc_d=$(run_json "$TEST_TMP/d" "$cmd" "$f")
		rc_r=$(run_json "$TEST_TMP/r" "$cmd" "$raw")
		# an error record names the file read: the same name for both
		sed -i "s|$f|@input@|g" "$TEST_TMP/d"
		sed -i "s|$raw|@input@|g" "$TEST_TMP/r"
		if [ "$rc_d" != "$rc_r" ]; then
			echo "DIFFER $name $cmd: exit status dump=$rc_d restored=$rc_r"
			sed 's/^/    dump: /' "$TEST_TMP/d.err" | head -3
			sed 's/^/    restored: /' "$TEST_TMP/r.err" | head -3
			ok=0
		elif ! cmp -s "$TEST_TMP/d" "$TEST_TMP/r"; then
			echo "DIFFER $name $cmd: output"
			diff "$TEST_TMP/d" "$TEST_TMP/r" | head -10
			ok=0
		fi
	done
	rm -f "$raw"
	if [ $ok = 1 ]; then
		echo "equal $name (exit status $rc_d)"
		equal=$((equal + 1))
	else
		differ=$((differ + 1))
	fi
}

# dumps made here from fixture images, items plain and zlib-compressed
for fixture in size-256m mixed-256m bgt-1g csum-xxhash-1g; do
	archive=$TEST_TOP/fixtures/$fixture.tar.xz
	[ -f "$archive" ] || continue
	rm -rf "$TEST_TMP/fixture"
	img=$(unpack_image "$archive" "$TEST_TMP/fixture") || exit
	for level in 0 9; do
		dump=$TEST_TMP/$fixture-c$level.img
		run_check btrfs-image -c "$level" "$img" "$dump"
		compare_dump "$dump"
		rm -f "$dump"
	done
	rm -rf "$TEST_TMP/fixture"
done

# the dumps of the corpus
if [ -d "$SHARED/corpus" ]; then
	stride=1
	[ -n "${QUICK:-}" ] && stride=6
	seen=0
	for f in "$SHARED"/corpus/*; do
		[ -f "$f" ] || continue
		[ "$(magic_of "$f")" = "$DUMP_MAGIC" ] || continue
		seen=$((seen + 1))
		[ $(((seen - 1) % stride)) = 0 ] || continue
		compare_dump "$f"
	done
	[ "$stride" = 1 ] || echo "QUICK=1: every ${stride}th of the $seen corpus dumps; make check reads all"
else
	echo "no \$SHARED/corpus ($SHARED): only dumps of the fixtures"
fi

[ $total -gt 0 ] || skip "no btrfs-image dump to test (btrfs-image makes them: tests/install-deps.sh, or apt-get install btrfs-progs)"
echo "$equal of $total btrfs-image dumps read the same as their restorations"
[ $differ = 0 ] || fail "$differ of $total dumps differ from their restorations"
exit 0
