#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The share of a PNG's pixels near given colours, for the rendering tests.

usage: common-png.py [--size WxH] [--tolerance N] PNG '#rrggbb'...

Reads an 8-bit RGB or RGBA, non-interlaced PNG (what headless chromium's
--screenshot writes), undoes the row filters and prints, one line per colour
asked, the percentage of all pixels whose red, green and blue are each
within N (default 12) of that colour, with two decimals. --size makes any
other width and height an error. Exits non-zero with one line on stderr for
a file that is not such a PNG.
"""
import collections
import struct
import sys
import zlib


def read_rows(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    pos, idat, ihdr = 8, b"", None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if ihdr is None:
        sys.exit("%s: no IHDR chunk" % path)
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit("%s: unexpected PNG format: depth %d colour type %d" % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    if len(raw) < h * (1 + stride):
        sys.exit("%s: the image data is short" % path)
    prev, rows, i = bytearray(stride), [], 0
    # bytewise a + b mod 256 on whole rows at once, as big integers
    m7 = int.from_bytes(b"\x7f" * stride, "big")
    m8 = int.from_bytes(b"\x80" * stride, "big")
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 2:
            a, b = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = bytearray((((a & m7) + (b & m7)) ^ ((a ^ b) & m8)).to_bytes(stride, "big"))
        elif f:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 1:
                    line[x] = (line[x] + a) & 255
                elif f == 3:
                    line[x] = (line[x] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main(argv):
    size, tolerance = None, 12
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--size" and argv:
            size = tuple(int(v) for v in argv.pop(0).split("x"))
        elif opt == "--tolerance" and argv:
            tolerance = int(argv.pop(0))
        else:
            sys.exit(__doc__.strip().splitlines()[2])
    if not argv:
        sys.exit(__doc__.strip().splitlines()[2])
    w, h, bpp, rows = read_rows(argv[0])
    if size and (w, h) != size:
        sys.exit("%s: size %dx%d, not %dx%d" % (argv[0], w, h, size[0], size[1]))
    # each distinct pixel once, then the colours near each one asked for
    seen = collections.Counter()
    for line in rows:
        seen.update(bytes(line[x:x + 3]) for x in range(0, w * bpp, bpp))
    for colour in argv[1:]:
        want = [int(colour[k:k + 2], 16) for k in (1, 3, 5)]
        near = sum(n for px, n in seen.items()
                   if all(abs(px[k] - want[k]) <= tolerance for k in range(3)))
        print("%.2f" % (100.0 * near / (w * h)))


main(sys.argv[1:])
