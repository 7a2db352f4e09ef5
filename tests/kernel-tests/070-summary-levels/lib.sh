# shellcheck shell=bash
# The cases of kernel tests 070 and 071 (sourced): a filesystem made at a
# fill level, inspect's levels held to the kernel's fills (check.py) and
# every remedy it prints run on a copy (check-remedy.py).  Set
# REMEDY_KINDS to a pattern of the remedy commands to run (default: all);
# the others are listed as not run; LEVELS=no runs the remedies only.
# CASES="glob ..." runs only the cases named.

# what every case needs, checked here for each test that sources this
need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount findmnt python3 truncate fallocate fstrim jq
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

shopt -s extglob
fills=$TOP/tests/kernel-tests/050-forecast-fill
here=$TOP/tests/kernel-tests/070-summary-levels
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"

data_total()
{
	cat "/sys/fs/btrfs/$(findmnt -n -o UUID "$mnt")/allocation/data/total_bytes"
}

meta_used()
{
	cat "/sys/fs/btrfs/$(findmnt -n -o UUID "$mnt")/allocation/metadata/bytes_used"
}

# mount_devs DEV...: mount the filesystem of DEV... on $mnt
mount_devs()
{
	local opts
	opts=$(printf 'device=%s,' "$@")
	setup_mount "$1" "$mnt" -o "${opts%,}"
}

# new_fs DIR SIZE MKFS_OPTION...: a fresh filesystem in DIR/dev0.img ($img),
# on a loop device ($dev), mounted on $mnt
new_fs()
{
	dir=$1
	img=$dir/dev0.img
	mkdir -p "$dir"
	truncate -s "$2" "$img" || fail "truncate"
	shift 2
	mkfs.btrfs -q -f "$@" "$img" > /dev/null 2>&1 || fail "mkfs.btrfs $*"
	dev=$(setup_loop "$img") || exit
	mount_devs "$dev"
}

