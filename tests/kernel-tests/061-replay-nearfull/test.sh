#!/bin/bash
# "btrfs-space replay" on a small filesystem filled with metadata, recorded
# with contrib/btrfs-space-capture.sh (a private tracefs instance, its own
# name) on an image this test makes:
#
# A. the 1 GiB xattr variant and part 4 live: 1 GiB, XATTR_WORKERS (default
#    2) writers of empty files with a 1000-byte xattr for XATTR_SECONDS
#    (default 20), until the replay sees over-commits (at most 3 rounds).
#    Every over-commit the replay counts must lie within the room it computes
#    (none beyond), and the kernel's own decision shows in the trace: a
#    reservation that took may_use past total_bytes without a ticket
#    (btrfs_reserve_ticket of another task for that size) was granted by
#    btrfs_can_overcommit(), so at least one is direct. Every recorded
#    btrfs_done_preemptive_reclaim state is a kernel no-flush: >= 99.5 %
#    agreement, every disagreement explained.
# B. the nearly-full run and the seed's case: the same filesystem filled with
#    data (fallocate) until no chunk space is left, then with xattr files
#    until ENOSPC; a copy of the image is taken (unmounted), and writers that
#    delete a file at each ENOSPC are recorded for FULL_SECONDS (default 8).
#    6.18 never finds preemptive flushing needed there, so it records no
#    state: the reservation points are weighed on the copy's state (the
#    replay's image anchor) with bytes_may_use followed exactly. The kernel
#    triggered at none, 5.15 and 6.18 flush at none, 5.12 at N > 0 points,
#    and only_5_12 = N.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs losetup mount umount mountpoint jq truncate fallocate findmnt python3 cp
need_btrfs_module
need_tracefs

: "${XATTR_WORKERS:=2}"
: "${XATTR_SECONDS:=12}"
: "${FULL_SECONDS:=4}"

need_capture
setup_cleanup_trap

new_btrfs_mount 1G nf

# record RESET EVENTS OUT COMMAND...: the capture; events lost on a busy
# machine: RESET, once more with a buffer sized from the first try, then skip
record()
{
	local reset=$1 events=$2 out=$3
	shift 3
	capture_retry "${RECORD_KB:-16384}" "$out" "$reset" -e "$events" "$mnt" "$@"
	[ -s "$out" ] || fail "empty trace $out"
}

# reset_a: a new filesystem for A's next capture. Over-commit needs
# unallocated space: a capture that lost events or a round without an
# over-commit has filled metadata, and a retry on that filesystem would only
# see tickets (on a busy machine all three rounds did)
reset_a()
{
	umount "$mnt" &&
		mkfs.btrfs -q -f "$dev" > "$TEST_TMP/mkfs.log" 2>&1 &&
		setup_mount "$dev" "$mnt" -t btrfs -o rw
}

# reset_b: the filesystem back to the copy B weighs the trace on
reset_b()
{
	umount "$mnt" &&
		dd if="$TEST_TMP/pre.img" of="$dev" bs=1M conv=fsync status=none &&
		setup_mount "$dev" "$mnt" -t btrfs -o rw
}

cat > "$TEST_TMP/fill.py" <<'EOS'
# fill.py DIR SECONDS WORKERS MODE: WORKERS processes create empty files with
# a 1000-byte xattr for SECONDS. MODE "stop": a worker ends at its first
# ENOSPC; "churn": at each ENOSPC it deletes its oldest file (those of an
# earlier run in DIR first) and goes on; "data": one more process writes
# files of 64 KiB (buffered, never synced; DIR/data/d0..d63, rewritten in
# place when they exist), so delalloc is there while metadata is full. With SYSFS (/sys/fs/btrfs/FSID) and MARGIN, "stop" also
# ends when the metadata left free besides the global reserve, or besides
# 2 % of the metadata's total_bytes, is below MARGIN bytes.
import errno, os, sys, time
d, secs, workers, mode = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sysfs, margin = (sys.argv[5], int(sys.argv[6])) if len(sys.argv) > 6 else (None, 0)
val = b"x" * 1000
def meta_free():
    def rd(name):
        with open(os.path.join(sysfs, "allocation", name)) as f:
            return int(f.read())
    total = rd("metadata/total_bytes")
    free = total - rd("metadata/bytes_used") - rd("metadata/bytes_reserved")
    # 5.12's need_preemptive_reclaim() gives up when used + reserved reach
    # 98 % of total ("just plain full"): stay MARGIN above that too, however
    # large part A left the metadata chunks
    return min(free - rd("global_rsv_size"), free - total * 2 // 100)
def work(w):
    top = os.path.join(d, "w%d" % w)
    os.makedirs(top, exist_ok=True)
    made = [os.path.join(top, f) for f in os.listdir(top)]
    made.sort(key=lambda p: int(p.rsplit("f", 1)[1]))
    end = time.time() + secs
    i = int(made[-1].rsplit("f", 1)[1]) + 1 if made else 0
    while time.time() < end:
        p = os.path.join(top, "f%d" % i)
        i += 1
        if sysfs and mode == "stop" and i % 20 == 0 and meta_free() < margin:
            return
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644))
            os.setxattr(p, "user.pad", val)
            made.append(p)
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            if mode == "stop":
                return
            if made:
                try:
                    os.unlink(made.pop(0))
                except OSError:
                    pass
