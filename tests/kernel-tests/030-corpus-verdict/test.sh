#!/bin/bash
# The kernel is the referee: every image of $SHARED/corpus that is not a
# fuzz-tests__* image (those are made to crash kernels and are never
# mounted), and every multi-device group of catalog.jsonl (all members
# together, each on its own loop device), is unpacked into $TEST_TMP, read
# with "inspect --format json" on the pristine unpacked file(s), then a
# sparse copy is mounted -o ro on read-write loop devices (the kernel may
# write even so: log replay) under a timeout. Recorded from the kernel: did
# it mount, its first BTRFS error line after a marker written to /dev/kmsg
# (device names normalised to DEV), and after a mount every space info of
# /sys/fs/btrfs/<fsid>/allocation/ and global_rsv_size. Compared:
#  * verdict: the tool exits 0 <=> the kernel mounts;
#  * message: where both refuse, the tool's ERROR line (image paths as DEV)
#    contains the kernel's message text after its "BTRFS critical (device
#    DEV): ", "BTRFS error (device DEV): ", "BTRFS error: " prefix; for the
#    btrfs_handle_fs_error form "BTRFS: error (device DEV) in FUNC:LINE:
#    errno=-N text", the tool's line must contain "errno=-N text" and FUNC;
#  * space: where both mount, every field of every space info (total_bytes,
#    bytes_used, bytes_readonly, bytes_zone_unusable, bytes_may_use,
#    bytes_pinned, bytes_reserved, disk_total, disk_used, chunk_size, flags)
#    and global_rsv_size equal sysfs, and the same space infos exist.
# known-gaps.txt lists today's disagreements, "NAME KIND REASON" (KIND
# verdict|message|space; NAME an image or group:ID). The test fails on a
# disagreement not listed or listed with another kind, on a listed image
# that now agrees (a stale entry: remove it), on a tool crash or timeout, a
# mount that hangs, a tool that changes its input, and on any trouble
# reading sysfs or unmounting.
# As information only, what this kernel did (mounted, first error line,
# allocation/, whether it wrote the copy: log replay) is compared with what
# kernel-verdict.jsonl recorded on another machine.
# CORPUS_ONLY=REGEX limits the run to matching names (debugging; the
# known-gaps checks then apply to what was run).
# Prints one line per image/group and the figure "corpus verdict: N
# images+groups, exit agrees on A, messages agree on M of R refused, space
# info exact on E of K mounted".

source "$TEST_TOP/common" || exit

corpus=$SHARED/corpus
catalog=$corpus/catalog.jsonl
recorded=$corpus/kernel-verdict.jsonl
gaps_file=$TEST_TOP/kernel-tests/030-corpus-verdict/known-gaps.txt
[ -d "$corpus" ] || skip_no_shared "image corpus" "$corpus"
[ -f "$catalog" ] || skip_no_shared "image corpus catalog" "$catalog"
[ -f "$gaps_file" ] || fail "missing $gaps_file"
need_root
check_prereq btrfs-space
check_prereq jq xz tar od cp timeout losetup mount umount mountpoint dmesg btrfs btrfs-image
need_btrfs_module
[ -w /dev/kmsg ] || skip "cannot write a marker to /dev/kmsg (run as root)"
dmesg > /dev/null 2>&1 || skip "cannot read the kernel log (dmesg): run as root, or set sysctl kernel.dmesg_restrict=0"

TOOL_TIMEOUT=${TOOL_TIMEOUT:-60}
[ -z "$INSTRUMENT" ] || TOOL_TIMEOUT=$((TOOL_TIMEOUT * 5))
MOUNT_TIMEOUT=${MOUNT_TIMEOUT:-60}
# stop (and fail) before the runner's 900 s timeout would kill us unexplained
BUDGET=${CORPUS_BUDGET:-780}
REPORT_RE='AddressSanitizer|LeakSanitizer|MemorySanitizer|UndefinedBehaviorSanitizer|runtime error:|==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Mismatched free|Source and destination overlap)'
FIELDS="total_bytes bytes_used bytes_readonly bytes_zone_unusable bytes_may_use
	bytes_pinned bytes_reserved disk_total disk_used chunk_size flags"
START=$SECONDS

work=$TEST_TMP/corpus
mkdir -p "$work" || fail "cannot create $work"

# --- known gaps ----------------------------------------------------------------