# copy_until PCT: /usr/share's directories copied into $mnt until df says
# PCT % used (or a copy fails: ENOSPC)
copy_until()
{
	local src n=0
	for src in /usr/share/*/; do
		n=$((n + 1))
		cp -a "$src" "$mnt/c$n.$RANDOM" 2> /dev/null || return 0
		[ "$(df --output=pcent "$mnt" | tail -n 1 | tr -dc 0-9)" -ge "$1" ] && return 0
	done
	return 0
}

# prepare KIND: bring the mounted filesystem to its fill level
prepare()
{
	local total i
	case $1 in
	empty) ;;
	quarter | half)
		total=$(df -B1 --output=avail "$mnt" | tail -n 1)
		[ "$1" = quarter ] && total=$((total / 4)) || total=$((total / 2))
		fallocate -l "$total" "$mnt/fill" || fail "fallocate $total"
		;;
	nearly-full)
		python3 "$fills/fill.py" "$mnt" > /dev/null || fail "fill.py"
		rm -f "$mnt/f0"
		;;
	data-free)
		# data chunks everywhere, each left partly used: deleting every
		# other 1 MiB file keeps them allocated, their room data-only
		for i in $(seq 0 2000); do
			fallocate -l 1M "$mnt/d$i" 2>/dev/null || break
		done
		for i in $(seq 0 2 2000); do rm -f "$mnt/d$i"; done
		;;
	aged)
		# real files: /usr/share trees copied in to 60 % of df's size, a
		# half of the files deleted (a fixed random source), then copied
		# in again to 92 % or ENOSPC
		copy_until 60
		find "$mnt" -type f | sort |
			shuf -n "$(($(find "$mnt" -type f | wc -l) / 2))" --random-source=<(yes) |
			xargs -r -d '\n' rm -f
		sync
		copy_until 92
		;;
	nearly-full-grown)
		# as nearly-full, then the first device's file grown by 512 MiB
		# and its loop device told (a partition grown, the filesystem
		# not resized: slack); run_case's files and devs
		prepare nearly-full
		truncate -s +512M "${files[0]}" || fail "truncate"
		losetup -c "${devs[0]}" || fail "losetup -c"
		;;
	holes)
		# data filled until ENOSPC with 16 MiB files, every other one
		# of the first 16 deleted: single data with 128 MiB free in
		# its block groups, tight; a -dusage balance gives that back
		# as unallocated space, and data can write no more after it
		python3 "$fills/fill.py" "$mnt" > /dev/null || fail "fill.py"
		for i in $(seq 1 2 15); do rm -f "$mnt/f$i"; done
		;;
	meta-empty)
		# metadata grown by 22000 extended attributes of 12000 bytes
		# (a leaf each: 344 MiB, four 112 MiB chunks in DUP; short
		# of ENOSPC, whose fill may abort a transaction), deleted
		# (its chunks stay, nearly empty), then data filled until
		# ENOSPC and 16 MiB of it deleted
		mkdir "$mnt/xattrs" || fail "mkdir"
		python3 "$fills/xattr-fill.py" "$mnt/xattrs" 22000 > /dev/null || fail "xattr-fill.py"
		rm -rf "$mnt/xattrs"
		sync
		python3 "$fills/fill.py" "$mnt" > /dev/null || fail "fill.py"
		rm -f "$mnt/f0"
		;;
	meta-range | meta-fail)
		# metadata grown by extended attributes of 12000 bytes, a leaf
		# each (kernel test 077: mkfs's 102 MiB DUP group and a 208 MiB
		# one), the first files deleted (their leaves are in mkfs's
		# group), data filled until ENOSPC and some deleted.
		# meta-range: 14000, 4000 deleted (mkfs's group a third used,
		# the other 59 %), 128 MiB of data deleted; meta-fail: 12000,
		# 6000 deleted (3 % and 44 %), 16 MiB
		mkdir "$mnt/xattrs" || fail "mkdir"
		if [ "$1" = meta-range ]; then
			python3 "$fills/xattr-fill.py" "$mnt/xattrs" 14000 > /dev/null || fail "xattr-fill.py"
			rm -f "$mnt"/xattrs/x[01]
		else
			python3 "$fills/xattr-fill.py" "$mnt/xattrs" 12000 > /dev/null || fail "xattr-fill.py"
			rm -f "$mnt"/xattrs/x[012]
		fi
		sync
		python3 "$fills/fill.py" "$mnt" > /dev/null || fail "fill.py"
		if [ "$1" = meta-range ]; then rm -f "$mnt"/f[0-7]; else rm -f "$mnt/f0"; fi
		;;
	convert-limit)
		# a quarter of the space preallocated in single data, then one data
		# block group converted to RAID1 (kernel test 078): a
		# conversion not finished, single beside RAID1
		prepare quarter
		btrfs balance start -dconvert=raid1,limit=1 "$mnt" > /dev/null || fail "balance -dconvert=raid1,limit=1"
		;;
	convert-tight)
		# 1,000 MiB of data written in 64 MiB files (single), one of
		# them deleted again, then one data block group converted to
		# RAID1 (kernel test 078): the rest, twice its size in RAID1,
		# does not fit.  The deleted file leaves a single group partly
		# used whatever the order the writes filled the groups in, so
		# a usage=N conversion has a group to take (with every single
		# group full, none does, and no usage=N is advised)
		for i in $(seq 0 15); do
			head -c $(( i < 15 ? 64 : 40 ))M /dev/urandom > "$mnt/w$i" || fail "write w$i"
		done
		sync
		rm "$mnt/w7" || fail "rm w7"
		sync
		btrfs balance start -dconvert=raid1,limit=1 "$mnt" > /dev/null || fail "balance -dconvert=raid1,limit=1"
		;;
	small-files)
		# small files with an extended attribute each until ENOSPC
		# (kernel test 074): metadata takes every unallocated byte
		python3 "$TOP/tests/kernel-tests/074-metadata-enospc/small-files-fill.py" "$mnt" > /dev/null ||
			fail "small-files-fill.py"
		;;
	meta-full)
		# as data-free, then small files (inline: metadata only) until
		# ENOSPC, and a few of them deleted again
		prepare data-free
		python3 "$here/inline-fill.py" "$mnt" > /dev/null || fail "inline-fill.py"
		;;
	esac
	sync
}

# unallocated DIR DEV...: per device "devid bytes", as the tool reads them
unallocated()
{
	local dir=$1
	shift
	"$BTRFS_SPACE" --format json inspect "$@" > "$dir/after.json" || fail "inspect after a remedy"
	jq -r '.devices[] | "\(.devid) \(.unallocated)"' \
		"$dir/after.json"
}

# balance DIR CMD DEV...: the balance of the remedy command CMD (its first
# option) on $mnt, "ok" or "failed" in DIR/kernel.rc; then unmounted, the
# unallocated bytes per device of DEV... in DIR/unallocated
balance()
{
	local dir=$1 opt=${2#btrfs balance start }
	shift 2
	opt=${opt% MNT}
	# shellcheck disable=SC2086 # "-f -mconvert=single": two words
	if btrfs balance start $opt "$mnt" > "$dir/kernel.out" 2>&1; then
		echo ok > "$dir/kernel.rc"
	else
		echo failed > "$dir/kernel.rc"
	fi
	umount "$mnt" || fail "umount after balance"
	unallocated "$dir" "$@" > "$dir/unallocated"
}

# fill DIR TYPE: metadata, or else data, filled until ENOSPC in $mnt/measure
# (metadata: xattrs), the bytes it took in DIR/filled
fill()
{
	local used
	mkdir "$mnt/measure" || fail "mkdir"
	if [ "$2" = metadata ]; then
		used=$(meta_used)
		python3 "$fills/xattr-fill.py" "$mnt/measure" > /dev/null || fail "xattr-fill.py"
		sync
		echo $(($(meta_used) - used)) > "$1/filled"
	else
		python3 "$fills/fill.py" "$mnt/measure" > "$1/filled" || fail "fill.py"
	fi
}

# remedies DIR FILE...: run each remedy of DIR/inspect.json on a copy of
# FILE... and compare the kernel's result with the predicted effect
# (check-remedy.py): a balance's unallocated bytes per device after it; a
# device add's data fill (the finding's type data) or the dead device's
# unallocated bytes after a data fill
remedies()
{
	local dir=$1 n i kind cmd size f rdir rcopies rdevs dev start length off opt total t
	local id ndevs count k added
	shift
	n=$(jq '.summary.remedies | length' "$dir/inspect.json")
	for ((i = 0; i < n; i++)); do
		cmd=$(jq -r ".summary.remedies[$i].command" "$dir/inspect.json")
		kind=$(jq -r ".summary.remedies[$i].finding" "$dir/inspect.json")
		rdir=$dir/remedy$i
		if [[ ! "$cmd" == ${REMEDY_KINDS:-*} ]]; then
			echo "    remedy $i: $cmd: not run by this test"
			continue
		fi
		mkdir -p "$rdir"
		rcopies=() rdevs=()
		for f in "$@"; do
			cp --sparse=always "$f" "$f.r$i" || fail "cp"
			rcopies+=("$f.r$i")
		done
		for f in "${rcopies[@]}"; do rdevs+=("$(setup_loop "$f")") || exit; done
		mount_devs "${rdevs[@]}"
		case $cmd in
		"btrfs balance start -"[dm]"usage="*)
			# the model takes every block group as cached, as on a
			# filesystem mounted a while (formulas.md 21.8).  Right
			# after a mount only the empty groups are (read_one_block_group());
			# a partly used one is cached in the background from the
			# first allocation that visits it (find_free_extent()'s
			# LOOP_CACHING_NOWAIT), so the balance's first tree block
			# (insert_balance_item()) may skip it for the first empty
			# metadata group, which -musage=0 then leaves (3 of 4 empty
			# groups moved under load, 4 with caching done).  FITRIM
			# caches every group and waits (btrfs_trim_fs())
			if ! fstrim "$mnt" > "$rdir/fstrim.out" 2>&1; then
				umount "$mnt"
				echo "    remedy $i: $cmd: not run: fstrim failed ($(head -n 1 "$rdir/fstrim.out")), the block groups cannot be cached before the balance"
				release "${rdevs[@]}"
				rm -f "${rcopies[@]}"
				continue
			fi
			balance "$rdir" "$cmd" "${rdevs[@]}"
			# then the finding's type filled until ENOSPC: what it
			# can write after the balance (writable_after)
			mount_devs "${rdevs[@]}"
			if [ "$kind" = metadata ]; then fill "$rdir" metadata; else fill "$rdir" data; fi
			umount "$mnt" || fail "umount after the fill"
			;;
		"btrfs balance start "?(-f )"-"[dm]"convert="*)
			# the conversion (-f where it drops metadata redundancy),
			# its unallocated bytes per device, then the converted
			# type filled until ENOSPC and the unallocated bytes the
			# fill leaves (dead space)
			opt=${cmd#btrfs balance start }
			balance "$rdir" "$cmd" "${rdevs[@]}"
			mount_devs "${rdevs[@]}"
			if [[ "$opt" == *-mconvert* ]]; then fill "$rdir" metadata; else fill "$rdir" data; fi
			umount "$mnt" || fail "umount after the fill"
			unallocated "$rdir" "${rdevs[@]}" > "$rdir/unallocated.filled"
			;;
		"btrfs filesystem resize "*|"btrfs replace start "*)
			# the device grown to its loop device's size (the file
			# grown: slack), or replaced by a new device of
			# size_after and grown; then the type filled until ENOSPC
			# and the unallocated bytes per device after the fill
			id=$(jq -r ".summary.remedies[$i].effect.device" "$dir/inspect.json")
			ndevs=("${rdevs[@]}")
			echo ok > "$rdir/kernel.rc"
			if [[ "$cmd" == "btrfs replace"* ]]; then
				size=$(jq -r ".summary.remedies[$i].effect.size_after" "$dir/inspect.json")
				truncate -s "$size" "$rdir/added.img" || fail "truncate"
				dev=$(setup_loop "$rdir/added.img") || exit
				ndevs[id - 1]=$dev
				btrfs replace start -B -f "$id" "$dev" "$mnt" > "$rdir/kernel.out" 2>&1 ||
					echo failed > "$rdir/kernel.rc"
			fi
			btrfs filesystem resize "$id:max" "$mnt" >> "$rdir/kernel.out" 2>&1 ||
				echo failed > "$rdir/kernel.rc"
			fill "$rdir" "$(jq -r ".summary.remedies[$i].effect.type" "$dir/inspect.json")"
			umount "$mnt" || fail "umount after the resize"
			unallocated "$rdir" "${ndevs[@]}" > "$rdir/unallocated"
			;;
		"btrfs device add"*)
			# device_count devices of device_size (a RAID1 pool
			# whose devices are all full needs two)
			size=$(jq -r ".summary.remedies[$i].effect.device_size" "$dir/inspect.json")
			count=$(jq -r ".summary.remedies[$i].effect.device_count // 1" "$dir/inspect.json")
			added=()
			for ((k = 0; k < count; k++)); do
				truncate -s "$size" "$rdir/added$k.img" || fail "truncate"
				added+=("$(setup_loop "$rdir/added$k.img")") || exit
			done
			btrfs device add -f "${added[@]}" "$mnt" > /dev/null || fail "btrfs device add"
			echo "        added $count device(s) of $size: ${added[*]}"
			fill "$rdir" "$kind"
			umount "$mnt" || fail "umount after device add"
			unallocated "$rdir" "${rdevs[@]}" "${added[@]}" > "$rdir/unallocated"
			dev="${added[*]}"
			;;
		"delete the data in block group "*)
			# the files with an extent in the block group (logical-resolve
			# every 64 KiB of it), deleted; a balance of empty data block
			# groups removes it now (the cleaner would later); then the
			# metadata fill
			start=${cmd##* }
			length=$("$BTRFS_SPACE" --format json block-groups --list-block-groups "$@" |
				jq ".block_groups[] | select(.start == $start) | .length")
			# every 64 KiB and every extent's start (an extent smaller
			# than 64 KiB may lie between two samples)
			{
				for ((off = 0; off < length; off += 65536)); do
					echo $((start + off))
				done
				btrfs inspect-internal dump-tree -t extent "${rdevs[0]}" 2>/dev/null |
					awk -v s="$start" -v e=$((start + length)) '
					$1 == "item" && $5 == "EXTENT_ITEM" {
						b = substr($4, 2) + 0
						if (b >= s && b < e) print b
					}'
			} | sort -un | while read -r addr; do
				btrfs inspect-internal logical-resolve -o "$addr" "$mnt" 2>/dev/null
			done | sort -u > "$rdir/files"
			# the files the remedy names (backref.c) are the kernel's:
			# each path among logical-resolve's, and as many files
			# when no snapshot shares the group's extents
			jq -r --arg m "$mnt" ".summary.remedies[$i].effect.files |
				(.largest[] | \"path \\(\$m)/\\(.path)\"),
				\"count \\(.count) \\(.shared_bytes)\"" "$dir/inspect.json" |
			while read -r what a b; do
				if [ "$what" = path ] && ! grep -qxF "$a" "$rdir/files"; then
					echo "        FAIL: the remedy names $a, not among the kernel's files"
					echo "bad" >> "$rdir/files.bad"
				elif [ "$what" = count ] && [ "$b" = 0 ] &&
				     [ "$a" != "$(wc -l < "$rdir/files")" ]; then
					echo "        FAIL: the remedy counts $a files, logical-resolve $(wc -l < "$rdir/files")"
					echo "bad" >> "$rdir/files.bad"
				fi
			done
			jq -e ".summary.remedies[$i].effect.files.largest | length > 0" \
				"$dir/inspect.json" > /dev/null ||
				echo "bad: no files named" >> "$rdir/files.bad"
			[ ! -s "$rdir/files.bad" ] || failed="$failed $name:remedy$i-files"
			echo "        files: $(wc -l < "$rdir/files") by logical-resolve, the remedy: $(jq -c ".summary.remedies[$i].effect.files | [.count, .shared_bytes, [.largest[].path]]" "$dir/inspect.json")"
			# the cleaner removes the emptied group, as the remedy
			# says (btrfs_delete_unused_bgs(), woken by the
			# transaction kthread: a 1 s commit interval, polled each
			# second); a balance -dusage=0 instead fails with ENOSPC
			# on a full metadata
			total=$(data_total)
			mount -o remount,commit=1 "$mnt" || fail "remount"
			xargs -r -d '\n' rm -f < "$rdir/files"
			sync
			for ((t = 0; t < 90; t++)); do
				[ "$(data_total)" -le $((total - length)) ] && break
				sleep 1
				sync
			done
			echo "        the cleaner: data total_bytes $total before, $(data_total) after ${t} s"
			cp "$dir/metadata.filled" "$rdir/metadata.before"
			fill "$rdir" metadata
			umount "$mnt" || fail "umount after deleting"
			unallocated "$rdir" "${rdevs[@]}" > "$rdir/unallocated"
			;;
		*)
			umount "$mnt"
			echo "    remedy $i: $cmd: not run here"
			release "${rdevs[@]}"
			rm -f "${rcopies[@]}"
			continue
			;;
		esac
		python3 "$here/check-remedy.py" "$dir/inspect.json" "$i" "$rdir" ||
			failed="$failed $name:remedy$i"
		release "${rdevs[@]}" $dev
		dev=
		rm -f "${rcopies[@]}" "$rdir"/added*.img
	done
}

# release DEV...: the kernel forgets these unmounted devices, then they
# are detached (all of this test's loop devices: cleanup_all)
release()
{
	local dev
	for dev in "$@"; do
		btrfs device scan --forget "$dev" > /dev/null 2>&1
	done
	cleanup_all
}

failed=
# run_case NAME KIND "MKFS OPTIONS" SIZE...; CASES="glob ..." runs only the
# cases named
run_case()
{
	local name=$1 kind=$2 mkfs_opts=$3 dir files=() copies=() devs=() cdevs=() f used c
	shift 3
	if [ -n "${CASES:-}" ]; then
		for c in $CASES; do
			# shellcheck disable=SC2053
			[[ $name == $c ]] && break
			c=
		done
		[ -n "$c" ] || return 0
	fi
	dir=$TEST_TMP/$name
	mkdir -p "$dir"
	for f in "$@"; do
		truncate -s "$f" "$dir/dev${#files[@]}.img" || fail "$name: truncate"
		files+=("$dir/dev${#files[@]}.img")
	done
	# shellcheck disable=SC2086
	mkfs.btrfs -q -f $mkfs_opts "${files[@]}" > /dev/null 2>&1 || fail "$name: mkfs.btrfs $mkfs_opts"
	for f in "${files[@]}"; do devs+=("$(setup_loop "$f")") || exit; done
	mount_devs "${devs[@]}"
	prepare "$kind"
	# LIVE_SAME=yes: live mode (the mount point) advises what the
	# offline replay advises (its relocation cannot read the extent
	# tree: formulas.md 21.8)
	[ "${LIVE_SAME:-no}" = yes ] &&
		{ "$BTRFS_SPACE" --format json inspect "$mnt" > "$dir/live.json" || fail "$name: live inspect"; }
	umount "$mnt" || fail "$name: umount"
	"$BTRFS_SPACE" --format json inspect "${devs[@]}" > "$dir/inspect.json" || fail "$name: inspect"
	if [ "${LIVE_SAME:-no}" = yes ]; then
		local advice='[.summary.remedies[] | [.command, .advised]]'
		echo "    live remedies:    $(jq -c "$advice" "$dir/live.json")"
		echo "    offline remedies: $(jq -c "$advice" "$dir/inspect.json")"
		[ "$(jq -c "$advice" "$dir/live.json")" = "$(jq -c "$advice" "$dir/inspect.json")" ] ||
			failed="$failed $name:live-remedies"
	fi
	"$BTRFS_SPACE" inspect "${devs[@]}" | sed '/^$/q' > "$dir/screen.txt"
	echo "$name ($kind, $mkfs_opts $*):"
	sed 's/^/    | /' "$dir/screen.txt"
	# LEVELS=no: only the remedies (a case whose levels others hold)
	if [ "${LEVELS:-yes}" = no ]; then
		release "${devs[@]}"
		remedies "$dir" "${files[@]}"
		cleanup_all
		rm -f "${files[@]}"
		return
	fi
	if [ -n "${KEEP:-}" ]; then
		for f in "${files[@]}"; do
			cp --sparse=always "$f" "$f.inspected" || fail "$name: cp"
		done
	fi
	# metadata: a copy, filled with xattrs until ENOSPC.  The copy has the
	# original's fsid: the original's loop devices are forgotten by the
	# kernel and detached first, and set up again after
	for f in "${files[@]}"; do
		cp --sparse=always "$f" "$f.copy" || fail "$name: cp"
		copies+=("$f.copy")
	done
	release "${devs[@]}"
	for f in "${copies[@]}"; do cdevs+=("$(setup_loop "$f")") || exit; done
	mount_devs "${cdevs[@]}"
	used=$(meta_used)
	mkdir "$mnt/measure" || fail "$name: mkdir"
	python3 "$fills/xattr-fill.py" "$mnt/measure" > /dev/null || fail "$name: xattr-fill.py"
	sync
	echo $(($(meta_used) - used)) > "$dir/metadata.filled"
	umount "$mnt" || fail "$name: umount copy"
	release "${cdevs[@]}"
	# each remedy advised for a type or dead space, on a copy of its own
	remedies "$dir" "${files[@]}"
	# data: the original, fallocate until ENOSPC (in a directory of its own:
	# fill.py's file names may be taken by the preparation)
	devs=()
	for f in "${files[@]}"; do devs+=("$(setup_loop "$f")") || exit; done
	mount_devs "${devs[@]}"
	mkdir "$mnt/measure" || fail "$name: mkdir"
	python3 "$fills/fill.py" "$mnt/measure" > "$dir/data.filled" || fail "$name: fill.py"
	umount "$mnt" || fail "$name: umount"
	python3 "$here/check.py" "$dir/inspect.json" "$(cat "$dir/data.filled")" \
		"$(cat "$dir/metadata.filled")" || failed="$failed $name"
	cleanup_all
	# KEEP=DIR: a failed case's images as inspected (copied before the data
	# fill changed them) and its remedies' outputs, in DIR/NAME.PID
	if [ -n "${KEEP:-}" ] && [[ " $failed " == *" $name"[:\ ]* ]]; then
		mkdir -p "$KEEP/$name.$$" &&
			cp -a --sparse=always "${copies[@]/%.copy/.inspected}" "$dir"/inspect.json "$dir"/remedy* "$KEEP/$name.$$/" &&
			echo "    kept in $KEEP/$name.$$"
	fi
	rm -f "${copies[@]/%.copy/.inspected}"
	rm -f "${copies[@]}" "${files[@]}"
}

