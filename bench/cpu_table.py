#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The CPU benchmark's table: gpuprim_cpu_bench (1 thread and all threads)
and numpy on the same inputs' shapes, in the same run, as a Markdown table.

  bench/cpu_table.py BENCH [--baseline BENCH_OF_AN_OLDER_LIBRARY]
                     [--counts 1000,100000,1000000,10000000] [--reps 5]
                     [--ops OP,OP,...]

BENCH is a gpuprim_cpu_bench binary; --baseline one built against another
libgpuprim (e.g. 0.2.0's CPU backend, with -DGPUPRIM_BENCH_NO_CPU_THREADS),
timed on 1 thread. numpy: sort_keys np.sort (default kind), sort_pairs
argsort(kind="stable") plus the two gathers, scan np.cumsum(out=), sum
np.sum, min np.min, dot np.dot (floats through numpy's BLAS), topk_K (the K
smallest, K at most n, sorted, with their indices) np.argpartition(a, K - 1)
[:K] then np.argsort(kind="stable") of the chosen keys and the two gathers.
searchsorted np.searchsorted (random or sorted queries), histogram_256
np.histogram(a, 256, range), merge np.sort(kind="stable") of the two sorted
halves concatenated (numpy has no merge). Issue 37's: select_half a[a < m]
(m the middle of the range), unique np.unique, groupby_sum pandas'
Series(values).groupby(keys).sum() when pandas imports, else np.unique(keys,
return_inverse=True) then np.bincount(inverse, weights=values) (the table
says which). Every figure is the median of --reps runs after one warm-up.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

try:
    import pandas as pd
except ImportError:
    pd = None

OPS = ["sort_keys", "sort_pairs", "scan", "sum", "min", "dot", "topk_16", "topk_1024", "searchsorted",
       "searchsorted_sorted", "histogram_256", "merge", "select_half", "unique", "groupby_sum"]
DTYPES = ["i32", "u32", "i64", "u64", "f32", "f64"]
NP = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
      "f32": np.float32, "f64": np.float64}