def data():
    top = os.path.join(d, "data")
    os.makedirs(top, exist_ok=True)
    end, i, buf = time.time() + secs, 0, b"\1" * 65536
    written = failed = 0
    while time.time() < end:
        p = os.path.join(top, "d%d" % (i % 64))
        i += 1
        try:
            # an existing file rewritten in place: a create needs more
            # metadata than a full filesystem has, a rewrite only delalloc's
            with open(p, "r+b" if os.path.exists(p) else "wb") as f:
                f.write(buf)
            written += 1
        except OSError as e:
            if e.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            failed += 1
    # what the test checks before it weighs the trace: no write, no delalloc
    # (outside the full filesystem: a create there fails)
    with open(os.environ["DATA_COUNT"], "w") as f:
        f.write("%d %d\n" % (written, failed))
pids = []
if mode == "data":
    mode = "churn"
    pid = os.fork()
    if pid == 0:
        try:
            data()
            os._exit(0)
        except Exception as e:
            print("data writer: %s" % e, file=sys.stderr)
            os._exit(1)
    pids.append(pid)
for w in range(workers):
    pid = os.fork()
    if pid == 0:
        try:
            work(w)
            os._exit(0)
        except Exception as e:
            print("worker %d: %s" % (w, e), file=sys.stderr)
            os._exit(1)
    pids.append(pid)
rc = 0
for pid in pids:
    rc |= os.waitpid(pid, 0)[1]
sys.exit(1 if rc else 0)
EOS

extent_events=btrfs_set_extent_bit,btrfs_clear_extent_bit,btrfs_convert_extent_bit
ev_p14=btrfs_done_preemptive_reclaim,btrfs_trigger_flush,btrfs_flush_space,btrfs_fail_all_tickets,btrfs_reserve_ticket,update_bytes_may_use,update_bytes_pinned

# --- A ------------------------------------------------------------------------------

for round in 1 2 3; do
	echo "A: $XATTR_WORKERS xattr writers for $XATTR_SECONDS s on 1 GiB (round $round)"
	# a round lost to a busy machine is one more round, on a new filesystem
	[ "$round" = 1 ] || reset_a || fail "A: cannot make a new filesystem for round $round"
	record reset_a "$ev_p14" "$TEST_TMP/a.trace" python3 "$TEST_TMP/fill.py" "$mnt/a$round" \
		"$XATTR_SECONDS" "$XATTR_WORKERS" stop
	out=$(run_check_stdout "$BTRFS_SPACE" --format json replay "$TEST_TMP/a.trace") || exit
	[ "$(jq .overcommit.overcommits <<< "$out")" -gt 0 ] && break
	echo "A: no over-commit yet: $(jq -c '.overcommit | del(.kernels, .beyond)' <<< "$out")"
done
jq -r '.overcommit | "A: \(.rises) rises, \(.overcommits) over-commits (\(.within_flush_all) within FLUSH_ALL, \(.within_other_modes) within the other modes, \(.beyond_room) beyond), \(.direct) direct, \(.ticket_grants) to tickets, \(.tickets) tickets; most \(.max_over) bytes past total_bytes; per kernel: \([.kernels[] | "\(.kernel) \(.allowed) (zoned \(.zoned_allowed))"] | join(", "))"' <<< "$out"
oc=$(jq .overcommit.overcommits <<< "$out")
[ "$oc" -gt 0 ] || fail "A: no over-commit in 3 rounds"
expect "A over-commits beyond the computed room" "$(jq .overcommit.beyond_room <<< "$out")" 0
[ "$(jq .overcommit.direct <<< "$out")" -gt 0 ] ||
	fail "A: no over-commit granted without a ticket"
states=$(jq .preempt.states <<< "$out")
jq -r '.preempt | "A: \(.states) states, \(.agree) agree, unexplained \(.unexplained); points \(.reservations.points // 0), \(.reservations.kernel_flush // 0) triggered, \(.reservations.agreement_percent // "-") % agree; per kernel: \([.kernels[] | "\(.kernel) \(.flush_states)"] | join(", "))"' <<< "$out"
if [ "$states" -gt 0 ]; then
	agree=$(jq .preempt.agree <<< "$out")
	[ $((agree * 1000)) -ge $((states * 995)) ] || fail "A: agreement $agree of $states is below 99.5 %"
	expect "A unexplained disagreements" "$(jq .preempt.unexplained <<< "$out")" 0
else
	echo "A: no btrfs_done_preemptive_reclaim state on 1 GiB in this run"
fi

# --- B ------------------------------------------------------------------------------

