#!/usr/bin/env python3
"""Reference draws of numpy's legacy RandomState for tests/envs/test_numpy_random.cpp.

How it was run (Debian bookworm: python3-numpy 1.24.2):
    /usr/bin/python3 scripts/pusht_reference/make_numpy_random_reference.py
It prints C++ initialisers that the test keeps as constants: gym_pusht's reset draws for a set of
seeds, checksums of raw 32-bit draws, and a mixed sequence of randint/randn/random_sample calls.
"""
import sys

import numpy as np

SEEDS = [0, 1, 2, 3, 7, 42, 100, 1000, 12345, 65535, 65536, 100000, 123456789, 2**31 - 1, 2**31,
         2**31 + 1, 3141592653, 4000000000, 4294967294, 4294967295]
# randint ranges of the mixed sequence: small, the PushT ones, 32-bit edges, 64-bit spans, negatives.
RANGES = [(50, 450), (100, 400), (0, 1), (0, 2), (-5, 5), (0, 2**32 - 1), (0, 2**32), (0, 2**32 + 1),
          (0, 2**40), (-2**62, 2**62), (-2**63, 2**63 - 1), (-2**63, -2**63 + 7), (7, 8), (-1000, 3)]


def fnv1a64_u32(values):
    h = 0xcbf29ce484222325
    for v in values:
        for k in range(4):
            h = ((h ^ ((int(v) >> (8 * k)) & 0xFF)) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def lit(v):
    """An int64 as a C++ literal (INT64_MIN has none)."""
    v = int(v)
    return "INT64_MIN" if v == -2**63 else "%dll" % v


def main():
    print("// numpy", np.__version__, file=sys.stderr)
    print("// seed, randint(50,450) x2, randint(100,400) x2, randn()")
    for s in SEEDS:
        rs = np.random.RandomState(seed=s)
        v = [rs.randint(50, 450), rs.randint(50, 450), rs.randint(100, 400), rs.randint(100, 400)]
        print("{%du, %d, %d, %d, %d, %r}," % (s, v[0], v[1], v[2], v[3], float(rs.randn())))
    print("// seed, FNV-1a 64 of the first 1000 raw uint32 draws (little-endian bytes), the 1000th draw")
    for s in (0, 42, 4294967295):
        raw = np.random.RandomState(seed=s)._bit_generator.random_raw(1000)
        print("{%du, 0x%016xull, %du}," % (s, fnv1a64_u32(raw), int(raw[-1])))
    print("// mixed sequence for seed 2024: op ('i' randint low high, 'n' randn, 'r' random_sample), value")
    rs = np.random.RandomState(seed=2024)
    for k in range(3 * len(RANGES)):
        lo, hi = RANGES[k % len(RANGES)]
        print("{'i', %s, %s, %s, 0.0}," % (lit(lo), lit(hi), lit(rs.randint(lo, hi))))
        if k % 2 == 0:
            print("{'n', 0, 0, 0, %r}," % float(rs.randn()))
        if k % 3 == 0:
            print("{'r', 0, 0, 0, %r}," % float(rs.random_sample()))


if __name__ == "__main__":
    main()
