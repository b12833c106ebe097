#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libgpuprim from Python with the gpuprim package, on numpy arrays.

Sorts, argsorts, scans and reduces arrays (float16 and a bit-range sort
among them), sorts and sums every row of a 2-D array, reduces segments, shows an error (exception with the library's message) and checks
every result against numpy.

    python3 gpuprim_demo.py [--library path/to/libgpuprim.so] [--cuda]

Uses the installed package (pip install . from the repository root), or the
package's source in ../../python with --library (or $GPUPRIM_LIBRARY) naming
a built shared library. --cuda runs the numpy arrays on the GPU through a
CUDA context (copies there and back). Exit status: 0 all results right,
1 a wrong result, 2 setup failed, 77 numpy is not installed (reported as a
skip by the test suite).
"""
import argparse
import os
import sys

try:
    import numpy as np
except ImportError:
    print("gpuprim_demo.py: skipped, numpy is not installed")
    if os.environ.get("GPUPRIM_TEST_SKIP_NOTE"):  # ctest's note file for the reason
        os.makedirs(os.path.dirname(os.environ["GPUPRIM_TEST_SKIP_NOTE"]), exist_ok=True)
        with open(os.environ["GPUPRIM_TEST_SKIP_NOTE"], "w") as note:
            note.write("gpuprim_demo.py: skipped, numpy is not installed\n")
    sys.exit(77)


def import_gpuprim(library):
    if library:
        os.environ["GPUPRIM_LIBRARY"] = library
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        sys.path.insert(0, os.path.normpath(source))
    import gpuprim
    return gpuprim


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", help="path to a built shared libgpuprim (.so/.dylib/.dll)")
    parser.add_argument("--cuda", action="store_true", help="run on the GPU (CUDA context)")
    parser.add_argument("--count", type=int, default=1_000_003)
    args = parser.parse_args()
    try:
        gpuprim = import_gpuprim(args.library)
        context = gpuprim.Context("cuda" if args.cuda else "auto")  # auto: GPUPRIM_BACKEND, else a GPU if usable
    except (ImportError, OSError, RuntimeError) as error:
        print(f"gpuprim_demo.py: cannot start: {error}")
        return 2

    failures = []

    def check(condition, what):
        print(f"  {'ok   ' if condition else 'WRONG'} {what}")
        if not condition:
            failures.append(what)

    print(f"gpuprim {gpuprim.__version__} on libgpuprim {gpuprim.library_version()} "
          f"({gpuprim.LIBRARY_PATH}): {context}")
    n = args.count
    rng = np.random.default_rng(12345)

    # Reduce: float64 sum within n * eps * sum|x|; integer min/max/sum exact
    # (numpy's dtypes: a u32 sum is a u64, or wraps in u32 with dtype=).
    x = rng.standard_normal(n) * 100.0
    total = context.sum(x)
    check(abs(total - x.sum()) <= n * np.finfo(np.float64).eps * np.abs(x).sum(),
          f"f64 sum {total:.6f} vs numpy {x.sum():.6f}")
    check(context.min(x) == x.min() and context.max(x) == x.max(), "f64 min and max")
    check(abs(context.dot(x, x) - np.dot(x, x)) <= 2 * n * np.finfo(np.float64).eps * np.dot(x, x),
          "f64 dot")
    k = rng.integers(0, 2**32, size=n, dtype=np.uint32)
    total = context.sum(k)
    check(total == np.sum(k) and total.dtype == np.uint64, "u32 sum (in uint64, as numpy's)")
    check(context.sum(k, dtype=np.uint32) == np.sum(k, dtype=np.uint32),
          "u32 sum with dtype=np.uint32 (wraps modulo 2^32)")

    # Scan: int64 inclusive and exclusive sums, exact; in place.
    v = rng.integers(-1000, 1000, size=n, dtype=np.int64)
    check(np.array_equal(context.cumsum(v), np.cumsum(v)), "i64 inclusive sum scan")
    check(np.array_equal(context.cumsum(v, exclusive=True), np.concatenate(([0], np.cumsum(v)[:-1]))),
          "i64 exclusive sum scan")
    m = k.copy()
    context.scan(m, "max", out=m)
    check(np.array_equal(m, np.maximum.accumulate(k)), "u32 inclusive max scan, in place")

    # Sort: i32 keys with many duplicates carrying their indices, stable like numpy's.
    keys = rng.integers(-50, 50, size=n, dtype=np.int32)
    order = np.argsort(keys, kind="stable")
    sorted_keys, moved = context.sort(keys, values=np.arange(n, dtype=np.int64))
    check(np.array_equal(sorted_keys, keys[order]) and np.array_equal(moved, order),
          "sort i32 keys with i64 values, stable")
    check(np.array_equal(context.argsort(keys), order), "argsort i32, stable")
    # f32 keys descending: NaN sorts above +inf, so it comes first.
    f = rng.standard_normal(n).astype(np.float32)
    f[rng.integers(0, n, size=10)] = np.nan
    f[:2] = [np.inf, -np.inf][:n]  # (--count 1: one of them)
    expected = np.sort(f)[::-1]
    expected = np.concatenate((expected[np.isnan(expected)], expected[~np.isnan(expected)]))
    check(np.array_equal(context.sort(f, descending=True), expected, equal_nan=True),
          "sort f32 keys descending (NaN first)")

    # float16: the sum accumulates in float32 and rounds once, so 4097 ones
    # give 4096 (a float16 running sum, numpy's, stalls at 2048).
    ones = np.ones(4097, np.float16)
    check(float(context.sum(ones)) == 4096.0 and float(np.cumsum(ones)[-1]) == 2048.0,
          f"f16 sum of 4097 ones = {float(context.sum(ones))} (numpy's f16 cumsum: 2048)")
    h = (rng.standard_normal(n) * 100).astype(np.float16)
    order16 = np.argsort(h, kind="stable")  # numpy sorts float16 NaN-free keys the same way
    check(np.array_equal(context.argsort(h), order16), "argsort f16, stable")

    # A bit-range sort: u32 keys below 2^16 sorted by bits [0, 16) only (half
    # the radix passes of the whole key); keys equal in those bits stay in order.
    small = rng.integers(0, 1 << 16, size=n, dtype=np.uint32)
    check(np.array_equal(context.sort(small, end_bit=16), np.sort(small)),
          "sort u32 keys < 2^16 by bits [0, 16)")
    low_byte = context.argsort(k, begin_bit=0, end_bit=8)
    check(np.array_equal(low_byte, np.argsort(k & 0xFF, kind="stable")),
          "argsort u32 by its low byte (bits [0, 8)), stable")

    # Per row (the last axis of a C-contiguous 2-D array), like numpy's
    # axis=-1: sort, argsort (indices within each row) and sums of 1000 rows.
    grid = rng.standard_normal((1000, max(n // 1000, 1))).astype(np.float32)
    check(np.array_equal(context.sort(grid, axis=-1), np.sort(grid, axis=-1, kind="stable")),
          f"sort every row of a {grid.shape[0]} x {grid.shape[1]} f32 array")
    check(np.array_equal(context.argsort(grid, axis=-1), np.argsort(grid, axis=-1, kind="stable")),
          "argsort every row, indices within the row")
    row_sums = context.sum(grid, axis=-1)
    check(row_sums.shape == (grid.shape[0],) and
          np.allclose(row_sums, grid.sum(axis=-1, dtype=np.float64), rtol=0, atol=1e-3),
          "sum of every row (an array of 1000 sums)")
    # Segments of any length (CSR offsets): segment s is keys[offsets[s]:offsets[s+1]].
    offsets = np.array([0, min(3, n), min(3, n), min(100, n), n], np.int64)
    expected = [keys[a:b].max() if b > a else np.iinfo(np.int32).min  # empty: the identity
                for a, b in zip(offsets[:-1], offsets[1:])]
    check(np.array_equal(context.segment_max(keys, offsets), expected),
          "max of 4 segments (one empty: the identity)")

    # Errors: an exception with the library's message; nothing changes.
    before = keys.copy()
    try:
        context.sort(keys, values=np.arange(10))
        check(False, "sort with values of another size fails")
    except ValueError as error:
        print(f"  error shown: {type(error).__name__}: {error}")
        check(np.array_equal(keys, before), "size mismatch reported, keys untouched")

    context.close()
    if failures:
        print(f"gpuprim_demo.py: {len(failures)} WRONG: {failures}")
        return 1
    print("gpuprim_demo.py: all results match numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
