# shellcheck shell=bash disable=SC2154
# Shared by the relocation kernel tests (055-relocation-replay,
# 057-relocation-raid6-conversion, 072-relocation-metadata): filesystems aged as users age them,
# each case forecast twice on a copy, run by the kernel on two fresh
# copies, and compared (formulas.md 21.9).  The sourcing test sources
# tests/common, then this file, and calls reloc_setup: the prerequisites,
# the cleanup trap and $base (the aged images' folder).
#
# make_base NAME SEED PERCENT MKFS_OPTS SIZE...: the aged images; when a
# function age_more_NAME exists it runs on the mount after the aging (a
# cancelled conversion, say).  run_case BASE 'FORECAST|ARGS' COMMAND...
# runs one case (RELOC_CASES="1 5" runs only those); reloc_done ends.
# RELOC_BOUND=1 run_case ... holds a case the forecast calls not exact to
# the bound it states: unallocated per device within may_differ (+1 MiB);
# RELOC_STRICT=1 run_case ... also to the kernel's order and outcome as if
# exact, and its metadata used after in total to max(1 MiB, 1 %) (072).

# reloc_setup: skip unless root, the tools, btrfs, a free loop device and
# the kernel log are there; the cleanup trap; $base made
reloc_setup()
{
	need_root
	check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount python3 truncate dmesg
	need_btrfs_module
	losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"
	dmesg > /dev/null 2>&1 || skip "cannot read the kernel log (dmesg)"
	setup_cleanup_trap

	base=$TEST_TMP/base
	mkdir -p "$base" || fail "mkdir"
}