declare -A GAP_KIND GAP_WHY SEEN
while read -r name kind reason; do
	case "$name" in ''|'#'*) continue ;; esac
	case "$kind" in
	verdict|message|space) ;;
	*) fail "known-gaps.txt: $name: kind '$kind' is not verdict, message or space" ;;
	esac
	[ -n "$reason" ] || fail "known-gaps.txt: no reason given for $name"
	[ -z "${GAP_KIND[$name]+set}" ] || fail "known-gaps.txt: $name listed twice"
	GAP_KIND[$name]=$kind
	GAP_WHY[$name]=$reason
done < "$gaps_file"

# --- what the other machine's kernel did (information only) ----------------------

declare -A REC
if [ -f "$recorded" ]; then
	# key: image name, or "group:" + the members joined by spaces
	jq -r '[ (if .kind == "group" then "group:" + (.members | join(" "))
		  else .name end), tojson ] | @tsv' "$recorded" > "$work/recorded.tsv" ||
		fail "cannot read $recorded"
	while IFS=$'\t' read -r key json; do
		REC[$key]=$json
	done < "$work/recorded.tsv"
fi

# --- helpers -------------------------------------------------------------------

# normalise_kernel DEV...: stdin lines with our devices' names as DEV
normalise_kernel()
{
	local args=() d n
	for d in "$@"; do
		n=$(basename "$d")
		args+=(-e "s#/dev/$n([^0-9]|\$)#DEV\\1#g" -e "s#\\(device $n([ )])#(device DEV\\1#g")
	done
	sed -E "${args[@]}"
}

# kernel_errors MARKER DEV...: the BTRFS error lines logged since MARKER,
# normalised; a line naming another device is another engineer's mount and
# is left out (a line naming no device is kept)
kernel_errors()
{
	local marker=$1 d n l re=""
	shift
	for d in "$@"; do
		n=$(basename "$d")
		re="$re|\\(device ${n}[ )]|/dev/$n([^0-9]|\$)"
	done
	re=${re#|}
	dmesg --notime 2> /dev/null | sed -n "/$marker/,\$p" |
		grep -E '^BTRFS (emergency|alert|critical|error)( \(device [^)]*\))?: |^BTRFS: error \(device [^)]*\) in ' |
		while IFS= read -r l; do
			if [[ $l =~ $re ]] || ! [[ $l =~ \(device\ |/dev/ ]]; then
				printf '%s\n' "$l"
			fi
		done | normalise_kernel "$@"
}

# kernel_log MARKER DEV...: every kernel line since MARKER naming DEV...
kernel_log()
{
	local marker=$1 d n re=""
	shift
	for d in "$@"; do
		n=$(basename "$d")
		re="$re|\\(device ${n}[ )]|/dev/$n([^0-9]|\$)|^ *$n: "
	done
	dmesg --notime 2> /dev/null | sed -n "/$marker/,\$p" | grep -E "${re#|}" |
		normalise_kernel "$@"
}

# message_text LINE: the kernel's message without its prefix; for the
# btrfs_handle_fs_error form prints "FUNC<TAB>errno=... text"
message_text()
{
	local l=$1
	if [[ $l =~ ^BTRFS:\ error\ \(device\ [^\)]*\)\ in\ ([A-Za-z0-9_]+):[0-9]+:\ (.*)$ ]]; then
		printf '%s\t%s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
	elif [[ $l =~ ^BTRFS\ [a-z]+\ \(device\ [^\)]*\):\ (.*)$ ]]; then
		printf '\t%s\n' "${BASH_REMATCH[1]}"
	elif [[ $l =~ ^BTRFS\ [a-z]+:\ (.*)$ ]]; then
		printf '\t%s\n' "${BASH_REMATCH[1]}"
	else
		printf '\t%s\n' "$l"
	fi
}

