#!/usr/bin/env python3
"""Reference outputs of cv2.resize (INTER_LINEAR, uint8) for tests/envs/test_cv_resize.cpp.

How it was run (Debian bookworm: python3-opencv 4.6.0, python3-numpy 1.24.2):
    /usr/bin/python3 scripts/pusht_reference/make_cv_resize_reference.py
It writes tests/envs/data/cv_resize_<src h>x<src w>x<c>_to_<dst h>x<dst w>.bin (the raw HWC output bytes)
and prints FNV-1a 64 checksums of the larger outputs, which the test keeps as constants.
The input image is a pure integer formula that the C++ test rebuilds (pattern() there must match).
"""
import os
import sys

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "envs", "data")

# (src_h, src_w, channels, dst_h, dst_w): stored byte for byte.
STORED = [(512, 512, 3, 96, 96), (48, 64, 3, 130, 170), (61, 97, 4, 23, 30), (70, 50, 1, 121, 37),
          (64, 64, 3, 32, 32)]
# Checked by checksum only (too large to store).
HASHED = [(512, 512, 3, 384, 384), (512, 512, 3, 680, 680)]


def pattern(h, w, c):
    """Gradients, a checkerboard, a disc and sawtooth wraps: sharp edges and smooth ramps."""
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    chans = []
    for k in range(c):
        kind = k % 4
        if kind == 0:
            v = x * 255 // max(w - 1, 1)
        elif kind == 1:
            v = ((x // 37 + y // 23) % 2) * 255
            v = np.where((2 * x - w) ** 2 + (2 * y - h) ** 2 < (min(h, w) * 3 // 5) ** 2, 200, v)
        elif kind == 2:
            v = (x * 3 + y * 7) & 255
        else:
            v = (x ^ y) & 255
        chans.append(v)
    return np.ascontiguousarray(np.stack(chans, -1).astype(np.uint8))


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def resize(sh, sw, c, dh, dw):
    out = cv2.resize(pattern(sh, sw, c), (dw, dh))  # default interpolation: INTER_LINEAR
    return np.ascontiguousarray(out.reshape(dh, dw, c))


def main():
    print("cv2", cv2.__version__, "numpy", np.__version__, file=sys.stderr)
    os.makedirs(DATA, exist_ok=True)
    for sh, sw, c, dh, dw in STORED:
        name = "cv_resize_%dx%dx%d_to_%dx%d.bin" % (sh, sw, c, dh, dw)
        with open(os.path.join(DATA, name), "wb") as f:
            f.write(resize(sh, sw, c, dh, dw).tobytes())
    for sh, sw, c, dh, dw in HASHED:
        print("{%d, %d, %d, %d, %d, 0x%016xull}," % (sh, sw, c, dh, dw, fnv1a64(resize(sh, sw, c, dh, dw).tobytes())))


if __name__ == "__main__":
    main()
