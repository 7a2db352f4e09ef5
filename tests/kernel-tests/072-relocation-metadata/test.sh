#!/bin/bash
# Metadata relocation replayed against the kernel (formulas.md 21.8, 21.9).
# Filesystems aged for metadata (16 KiB nodes): the 055 aging to a low
# fill, then small real files (/usr/share, seeded pick) copied in, a
# snapshot taken, a random half of the originals deleted and some of the
# snapshot's rewritten, small files with xattrs added; one device (single
# data, DUP metadata), two (RAID1 metadata), three (single metadata).  On
# fresh copies the kernel runs -musage=N (several N), -mlimit, -mconvert
# and a device remove that moves metadata; compared as in 055
# (common-relocation.sh): the order of "relocating block group", the
# outcome, unallocated per device, and every block group's used after,
# metadata included.  The forecast calls every metadata relocation not
# exact; every case is held to the bound it states (unallocated within
# may_differ plus 1 MiB, RELOC_BOUND), and where the order and outcome are
# known to be the kernel's also to those and to metadata used in total
# within max(1 MiB, 1 %) (RELOC_STRICT).  Whether the unallocated bytes
# equal the kernel's is printed (+0).
# RELOC_CASES="1 5" runs only those cases.

source "$TEST_TOP/common" || exit
source "$TEST_TOP/common-relocation.sh" || exit
reloc_setup

# age_meta MNT SEED MIB: small files of /usr/share (up to 64 KiB each, a
# seeded pick) to MIB, a snapshot, half the originals deleted, some of the
# snapshot's files rewritten, 2000 empty files with a 200-byte xattr
age_meta()
{
	python3 - "$1" "$2" "$3" <<'PY' || return 1
import os, random, shutil, subprocess, sys
root, seed, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
src = []
for d, _, files in os.walk("/usr/share"):
    for f in files:
        p = os.path.join(d, f)
        try:
            if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) <= 65536:
                src.append(p)
        except OSError:
            pass
src.sort()
rnd.shuffle(src)
os.makedirs(root + "/u", exist_ok=True)
total, names = 0, []
for i, p in enumerate(src):
    if total >= mib << 20:
        break
    dst = "%s/u/d%03d/%s" % (root, i % 97, os.path.basename(p) + ".%d" % i)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        shutil.copyfile(p, dst)
    except OSError:
        continue
    names.append(dst)
    total += os.path.getsize(dst)
os.sync()
subprocess.run(["btrfs", "-q", "subvolume", "snapshot", root, root + "/snap"], check=True)
for n in rnd.sample(names, len(names) // 2):
    os.unlink(n)
for n in rnd.sample(names, len(names) // 8):
    s = n.replace(root + "/u/", root + "/snap/u/", 1)
    if os.path.exists(s):
        with open(s, "ab") as f:
            f.write(b"x" * rnd.choice([10, 1000, 5000]))
os.makedirs(root + "/x", exist_ok=True)
for i in range(2000):
    p = "%s/x/e%05d" % (root, i)
    open(p, "w").close()
    os.setxattr(p, "user.a", os.urandom(200))
os.sync()
print("metadata aging: %d small files (%d MiB), a snapshot, half deleted" % (len(names), total >> 20))
PY
}
age_more_one() { age_meta "$1" 7 120; }
age_more_two() { age_meta "$1" 8 100; }
age_more_three() { age_meta "$1" 9 80; }

make_base one 23 30 "-n 16384 -d single -m dup" 1536M
make_base two 52 30 "-n 16384 -d single -m raid1" 1G 1536M
make_base three 71 25 "-n 16384 -d single -m single" 512M 768M 1G

# held to the kernel's order and outcome, metadata used in total within
# max(1 MiB, 1 %), unallocated within the forecast's may_differ (RELOC_STRICT)
RELOC_STRICT=1 run_case one "--balance|-musage=30" btrfs balance start -musage=30 MNT
RELOC_STRICT=1 run_case one "--balance|-musage=60" btrfs balance start -musage=60 MNT
RELOC_STRICT=1 run_case one "--balance|-musage=90" btrfs balance start -musage=90 MNT
RELOC_STRICT=1 run_case one "--balance|-mlimit=1" btrfs balance start -mlimit=1 MNT
RELOC_STRICT=1 run_case two "--balance|-musage=50" btrfs balance start -musage=50 MNT
RELOC_STRICT=1 run_case two "--balance|-mconvert=dup" btrfs balance start -mconvert=dup MNT
# the 8 MiB group first in the list takes COW copies that later commits
# free again (traced): which stay is not on the disk; held to the bound the
# forecast states (may_differ: the new chunks and that group, RELOC_BOUND)
RELOC_BOUND=1 run_case three "--balance|-musage=90" btrfs balance start -musage=90 MNT
RELOC_STRICT=1 run_case three "--remove|1" btrfs device remove 1 MNT
reloc_done