def busy_fraction(seconds=1.0):
    """The share of the machine's CPU time used by anything over `seconds`."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return idle, sum(fields)
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def wait_quiet(limit_s, log):
    """On a shared machine: wait (up to limit_s) until other processes use
    under 10% of the CPU; says how it went on stderr."""
    if limit_s <= 0 or not os.path.exists("/proc/stat"):
        return True
    start = time.time()
    while time.time() - start < limit_s:
        if busy_fraction() < 0.10:
            return True
    print(f"cpu_table: machine still busy after {limit_s} s ({log})", file=sys.stderr)
    return False


def run_bench(binary, counts, reps, threads, extra=()):
    out = subprocess.run([binary, "--counts", ",".join(map(str, counts)), "--reps", str(reps),
                          "--threads", ",".join(map(str, threads)), *extra],
                         check=True, capture_output=True, text=True).stdout
    results = {}
    for line in out.splitlines():
        op, dtype, n, t, median, _ = line.split()
        results[(op, dtype, int(n), int(t))] = float(median)
    return results


def median_ms(f, reps):
    f()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def numpy_times(counts, reps, ops=OPS):
    rng = np.random.default_rng(1)
    results = {}
    for n in counts:
        for dtype in DTYPES:
            t = NP[dtype]
            if dtype.startswith("f"):
                a, b = rng.random(n).astype(t), rng.random(n).astype(t)
            else:
                info = np.iinfo(t)
                a = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
                b = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
            values = rng.integers(0, 2**32, n, dtype=np.uint32)
            out = np.empty_like(a)
            r = reps if n < 10**7 else max(3, reps // 2)

            def pairs():
                order = np.argsort(a, kind="stable")
                return a[order], values[order]

            def topk(k):
                k = min(k, n)
                chosen = np.argpartition(a, k - 1)[:k]
                chosen = chosen[np.argsort(a[chosen], kind="stable")]
                return a[chosen], chosen

            keys, queries = np.sort(a), np.sort(b)
            bounds = (0.0, 1.0) if dtype.startswith("f") else (float(np.iinfo(t).min), float(np.iinfo(t).max))

            def merge():  # numpy has no merge: the stable sort of the two sorted halves, concatenated
                return np.sort(np.concatenate([keys[:n // 2], queries[:n - n // 2]]), kind="stable")

            middle = t(0.5) if dtype.startswith("f") else t(0) if dtype.startswith("i") else t(1 << (8 * a.itemsize - 1))
            group_keys = rng.integers(0, 1024, n).astype(np.uint32) * np.uint32(2654435761)

            def groupby_sum():
                if pd is not None:
                    return pd.Series(a).groupby(group_keys).sum()
                distinct, inverse = np.unique(group_keys, return_inverse=True)
                return distinct, np.bincount(inverse, weights=a)

            timed = {
                "sort_keys": (lambda: np.sort(a), reps),
                "sort_pairs": (pairs, r),
                "scan": (lambda: np.cumsum(a, out=out), reps),
                "sum": (lambda: np.sum(a), reps),
                "min": (lambda: np.min(a), reps),
                "dot": (lambda: np.dot(a, b), reps),
                "topk_16": (lambda: topk(16), reps),
                "topk_1024": (lambda: topk(1024), reps),
                "searchsorted": (lambda: np.searchsorted(keys, b), r),
                "searchsorted_sorted": (lambda: np.searchsorted(keys, queries), reps),
                "histogram_256": (lambda: np.histogram(a, 256, bounds), reps),
                "merge": (merge, reps),
                "select_half": (lambda: a[a < middle], reps),
                "unique": (lambda: np.unique(a), r),
                "groupby_sum": (groupby_sum, r),
            }
            for op in ops:
                f, repeats = timed[op]
                results[(op, dtype, n)] = median_ms(f, repeats)
    return results


def fmt(ms):
    if ms is None:
        return "—"
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bench")
    parser.add_argument("--baseline")
    parser.add_argument("--counts", default="1000,100000,1000000,10000000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--ops", default=",".join(OPS), help="the ops to time (default: all)")
    parser.add_argument("--wait-quiet", type=int, default=0, metavar="SECONDS",
                        help="before each op's runs, wait up to SECONDS for other processes "
                             "to leave the CPU idle (a shared machine)")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    ops = args.ops.split(",")
    unknown = [op for op in ops if op not in OPS]
    if unknown:
        parser.error(f"unknown ops {unknown}; known: {OPS}")
    cores = os.cpu_count()
    ours, base, numpy = {}, {}, {}
    busy = []
    for op in ops:
        if not wait_quiet(args.wait_quiet, op):
            busy.append(op)
        ours.update(run_bench(args.bench, counts, args.reps, [1, 0], ["--ops", op]))
        if args.baseline:
            base.update(run_bench(args.baseline, counts, args.reps, [1], ["--ops", op]))
        numpy.update(numpy_times(counts, args.reps, [op]))
    if busy:
        print(f"(other processes were using the CPU while these ran: {', '.join(busy)})\n")
    grouper = f"pandas {pd.__version__}" if pd is not None else "numpy (pandas absent)"
    print(f"numpy {np.__version__}; groupby_sum by {grouper}; {cores} cores; median of {args.reps} (numpy's stable pair "
          f"sort at 10^7: median of {max(3, args.reps // 2)}); times in ms\n")
    head = ["op", "dtype", "n"] + (["baseline 1 thread"] if base else []) + [
        "ours 1 thread", f"ours {cores} threads", "numpy", "1T / all T", "numpy / ours"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for op in ops:
        for dtype in DTYPES:
            for n in counts:
                one, every = ours.get((op, dtype, n, 1)), ours.get((op, dtype, n, 0))
                ref = numpy.get((op, dtype, n))
                row = [op, dtype, f"{n:.0e}".replace("e+0", "e")]
                if base:
                    row.append(fmt(base.get((op, dtype, n, 1))))
                row += [fmt(one), fmt(every), fmt(ref),
                        f"{one / every:.2f}" if one and every else "—",
                        f"{ref / every:.2f}" if ref and every else "—"]
                print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