# age DIR SEED PERCENT: files of mixed sizes to PERCENT of the space, then
# a random half of them deleted
age()
{
	python3 - "$1" "$2" "$3" <<'PY' || fail "aging $1"
import errno, os, random, sys
root, seed, percent = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
st = os.statvfs(root)
budget = st.f_blocks * st.f_frsize * percent // 100
sizes = [4096, 65536, 262144, 1 << 20, 3 << 20, 8 << 20, 24 << 20]
names, total, i = [], 0, 0
while total < budget:
    size = rnd.choice(sizes)
    name = os.path.join(root, "f%05d" % i)
    try:
        with open(name, "wb") as f:
            f.write(os.urandom(size))
    except OSError as e:
        # statvfs overstates the room of some profiles (RAID6 on unequal
        # devices): the filesystem is full, the aging goes on with the deletes
        if e.errno != errno.ENOSPC:
            raise
        os.unlink(name)
        print("aging: ENOSPC after %d MiB" % (total >> 20))
        break
    names.append(name)
    total += size
    i += 1
    if i % 40 == 0:
        os.sync()
os.sync()
for name in rnd.sample(names, len(names) // 2):
    os.unlink(name)
os.sync()
print("aged %s: %d files written (%d MiB), %d deleted" %
      (root, len(names), total >> 20, len(names) // 2))
PY
}

# make_base NAME SEED PERCENT MKFS_OPTS SIZE...: the aged images NAME.devN.img
make_base()
{
	local name=$1 seed=$2 percent=$3 opts=$4 i=1 devs=() imgs=() size mnt
	shift 4
	# RELOC_BASES="conv" makes only those (with RELOC_CASES of theirs)
	[ -z "${RELOC_BASES:-}" ] || [[ " $RELOC_BASES " == *" $name "* ]] || return 0
	for size in "$@"; do
		truncate -s "$size" "$base/$name.dev$i.img" || fail "truncate"
		imgs+=("$base/$name.dev$i.img")
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	run_check mkfs.btrfs -q -f $opts "${imgs[@]}"
	for i in "${imgs[@]}"; do
		devs+=("$(setup_loop "$i")") || exit
	done
	mnt=$TEST_TMP/mnt-$name
	setup_mount "${devs[0]}" "$mnt" -o "device=$(IFS=,; echo "${devs[*]}" | sed 's/,/,device=/g')"
	age "$mnt" "$seed" "$percent"
	if declare -F "age_more_$name" > /dev/null; then
		"age_more_$name" "$mnt" || fail "age_more_$name"
	fi
	run_check umount "$mnt"
	for i in "${devs[@]}"; do
		btrfs device scan --forget "$i" > /dev/null 2>&1
		losetup -d "$i" || fail "losetup -d $i"
	done
	# RELOC_KEEP=DIR keeps a copy of the aged images, to look into a case
	if [ -n "${RELOC_KEEP:-}" ]; then
		mkdir -p "$RELOC_KEEP" || fail "RELOC_KEEP: cannot make $RELOC_KEEP"
		cp --sparse=always "${imgs[@]}" "$RELOC_KEEP/" ||
			fail "RELOC_KEEP: cannot copy to $RELOC_KEEP"
	fi
}

# kernel_run NAME DIR COMMAND...: the images of base NAME copied into DIR
# (left there if present), mounted, COMMAND run with MNT and DEVn replaced;
# DIR gets rc, relocated.txt (the kernel log's order), usage.txt and
# bg-after.json (the block groups left)
kernel_run()
{
	local name=$1 dir=$2 imgs=() devs=() i mnt marker rc devname cmd=() a left=() log
	shift 2
	mkdir -p "$dir" || fail "mkdir"
	for i in "$base/$name".dev*.img; do
		[ -f "$dir/$(basename "$i")" ] || cp --sparse=always "$i" "$dir/" || fail "cp"
		imgs+=("$dir/$(basename "$i")")
	done
	for i in "${imgs[@]}"; do
		devs+=("$(setup_loop "$i")") || exit
	done
	mnt=$dir/mnt
	setup_mount "${devs[0]}" "$mnt" -o "device=$(IFS=,; echo "${devs[*]}" | sed 's/,/,device=/g')"
	# the log names the filesystem by one of its devices
	devname=$(for i in "${devs[@]}"; do printf '(device %s)\n(device %s \n' \
		"$(basename "$i")" "$(basename "$i")"; done)
	# a marker in the kernel log: the ring may be full, line counts shift
	marker="btrfs-space reloc $$ case $cases $RANDOM"
	echo "$marker" > /dev/kmsg || fail "cannot write to /dev/kmsg"
	for a in "$@"; do
		a=${a//MNT/$mnt}
		a=${a//DEV1/${devs[0]}}
		a=${a//DEV2/${devs[1]:-}}
		cmd+=("$a")
	done
	"${cmd[@]}" > "$dir/cmd.out" 2>&1
	rc=$?
	echo "$rc" > "$dir/rc"
	sync
	# btrfs's printk ratelimit (10 lines per 5 s over every btrfs
	# filesystem) drops lines on a busy machine: the relocation order is
	# then unknown ("callbacks suppressed", or a balance that ran without
	# its start or end line)
	rm -f "$dir/log-lost"
	log=$(dmesg | sed -n "/$marker/,\$p")
	if grep -q "callbacks suppressed" <<< "$log" ||
	   { [ "$rc" = 0 ] && [[ " ${cmd[*]} " == *" balance start "* ]] &&
	     ! { grep -F "$devname" <<< "$log" | grep -q "balance: start" &&
		 grep -F "$devname" <<< "$log" | grep -q "balance: ended"; }; }; then
		echo "  the kernel log lost lines (printk ratelimit): this run's relocation order is unknown"
		: > "$dir/log-lost"
	fi
	dmesg | sed -n "/$marker/,\$p" | grep -F "$devname" |
		grep -o 'relocating block group [0-9]*' | awk '{print $4}' > "$dir/relocated.txt"
	btrfs device usage -b "$mnt" > "$dir/usage.txt" || fail "btrfs device usage"
	dmesg | sed -n "/$marker/,\$p" | grep -F "$devname" | grep -iE "balance|enospc|error" |
		sed 's/^/  kernel log: /' | head -n 20
	run_check umount "$mnt"
	for i in "${devs[@]}"; do
		btrfs device scan --forget "$i" > /dev/null 2>&1
		losetup -d "$i" || fail "losetup -d $i"
	done
	# a removed device has its superblock wiped
	for i in "${imgs[@]}"; do
		[ "$(tail -c +65601 "$i" 2>/dev/null | head -c 8)" = "_BHRfS_M" ] && left+=("$i")
	done
	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "${left[@]}" \
		> "$dir/bg-after.json" || exit
	[ "$rc" = 0 ] || sed 's/^/  kernel said: /' "$dir/cmd.out" | tail -n 3
}

# compare_case CASE CMD RC DIR: the forecast of the case against the
# kernel's run in DIR (its relocation order, outcome, unallocated bytes and
# block groups after); fails on a mismatch the forecast calls exact
compare_case()
{
	python3 - "$@" "${RELOC_STRICT:-}" "${RELOC_BOUND:-}" <<'PY'
import json, re, sys
case, cmd, rc, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# RELOC_STRICT=1: order and outcome held as if exact, metadata used in total
# within max(1 MiB, 1 %), unallocated as RELOC_BOUND (21.9)
strict = sys.argv[5] == "1"
# RELOC_BOUND=1: unallocated per device within 1 MiB plus the forecast's
# own may_differ (the bound it states where it is not exact)
bound = sys.argv[6] == "1" or strict
fc = json.load(open(work + "/fc.json"))["forecast"]
what = fc.get("balance") or fc.get("shrink")
kernel_order = [int(l) for l in open(work + "/relocated.txt").read().split()]
usage, devid = {}, None
for line in open(work + "/usage.txt"):
    m = re.search(r"ID: (\d+)", line)
    if m:
        devid = m.group(1)
    m = re.match(r"\s+Unallocated:\s+(\d+)", line)
    if m and devid:
        usage[devid] = int(m.group(1))
tried = what["selected"]
started = what["started"]
ok = rc == 0
bad = []
print("case %s: %s" % (case, cmd))
print("  kernel: exit %d, relocated %d block groups: %s" % (rc, len(kernel_order), kernel_order))
print("  forecast: can_start %s, completes %s (%s), %d selected: %s, %d turned read-only: %s" %
      (what["can_start"], what["completes"], what["reason"], len(tried), tried,
       len(started), started))
print("  forecast: moved %d, %d new chunks %s, exact %s (%s)" %
      (what["moved_bytes"], len(what["new_chunks"]),
       [(c["logical"], c["length"], c["type"], c["profile"]) for c in what["new_chunks"]],
       what["exact"], what["inexact_reason"]))
# where the forecast says it cannot know an input (metadata over-commit),
# a different order or outcome is printed, not failed
miss = bad if what["exact"] or strict else []
if kernel_order != started:
    miss.append("relocation order: kernel %s, forecast %s" % (kernel_order, started))
    print("  differs: relocation order%s" % ("" if what["exact"] else " (not exact)"))
if ok != (what["can_start"] and what["completes"]):
    miss.append("outcome: kernel exit %d, forecast completes %s" % (rc, what["completes"]))
    print("  differs: outcome%s" % ("" if what["exact"] else " (not exact)"))
slack = 1 << 20
for d, want in sorted(what["unallocated_after"].items()):
    have = usage.get(d)
    if have is None:
        if want:
            bad.append("devid %s: gone, forecast unallocated %d" % (d, want))
        print("  devid %s: removed (forecast unallocated %d)" % (d, want))
        continue
    lim = slack
    if bound and not what["exact"]:
        # a shrink's forecast states no bound: 1 MiB
        lim += what.get("may_differ", {}).get(d, 0)
    elif not what["exact"]:
        # the new chunks' stripes on this device may lie elsewhere, and one chunk more or less
        lim += sum(c["stripe_size"] for c in what["new_chunks"] for s in c["stripes"]
                   if str(s["devid"]) == d) + max([c["stripe_size"] for c in what["new_chunks"]] +
                                                  [256 << 20])
    diff = have - want
    print("  devid %s: unallocated kernel %d, forecast %d (%+d, allowed %d)" %
          (d, have, want, diff, lim))
    if abs(diff) > lim:
        bad.append("devid %s: unallocated %d, forecast %d" % (d, have, want))
kernel_bgs = {b["start"]: b for b in json.load(open(work + "/bg-after.json"))["block_groups"]}
model_bgs = {b["start"]: b for b in what["block_groups_after"]}
same = 0
for start in sorted(set(kernel_bgs) | set(model_bgs)):
    k, m = kernel_bgs.get(start), model_bgs.get(start)
    # metadata used moves with the trees the operation changes: not modelled
    if k and m and k["length"] == m["length"] and (k["used"] == m["used"] or
                                                   not k["flags"] & 1):
        same += 1
        continue
    print("  block group %d: kernel %s, forecast %s" % (start,
          "length %d used %d" % (k["length"], k["used"]) if k else "none",
          "length %d used %d%s" % (m["length"], m["used"], " new" if m["new"] else "") if m else "none"))
print("  block groups after: %d of %d equal (start, length, data used)" %
      (same, len(set(kernel_bgs) | set(model_bgs))))
# metadata and system used after, group by group, and in total per type
for t, tname in ((4, "metadata"), (2, "system")):
    ks = {s: b for s, b in kernel_bgs.items() if b["flags"] & t}
    ms = {s: b for s, b in model_bgs.items() if b["flags"] & t}
    for start in sorted(set(ks) | set(ms)):
        k, m = ks.get(start), ms.get(start)
        print("  %s group %d: kernel used %s, forecast used %s%s" %
              (tname, start, k["used"] if k else "none", m["used"] if m else "none",
               " (%+d)" % (m["used"] - k["used"]) if k and m else ""))
    kt, mt = sum(b["used"] for b in ks.values()), sum(b["used"] for b in ms.values())
    lim = max(1 << 20, kt // 100)
    print("  %s used after: kernel %d, forecast %d (%+d%s)" %
          (tname, kt, mt, mt - kt, ", allowed %d" % lim if strict else ""))
    if strict and abs(mt - kt) > lim:
        bad.append("%s used after: kernel %d, forecast %d" % (tname, kt, mt))
# an extent placed in another block group than the kernel's moves bytes
# between block groups, not the chunks: printed, counted, not failed

if bad:
    print("\n".join("  MISMATCH " + x for x in bad))
    sys.exit(1)
PY
}

cases=0
failed=
# run_one_case BASE 'FORECAST|ARGS' COMMAND...: forecast on a copy (twice:
# the same output), then the command run by the kernel on two fresh copies
# (the same order, outcome and unallocated space: the kernel is
# deterministic on an image), then the forecast against the kernel
run_one_case()
{
	local name=$1 fargs=$2 work imgs=() i rc fa kernel_differs=
	shift 2
	cases=$((cases + 1))
	work=$TEST_TMP/case$cases
	mkdir -p "$work" || fail "mkdir"
	for i in "$base/$name".dev*.img; do
		cp --sparse=always "$i" "$work/" || fail "cp"
		imgs+=("$work/$(basename "$i")")
	done
	IFS='|' read -ra fa <<< "$fargs"
	run_check_stdout "$BTRFS_SPACE" --format json forecast "${fa[@]}" "${imgs[@]}" \
		> "$work/fc.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json forecast "${fa[@]}" "${imgs[@]}" \
		> "$work/fc2.json" || exit
	cmp -s "$work/fc.json" "$work/fc2.json" || fail "case $cases: two forecasts differ"
	kernel_run "$name" "$work" "$@"
	kernel_run "$name" "$work/again" "$@"
	if [ -e "$work/log-lost" ] && [ -e "$work/again/log-lost" ]; then
		echo "case $cases: skipped: the kernel log lost lines in both runs (btrfs's printk ratelimit on a busy machine), the kernel's relocation order is unknown"
		rm -f "$work"/*.img "$work"/again/*.img
		return
	fi
	# a run whose log lost lines stands in for nothing: the other is both
	if [ -e "$work/log-lost" ]; then
		cp "$work/again/"{rc,relocated.txt,usage.txt,bg-after.json} "$work/" || fail "cp"
	elif [ -e "$work/again/log-lost" ]; then
		cp "$work/"{rc,relocated.txt,usage.txt,bg-after.json} "$work/again/" || fail "cp"
	fi
	rc=$(cat "$work/rc")
	if ! cmp -s "$work/rc" "$work/again/rc" ||
	   ! cmp -s "$work/relocated.txt" "$work/again/relocated.txt" ||
	   ! diff -q <(grep Unallocated "$work/usage.txt") \
		     <(grep Unallocated "$work/again/usage.txt") > /dev/null; then
		echo "  the kernel's second run differs:"
		paste "$work/relocated.txt" "$work/again/relocated.txt" | head -n 20
		grep Unallocated "$work/usage.txt" "$work/again/usage.txt"
		kernel_differs=yes
	else
		echo "case $cases: the kernel's two runs agree (exit $rc, $(wc -l < "$work/relocated.txt") relocated)"
	fi
	if ! compare_case "$cases" "$*" "$rc" "$work"; then
		# the kernel's two runs differed (a timing race on a busy
		# machine: a block group's caching, or "relocating block group"
		# lines the kernel's printk ratelimit dropped, 10 per 5 s over
		# every btrfs filesystem): the forecast may equal the other run
		if [ -n "$kernel_differs" ] &&
		   compare_case "$cases" "$*" "$(cat "$work/again/rc")" "$work/again"; then
			echo "case $cases: the forecast equals the kernel's second run (its first run differed: not counted against the forecast)"
		else
			failed="$failed $cases"
		fi
	elif [ -n "$kernel_differs" ]; then
		echo "case $cases: the forecast equals the kernel's first run (its second run differed)"
	fi
	# a case's three copies are 1-4 GiB on the host: 18 cases kept to the
	# end filled a CI disk (36 GiB); RELOC_KEEP=DIR keeps the aged bases
	rm -f "$work"/*.img "$work"/again/*.img
}

only=${RELOC_CASES:-}
run_case()
{
	if [ -n "$only" ] && ! [[ " $only " == *" $((cases + 1)) "* ]]; then
		cases=$((cases + 1))
		return
	fi
	run_one_case "$@"
}

# reloc_done: fail when a case differed, else say how many were run
reloc_done()
{
	[ -z "$failed" ] || fail "cases$failed: the kernel differs from the forecast"
	echo "$cases cases: the kernel's relocation order, outcome and unallocated space as forecast"
}