# contains_text LINE TEXT: LINE contains TEXT as a whole (not followed or
# preceded by a letter, digit or underscore: "expect 15018" is not in
# "expect 150180")
contains_text()
{
	local rest=$1 text=$2 pre post
	[ -n "$text" ] || return 1
	while [[ $rest == *"$text"* ]]; do
		pre=${rest%%"$text"*}
		post=${rest#*"$text"}
		if ! [[ ${pre: -1} =~ [A-Za-z0-9_] ]] && ! [[ ${post:0:1} =~ [A-Za-z0-9_] ]]; then
			return 0
		fi
		rest=$post
	done
	return 1
}

# mount_said FILE MNT DEV...: the first line mount(8) printed, the mount
# point as MNT, the devices as DEV
mount_said()
{
	local f=$1 mnt=$2 l
	shift 2
	l=$(grep -m1 -v '^[[:space:]]*$' "$f" | normalise_kernel "$@")
	l=${l//"$mnt"/MNT}
	printf '%s\n' "${l:0:160}"
}

# digest FILE: sha256 of the data regions, hole map, size and mtime (GNU tar
# with SEEK_DATA/SEEK_HOLE: a restored dump is a sparse file of up to 3 TB)
digest()
{
	local sum
	sum=$(timeout 120 tar -cS --hole-detection=seek -f - -C "$(dirname "$1")" \
		"$(basename "$1")" 2> /dev/null | sha256sum) || sum=unavailable
	echo "${sum%% *} $(stat -c '%s %y' "$1")"
}

# digests FILE...: one line of digest FILE per file
digests()
{
	local f
	for f in "$@"; do
		digest "$f"
	done
}

# read_allocation DIR: sysfs allocation/ as {"space_info": {type: {...}},
# "global_rsv_size": N}
read_allocation()
{
	local dir=$1 t f v
	{
		for t in "$dir"/*/; do
			t=${t%/}
			[ -f "$t/flags" ] || continue
			for f in $FIELDS; do
				v=$(cat "$t/$f" 2> /dev/null) || v=missing
				printf '%s\t%s\t%s\n' "$(basename "$t")" "$f" "$v"
			done
		done
		v=$(cat "$dir/global_rsv_size" 2> /dev/null) || v=missing
		printf 'global_rsv_size\t-\t%s\n' "$v"
	} | jq -R -n 'reduce (inputs | split("\t")) as [$t, $f, $v] ({space_info: {}};
		($v | tonumber? // $v) as $n |
		if $t == "global_rsv_size" then .global_rsv_size = $n
		else .space_info[$t][$f] = $n end)'
}

# differences between the kernel's allocation and the tool's JSON, one line each
# shellcheck disable=SC2016 # a jq program, not shell
space_diff_jq='
$k[0] as $k | $t[0] as $t | ($fields | split(" ") | map(select(. != ""))) as $fl |
(([$k.space_info | keys[]] + [$t.space_info // {} | keys[]]) | unique[]) as $ty |
if ($t.space_info[$ty] == null) then "\($ty): kernel has it, tool not"
elif ($k.space_info[$ty] == null) then "\($ty): tool has it, kernel not"
else ($fl[] as $f | if $k.space_info[$ty][$f] != $t.space_info[$ty][$f]
	then "\($ty).\($f) kernel=\($k.space_info[$ty][$f]) tool=\($t.space_info[$ty][$f])"
	else empty end) end,
(if $k.global_rsv_size != $t.global_rsv_size
 then "global_rsv_size kernel=\($k.global_rsv_size) tool=\($t.global_rsv_size)" else empty end)'

# detach DEV...: forget and detach our loop devices
detach()
{
	local d
	for d in "$@"; do
		btrfs device scan --forget "$d" > /dev/null 2>&1
		losetup -d "$d" 2> /dev/null || echo "    note: cannot detach $d"
	done
}

# do_umount DIR: unmount, retrying while busy; 0 when no longer mounted
do_umount()
{
	local i
	for i in 1 2 3 4 5; do
		mountpoint -q "$1" || return 0
		umount "$1" 2> /dev/null && return 0
		sleep 1
	done
	! mountpoint -q "$1"
}

# --- one image or group ------------------------------------------------------------

units=0
attached_any=
exit_agree=0
refused_both=0
refused_nomsg=0
msg_agree=0
mounted_both=0
space_exact=0
failures=()
disagree_new=()
stale=()
kind_changed=()
rec_diffs=0
rec_same=0

# run_unit NAME SRC...: NAME is the image name or group:ID
run_unit()
{
	local name=$1
	shift
	local dir=$work/unit.$units src raw i n dev devs=() raws=() copies=()
	local tool_rc tool_err kernel_mounted=no kern_first kern_text kern_func
	local mnt_rc marker opts fsdir kind="" detail="" msg line t0=$SECONDS tries pid deadline verdicts
	units=$((units + 1))
	SEEN[$name]=1

	for src in "$@"; do
		case "$(basename "$src")" in
		fuzz-tests__*) fail "refusing to mount a fuzz-tests image: $src" ;;
		esac
	done

	# unpack: the pristine file(s) the tool reads
	mkdir -p "$dir/pristine" "$dir/copy" "$dir/mnt" || fail "cannot create $dir"
	# (members of a group are unpacked once, for the image and the group)
	i=0
	for src in "$@"; do
		local base cache=
		base=$(basename "$src")
		[ -z "${MEMBER[$base]+set}" ] || cache=$work/members/$base
		if [ -n "$cache" ] && [ -s "$cache.list" ]; then
			raw=$(cat "$cache.list")
		elif ! raw=$(unpack_image "$src" "${cache:-$dir/pristine/$i}" 2> "$dir/unpack.err"); then
			echo "FAIL  $name: cannot unpack $base: $(tail -n 1 "$dir/unpack.err")"
			failures+=("$name")
			rm -rf -- "$dir"
			return
		elif [ -n "$cache" ]; then
			printf '%s\n' "$raw" > "$cache.list"
		fi
		mapfile -t -O "${#raws[@]}" raws <<< "$raw"
		i=$((i + 1))
	done

	# the tool, on the pristine files, before anything is mounted
	local before wrote=no
	before=$(digests "${raws[@]}")
	# word splitting of INSTRUMENT is intended
	# shellcheck disable=SC2086
	timeout -k 5 "$TOOL_TIMEOUT" $INSTRUMENT "$BTRFS_SPACE" inspect --format json "${raws[@]}" \
		< /dev/null > "$dir/tool.json" 2> "$dir/tool.err"
	tool_rc=$?
	# (ASan exits 1 too: a report is a crash, never a refusal)
	if grep -q -E "$REPORT_RE" "$dir/tool.err"; then
		echo "FAIL  $name: sanitizer or valgrind report from the tool (exit $tool_rc): $(grep -m1 -E "$REPORT_RE" "$dir/tool.err" | cut -c1-160)"
		failures+=("$name")
		rm -rf -- "$dir"
		return
	fi
	if [ "$(digests "${raws[@]}")" != "$before" ]; then
		echo "FAIL  $name: the tool changed its input file(s)"
		failures+=("$name")
		rm -rf -- "$dir"
		return
	fi
	[ "$tool_rc" != 1 ] || [ "$(grep -c '' "$dir/tool.err")" = 1 ] ||
		echo "      note: $name: the tool printed $(grep -c '' "$dir/tool.err") lines on stderr, not one"
	tool_err=$(grep -m1 '^ERROR: ' "$dir/tool.err")
	[ -n "$tool_err" ] || tool_err=$(grep -m1 -v '^[[:space:]]*$' "$dir/tool.err")
	for raw in "${raws[@]}"; do
		tool_err=${tool_err//"$raw"/DEV}
	done
	tool_err=$(printf '%s' "$tool_err" | cut -c1-400)

	# a sparse copy of each on its own read-write loop device (never -r: a
	# read-only device makes every block group read-only)
	i=0
	for raw in "${raws[@]}"; do
		cp --sparse=always "$raw" "$dir/copy/$i.raw" || fail "cannot copy $raw"
		copies+=("$dir/copy/$i.raw")
		i=$((i + 1))
	done
	for raw in "${copies[@]}"; do
		if ! dev=$(losetup -f --show "$raw" 2> "$dir/losetup.err"); then
			detach "${devs[@]}"
			[ -n "$attached_any" ] || skip "cannot attach a loop device: $(tail -n 1 "$dir/losetup.err")"
			echo "FAIL  $name: cannot attach a loop device: $(tail -n 1 "$dir/losetup.err")"
			failures+=("$name")
			rm -rf -- "$dir"
			return
		fi
		register_loop "$dev"
		attached_any=yes
		devs+=("$dev")
	done
	before=$(digests "${copies[@]}")
	opts=ro
	if [ "${#devs[@]}" -gt 1 ]; then
		for dev in "${devs[@]}"; do
			opts="$opts,device=$dev"
		done
	fi

	# the mount, under a timeout, in the background so that a mount stuck
	# in the kernel cannot stop the test; retried when the same filesystem
	# is mounted elsewhere on this machine (another engineer's test)
	register_mount "$dir/mnt"
	for tries in 1 2 3; do
		marker="btrfs-space-030-corpus-verdict-$$-$units-$tries-$RANDOM"
		echo "$marker" > /dev/kmsg
		timeout -k 5 "$MOUNT_TIMEOUT" mount -t btrfs -o "$opts" "${devs[0]}" "$dir/mnt" \
			< /dev/null > "$dir/mount.log" 2>&1 &
		pid=$!
		deadline=$((SECONDS + MOUNT_TIMEOUT + 15))
		while kill -0 "$pid" 2> /dev/null && [ "$SECONDS" -lt "$deadline" ]; do
			sleep 0.2
		done
		if kill -0 "$pid" 2> /dev/null; then
			echo "FAIL  $name: mount did not return after $((SECONDS - t0)) s (stuck in the kernel)"
			failures+=("$name")
			return
		fi
		wait "$pid"
		mnt_rc=$?
		if [ "$mnt_rc" = 124 ] || [ "$mnt_rc" = 137 ]; then
			echo "FAIL  $name: mount timed out after ${MOUNT_TIMEOUT} s (killed)"
			kernel_log "$marker" "${devs[@]}" | head -n 5 | sed 's/^/    kernel: /'
			failures+=("$name")
			do_umount "$dir/mnt"
			detach "${devs[@]}"
			rm -rf -- "$dir"
			return
		fi
		[ "$mnt_rc" != 0 ] || break
		kernel_log "$marker" "${devs[@]}" |
			grep -q -E 'and the fs is already mounted|duplicate device' || break
		echo "    note: $name: the filesystem is mounted elsewhere on this machine, retrying"
		sleep 5
	done
	if ! dmesg 2> /dev/null | grep -q -F "$marker"; then
		echo "FAIL  $name: the kernel log lost the marker written before the mount (ring buffer overrun?)"
		failures+=("$name")
	fi
	kern_first=$(kernel_errors "$marker" "${devs[@]}" | head -n 1 | cut -c1-400)

	if [ "$mnt_rc" = 0 ] && mountpoint -q "$dir/mnt"; then
		kernel_mounted=yes
		n=$(basename "${devs[0]}")
		fsdir=
		for i in /sys/fs/btrfs/*/devices/"$n"; do
			[ -e "$i" ] && fsdir=${i%/devices/*}
		done
		if [ -z "$fsdir" ] || [ ! -d "$fsdir/allocation" ]; then
			echo "FAIL  $name: mounted, but no /sys/fs/btrfs/*/devices/$n"
			failures+=("$name")
		else
			read_allocation "$fsdir/allocation" > "$dir/kernel.json" ||
				{ echo "FAIL  $name: cannot read $fsdir/allocation"; failures+=("$name"); }
		fi
		if ! do_umount "$dir/mnt"; then
			echo "FAIL  $name: cannot unmount $dir/mnt"
			failures+=("$name")
		fi
	fi
	detach "${devs[@]}"
	[ "$(digests "${copies[@]}")" = "$before" ] || wrote=yes

	# --- compare ---
	case "$tool_rc" in
	0|1) ;;
	*)	echo "FAIL  $name: the tool exited $tool_rc (crash or timeout): $tool_err"
		failures+=("$name")
		rm -rf -- "$dir"
		return
		;;
	esac
	if [ "$kernel_mounted" = yes ] && [ ! -s "$dir/kernel.json" ]; then
		rm -rf -- "$dir"
		return
	fi

	if [ "$kernel_mounted" = yes ] && [ "$tool_rc" = 0 ]; then
		exit_agree=$((exit_agree + 1))
		mounted_both=$((mounted_both + 1))
		detail=$(jq -n -r --arg fields "$FIELDS" --slurpfile k "$dir/kernel.json" \
			--slurpfile t "$dir/tool.json" "$space_diff_jq" 2>&1)
		if [ -z "$detail" ]; then
			space_exact=$((space_exact + 1))
			line="both mount, space info exact"
		else
			kind=space
			line="both mount, space info differs: $(echo "$detail" | paste -s -d ';' | sed 's/;/; /g')"
		fi
	elif [ "$kernel_mounted" = no ] && [ "$tool_rc" = 1 ]; then
		exit_agree=$((exit_agree + 1))
		if [ -z "$kern_first" ]; then
			refused_nomsg=$((refused_nomsg + 1))
			line="both refuse (the kernel printed no BTRFS error: $(mount_said "$dir/mount.log" "$dir/mnt" "${devs[@]}")); tool: $tool_err"
		else
			refused_both=$((refused_both + 1))
			msg=$(message_text "$kern_first")
			kern_func=${msg%%$'\t'*}
			kern_text=${msg#*$'\t'}
			if contains_text "$tool_err" "$kern_text" &&
			   { [ -z "$kern_func" ] || contains_text "$tool_err" "$kern_func"; }; then
				msg_agree=$((msg_agree + 1))
				line="both refuse, same check: ${kern_func:+$kern_func: }$kern_text"
			else
				kind=message
				line="both refuse, another message: kernel: $kern_first | tool: $tool_err"
			fi
		fi
	else
		kind=verdict
		if [ "$kernel_mounted" = yes ]; then
			line="kernel mounts, tool refuses: $tool_err"
		else
			line="kernel refuses (${kern_first:-no BTRFS error line: $(mount_said "$dir/mount.log" "$dir/mnt" "${devs[@]}")}), tool exits 0"
		fi
	fi

	if [ -z "$kind" ]; then
		if [ -n "${GAP_KIND[$name]+set}" ]; then
			echo "STALE $name: $line (known-gaps.txt lists a ${GAP_KIND[$name]} gap: remove it)"
			stale+=("$name")
		else
			echo "ok    $name: $line"
		fi
	elif [ "${GAP_KIND[$name]:-}" = "$kind" ]; then
		echo "GAP   $name ($kind, known: ${GAP_WHY[$name]}): $line"
	elif [ -n "${GAP_KIND[$name]+set}" ]; then
		echo "FAIL  $name ($kind, but known-gaps.txt lists a ${GAP_KIND[$name]} gap): $line"
		kind_changed+=("$name")
	else
		echo "FAIL  $name ($kind): $line"
		disagree_new+=("$name")
	fi
	verdicts="kernel $([ "$kernel_mounted" = yes ] && echo mounted || echo refused)"
	[ "$wrote" = no ] || verdicts="$verdicts and wrote the copy"
	verdicts="$verdicts, tool exit $tool_rc"
	echo "      ($verdicts; $((SECONDS - t0)) s)"

	# --- information: the recorded verdict of the other machine ---
	local key=$name rec
	[ "${name#group:}" = "$name" ] || key="group:$GROUP_MEMBERS"
	rec=${REC[$key]:-}
	if [ -n "$rec" ]; then
		local rdiff
		rdiff=$(jq -n -r --argjson r "$rec" --arg mounted "$kernel_mounted" \
			--arg first "$kern_first" --arg fields "$FIELDS" --arg wrote "$wrote" \
			--slurpfile k <( [ -s "$dir/kernel.json" ] && cat "$dir/kernel.json" || echo '{}' ) '
			($fields | split(" ") | map(select(. != ""))) as $fl |
			(if ($r.kernel.mounted | tostring) != ($mounted == "yes" | tostring)
			 then "mounted: recorded \($r.kernel.mounted), here \($mounted == "yes")" else empty end),
			(if $r.kernel_wrote_image != null and ($r.kernel_wrote_image | tostring) != ($wrote == "yes" | tostring)
			 then "wrote the image: recorded \($r.kernel_wrote_image), here \($wrote == "yes")" else empty end),
			(if ($r.kernel.first_error // "") != $first
			 then "first error: recorded \"\($r.kernel.first_error // "")\", here \"\($first)\"" else empty end),
			(if $mounted == "yes" and $r.kernel.allocation then
				($r.kernel.allocation | to_entries[] | .key as $key | .value as $v |
				 ($key | split("/")) as $p |
				 if $key == "global_rsv_size" then
					(if $k[0].global_rsv_size != $v then "global_rsv_size: recorded \($v), here \($k[0].global_rsv_size)" else empty end)
				 elif ($p | length) == 2 and ($fl | index($p[1])) != null then
					(if $k[0].space_info[$p[0]][$p[1]] != $v then "\($p[0]).\($p[1]): recorded \($v), here \($k[0].space_info[$p[0]][$p[1]])" else empty end)
				 else empty end)
			 else empty end)' 2>&1)
		if [ -n "$rdiff" ]; then
			rec_diffs=$((rec_diffs + 1))
			echo "      note: this kernel differs from kernel-verdict.jsonl: $(echo "$rdiff" | paste -s -d ';' | sed 's/;/; /g')"
		else
			rec_same=$((rec_same + 1))
		fi
	fi
	rm -rf -- "$dir"
}

# --- the images ----------------------------------------------------------------

declare -A MEMBER
while read -r m; do
	[ -n "$m" ] && MEMBER[$m]=1
done < <(jq -r 'select(.device_group) | .device_group.members[]' "$catalog" | LC_ALL=C sort -u)
mkdir -p "$work/members" || fail "cannot create $work/members"

mapfile -t files < <(cd "$corpus" && find . -maxdepth 1 -type f \
	! -name 'fuzz-tests__*' ! -name '*.jsonl' ! -name '*.md' ! -name '*.sh' ! -name '*.txt' |
	sed 's#^\./##' | LC_ALL=C sort)
if [ -n "${CORPUS_ONLY:-}" ]; then
	mapfile -t files < <(printf "%s\n" "${files[@]}" | grep -E -- "$CORPUS_ONLY")
fi
[ ${#files[@]} -gt 0 ] || fail "no images in $corpus"

echo "kernel $(uname -r); tool $BTRFS_SPACE; mount timeout ${MOUNT_TIMEOUT} s, tool timeout ${TOOL_TIMEOUT} s"
out_of_time=
GROUP_MEMBERS=
for name in "${files[@]}"; do
	if [ $((SECONDS - START)) -ge "$BUDGET" ]; then
		out_of_time=$name
		break
	fi
	run_unit "$name" "$corpus/$name"
done

# --- multi-device groups: all members together -----------------------------------

if [ -z "$out_of_time" ]; then
	while IFS=$'\t' read -r gid members; do
		[ -n "$gid" ] || continue
		if [ -n "${CORPUS_ONLY:-}" ] && ! grep -q -E -- "$CORPUS_ONLY" <<< "group:$gid $members"; then
			continue
		fi
		srcs=()
		missing=
		for m in $members; do
			case "$m" in
			fuzz-tests__*) missing="$missing $m(fuzz image, never mounted)" ;;
			*) [ -f "$corpus/$m" ] && srcs+=("$corpus/$m") || missing="$missing $m" ;;
			esac
		done
		if [ -n "$missing" ]; then
			echo "note: group:$gid not run, members missing:$missing"
			continue
		fi
		if [ $((SECONDS - START)) -ge "$BUDGET" ]; then
			out_of_time=group:$gid
			break
		fi
		GROUP_MEMBERS=$members
		run_unit "group:$gid" "${srcs[@]}"
	done < <(jq -r 'select(.device_group) | [.device_group.id,
		(.device_group.members | join(" "))] | @tsv' "$catalog" | LC_ALL=C sort -u)
fi

rm -rf -- "$work/members"

# --- known gaps not seen ---------------------------------------------------------

for name in "${!GAP_KIND[@]}"; do
	[ -z "${SEEN[$name]+set}" ] || continue
	if [ -n "${CORPUS_ONLY:-}" ] || [ -n "$out_of_time" ]; then
		continue
	fi
	echo "note: $name (known-gaps.txt) is not in this corpus"
done

elapsed=$((SECONDS - START))
echo "corpus verdict: $units images+groups, exit agrees on $exit_agree, messages agree on $msg_agree of $refused_both refused, space info exact on $space_exact of $mounted_both mounted"
echo "(refused by both without a kernel BTRFS error line, not counted in the messages: $refused_nomsg; known gaps listed: ${#GAP_KIND[@]}; run time ${elapsed} s)"
[ -f "$recorded" ] &&
	echo "kernel-verdict.jsonl (information): this kernel did the same on $rec_same, differently on $rec_diffs"

problems=
[ -z "$out_of_time" ] || problems="$problems; out of time (${BUDGET} s) before $out_of_time"
[ ${#failures[@]} = 0 ] || problems="$problems; failed: ${failures[*]}"
[ ${#disagree_new[@]} = 0 ] || problems="$problems; disagreements not in known-gaps.txt: ${disagree_new[*]}"
[ ${#kind_changed[@]} = 0 ] || problems="$problems; known-gaps.txt lists another kind for: ${kind_changed[*]}"
[ ${#stale[@]} = 0 ] || problems="$problems; stale known-gaps.txt entries (now agree, remove them): ${stale[*]}"
[ -z "$problems" ] || fail "${problems#; }"
exit 0