echo "B: data until no chunk space is left, xattr files until ENOSPC ($SECONDS s so far)"
n=0
while fallocate -l 32M "$mnt/data$n" 2> /dev/null; do n=$((n + 1)); done
while fallocate -l 1M "$mnt/small$n" 2> /dev/null; do n=$((n + 1)); done
# data space left inside the data chunks, for the writes recorded: 128 MiB
# of the preallocated files (when part A's metadata chunks left no room for
# a 32 MiB file, they are all 1 MiB ones)
freed=0
for f in $(ls "$mnt" | grep -E '^(data|small)[0-9]+$' | sort -V); do
	[ "$freed" -lt $((128 << 20)) ] || break
	freed=$((freed + $(stat -c %s "$mnt/$f")))
	rm -f "$mnt/$f"
done
echo "B: $((freed >> 20)) MiB of data freed for the writer"
mkdir -p "$mnt/fill/data"
for ((i = 0; i < 64; i++)); do : > "$mnt/fill/data/d$i"; done
# metadata until only MARGIN_MB (default 3) MiB besides the global reserve
# (and besides 5.12's "plain full" 2 %) is left: the free metadata is then
# mostly the global reserve, and reservations still succeed
: "${MARGIN_MB:=3}"
fsid=$(findmnt -no UUID --target "$mnt")
python3 "$TEST_TMP/fill.py" "$mnt/fill" 60 2 stop "/sys/fs/btrfs/$fsid" $((MARGIN_MB << 20)) ||
	fail "B: the fill failed"
sync
echo "B: filled ($SECONDS s so far)"

umount "$mnt" || fail "cannot unmount $mnt"
cp --sparse=always "$img" "$TEST_TMP/pre.img" || fail "cannot copy $img"
"$BTRFS_SPACE" overcommit "$TEST_TMP/pre.img" | sed -n '1,12p'
setup_mount "$dev" "$mnt" -t btrfs -o rw
echo "B: a data writer of 64 KiB files for $FULL_SECONDS s on the full filesystem"
record reset_b "$ev_p14,$extent_events" "$TEST_TMP/b.trace" env DATA_COUNT="$TEST_TMP/data.count" \
	python3 "$TEST_TMP/fill.py" "$mnt/fill" "$FULL_SECONDS" 0 data
read -r written failed < "$TEST_TMP/data.count" || fail "B: the data writer left no count"
echo "B: the data writer wrote $written times, $failed ENOSPC"
# no write, no delalloc: the setup missed its aim (say so, not the replay)
[ "$written" -gt 0 ] || fail "B: the data writer wrote nothing (all ENOSPC): no delalloc to weigh"
out=$(run_check_stdout "$BTRFS_SPACE" --format json replay --part 1 "$TEST_TMP/b.trace" "$TEST_TMP/pre.img") || exit
jq -r '.preempt | "B: \(.states) states; \(.reservations.points) points, image anchor \(.reservations.image_anchor), delalloc followed \(.reservations.delalloc_followed), \(.reservations.kernel_flush) triggered, \(.reservations.agreement_percent // "-") % agree; flush points per kernel: \([.reservations.kernels[] | "\(.kernel) \(.flush_points)"] | join(", ")); only 5.12: \(.reservations.only_5_12)"' <<< "$out"
points=$(jq .preempt.reservations.points <<< "$out")
[ "$points" -gt 0 ] || fail "B: no reservation point in the trace"
expect "B kernel triggers" "$(jq .preempt.reservations.kernel_flush <<< "$out")" 0
expect "B 5.15 flush points" "$(jq '.preempt.reservations.kernels[] | select(.kernel == "5.15.0") | .flush_points' <<< "$out")" 0
expect "B 6.18 flush points" "$(jq '.preempt.reservations.kernels[] | select(.kernel == "6.18.0") | .flush_points' <<< "$out")" 0
n512=$(jq '.preempt.reservations.kernels[] | select(.kernel == "5.12.0") | .flush_points' <<< "$out")
[ "$n512" -gt 0 ] || fail "B: 5.12 flushes at no point of the full filesystem"
expect "B only 5.12" "$(jq .preempt.reservations.only_5_12 <<< "$out")" "$n512"
echo "B: the seed's case: 5.12 flushes at $n512 of $points reservation points, 5.15 and 6.18 at none, the kernel at none"
run_check "$BTRFS_SPACE" replay --part 1 --svg "$TEST_TMP/b.svg" "$TEST_TMP/b.trace" "$TEST_TMP/pre.img"
[ "$(grep -c '<path class="flush" [^>]*data-kernel="5.12.0"' "$TEST_TMP/b.svg")" -gt 0 ] ||
	fail "B: the timeline marks no 5.12 flush"
! grep -q '<path class="flush" [^>]*data-kernel="\(5.15.0\|6.18.0\)"' "$TEST_TMP/b.svg" ||
	fail "B: the timeline marks a 5.15 or 6.18 flush"
echo "B: the timeline marks the 5.12 flushes only"
