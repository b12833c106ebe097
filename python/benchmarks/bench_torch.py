#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gpuprim beside torch on the GPU, same run, CUDA events, medians.

    python python/benchmarks/bench_torch.py [--repeats 21] [--segmented | --topk | --groupby]

Large cases rotate three inputs (3 x 64 MB, past the 50 MB L2) and time one
call between events. Small cases (2^10 elements) are timed two ways: one call
between events (what a caller sees), and batched (1000 calls between events,
divided), plus the bare C call through gpuprim._ext with the same buffers, so the
Python layer's own cost is the difference. Prints a markdown table.

--segmented times the per-row calls instead: f32, 2^24 elements in all, as
rows x length = 2^20 x 16, 2^16 x 256, 4096 x 4096, 256 x 2^16, 16 x 2^20:
gpuprim.sort / sum / cumsum(x, axis=-1) beside torch.sort(dim=1) (default and
stable), x.sum(dim=1), torch.cumsum(dim=1), and torch.topk(k=8, dim=1) (torch
only, for scale); and a flat argsort of 2^26 f32 beside
torch.argsort(stable=True). Three 64 MB copies of each input rotate (two of
the 256 MB argsort input), past the 50 MB L2; every result is checked
against torch's once before timing.

--topk times top-k beside torch.topk (sorted, largest): flat f32 2^24 and
2^26 with k = 16 and 1024, and per row (axis=-1 / dim=1) 1048576 x 16 k=8,
65536 x 256 k=8 and 64, 4096 x 4096 k=8 and 64, 16 x 1048576 k=8 and 64.
Inputs rotate as for --segmented (three 64 MB copies; two of the 256 MB flat
input); values are checked against torch.topk's, and indices by gathering,
once before timing.

--groupby times a group-by sum (issue 37's target) beside torch's way to it:
2^26 int32 keys drawn from 2^10 or 2^20 random distinct values, f32 values;
gpuprim.groupby_sum(keys, values, return_counts=True) beside
torch.unique(keys, return_inverse=True, return_counts=True) then
zeros(...).index_add_(0, inverse, values). Two input pairs rotate (512 MB
each); keys and counts are checked equal, sums close (torch's index_add_
adds in no fixed order), once before timing.
"""
import argparse
import statistics

import torch

import gpuprim
from gpuprim import _arrays
from gpuprim._lib import LIB


def time_single(fn, inputs, repeats):
    times = []
    for r in range(repeats + 3):
        x = inputs[r % len(inputs)]
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        if r >= 3:
            times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def time_batched(fn, x, repeats, calls=1000):
    times = []
    for r in range(repeats + 1):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn(x)
        end.record()
        end.synchronize()
        if r >= 1:
            times.append(start.elapsed_time(end) * 1000.0 / calls)
    return statistics.median(times)


SEGMENTED_SHAPES = [(1 << 20, 16), (1 << 16, 256), (4096, 4096), (256, 1 << 16), (16, 1 << 20)]


def check_segmented(x):
    """Our per-row results against torch's on one input (before timing)."""
    values, indices = torch.sort(x, dim=1, stable=True)
    assert torch.equal(gpuprim.sort(x, axis=-1), values), "sort"
    assert torch.equal(gpuprim.argsort(x, axis=-1), indices), "argsort"
    scale = x.abs().sum(dim=1)
    assert bool(((gpuprim.sum(x, axis=-1) - x.sum(dim=1)).abs() <= 1e-5 * scale + 1e-6).all()), "sum"
    ours = gpuprim.cumsum(x, axis=-1)
    assert bool(((ours - torch.cumsum(x, dim=1)).abs() <= 1e-5 * scale[:, None] + 1e-6).all()), \
        "cumsum"


def bench_segmented(args):
    rows = []  # (case, shape, gpuprim µs or None, torch µs)
    for count, length in SEGMENTED_SHAPES:
        shape = f"{count} x {length}"
        inputs = [torch.randn(count, length, device="cuda") for _ in range(3)]
        check_segmented(inputs[0])
        for name, ours, theirs in [
            ("sort", lambda x: gpuprim.sort(x, axis=-1), lambda x: torch.sort(x, dim=1).values),
            ("sort (torch stable=True)", lambda x: gpuprim.sort(x, axis=-1),
             lambda x: torch.sort(x, dim=1, stable=True).values),
            ("argsort", lambda x: gpuprim.argsort(x, axis=-1),
             lambda x: torch.argsort(x, dim=1, stable=True)),
            ("sum", lambda x: gpuprim.sum(x, axis=-1), lambda x: x.sum(dim=1)),
            ("cumsum", lambda x: gpuprim.cumsum(x, axis=-1), lambda x: torch.cumsum(x, dim=1)),
            ("topk k=8 (torch only)", None, lambda x: torch.topk(x, 8, dim=1).values),
        ]:
            a = time_single(ours, inputs, args.repeats) if ours is not None else None
            rows.append((name, shape, a, time_single(theirs, inputs, args.repeats)))
        del inputs
        torch.cuda.empty_cache()
    flat = [torch.randn(1 << 26, device="cuda") for _ in range(2)]
    assert torch.equal(gpuprim.argsort(flat[0]), torch.argsort(flat[0], stable=True)), "argsort"
    rows.append(("argsort (flat)", "2^26", time_single(lambda x: gpuprim.argsort(x), flat, args.repeats),
                 time_single(lambda x: torch.argsort(x, stable=True), flat, args.repeats)))
    del flat
    print("f32, one call between CUDA events, median of "
          f"{args.repeats} after 3 warm-up calls, inputs rotating\n")
    print("| case | rows x length | gpuprim µs | torch µs | torch / gpuprim |")
    print("|---|---|---|---|---|")
    for name, shape, a, b in rows:
        ours = f"{a:.1f}" if a is not None else "–"
        ratio = f"{b / a:.2f}" if a is not None else "–"
        print(f"| {name} | {shape} | {ours} | {b:.1f} | {ratio} |")


TOPK_FLAT = [(1 << 24, 16), (1 << 24, 1024), (1 << 26, 16), (1 << 26, 1024)]
TOPK_ROWS = [((1 << 20, 16), 8), ((1 << 16, 256), 8), ((1 << 16, 256), 64), ((4096, 4096), 8),
             ((4096, 4096), 64), ((16, 1 << 20), 8), ((16, 1 << 20), 64)]


def check_topk(x, k, axis):
    """Our values equal torch.topk's, and our indices pick them (ties may be
    listed in another order by torch)."""
    dim = -1
    want = torch.topk(x, k, dim=dim).values
    values, indices = gpuprim.topk(x, k, axis=axis)
    assert torch.equal(values, want), "topk values"
    assert torch.equal(torch.gather(x, dim, indices), values), "topk indices"


def bench_topk(args):
    rows = []  # (case, shape, gpuprim µs, torch µs)
    inputs, current = None, None
    for n, k in TOPK_FLAT:
        if current != n:
            del inputs
            torch.cuda.empty_cache()
            inputs = [torch.randn(n, device="cuda") for _ in range(3 if n <= 1 << 24 else 2)]
            current = n
        check_topk(inputs[0], k, None)
        rows.append((f"topk k={k}", f"flat 2^{n.bit_length() - 1}",
                     time_single(lambda x, k=k: gpuprim.topk(x, k), inputs, args.repeats),
                     time_single(lambda x, k=k: torch.topk(x, k), inputs, args.repeats)))
    del inputs
    torch.cuda.empty_cache()
    inputs, current = None, None
    for shape, k in TOPK_ROWS:
        if current != shape:
            del inputs
            torch.cuda.empty_cache()
            inputs = [torch.randn(*shape, device="cuda") for _ in range(3)]
            current = shape
        check_topk(inputs[0], k, -1)
        rows.append((f"topk k={k}", f"{shape[0]} x {shape[1]}",
                     time_single(lambda x, k=k: gpuprim.topk(x, k, axis=-1), inputs, args.repeats),
                     time_single(lambda x, k=k: torch.topk(x, k, dim=1), inputs, args.repeats)))
    del inputs
    print("f32, largest first, one call between CUDA events, median of "
          f"{args.repeats} after 3 warm-up calls, inputs rotating\n")
    print("| case | shape | gpuprim µs | torch µs | torch / gpuprim |")
    print("|---|---|---|---|---|")
    for name, shape, a, b in rows:
        print(f"| {name} | {shape} | {a:.1f} | {b:.1f} | {b / a:.2f} |")


def torch_groupby_sum(pair):
    keys, values = pair
    uniq, inverse, counts = torch.unique(keys, return_inverse=True, return_counts=True)
    sums = torch.zeros(uniq.numel(), dtype=values.dtype, device=values.device).index_add_(0, inverse, values)
    return uniq, sums, counts


def bench_groupby(args):
    n = 1 << 26
    print("group-by sum, 2^26 int32 keys, f32 values, one call between CUDA events, median of "
          f"{args.repeats} after 3 warm-up calls, 2 input pairs rotating\n")
    print("| distinct keys | gpuprim µs | torch unique + index_add_ µs | torch / gpuprim |")
    print("|---|---|---|---|")
    for log_distinct in (10, 20):
        generator = torch.Generator(device="cuda").manual_seed(log_distinct)
        table = torch.randint(-(1 << 31), (1 << 31) - 1, (1 << log_distinct,), device="cuda", dtype=torch.int32,
                              generator=generator)
        pairs = [(table[torch.randint(0, 1 << log_distinct, (n,), device="cuda", generator=generator)],
                  torch.randn(n, device="cuda", generator=generator)) for _ in range(2)]
        keys, sums, counts = gpuprim.groupby_sum(*pairs[0], return_counts=True)
        want_keys, want_sums, want_counts = torch_groupby_sum(pairs[0])
        assert torch.equal(keys, want_keys), "group-by keys"
        assert torch.equal(counts, want_counts), "group-by counts"
        assert torch.allclose(sums, want_sums, rtol=1e-3, atol=1e-2), "group-by sums"
        ours = time_single(lambda pair: gpuprim.groupby_sum(*pair, return_counts=True), pairs, args.repeats)
        theirs = time_single(torch_groupby_sum, pairs, args.repeats)
        print(f"| 2^{log_distinct} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.2f} |")
        del pairs, table
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--segmented", action="store_true",
                        help="time the per-row calls (axis=-1) and a 2^26 argsort instead")
    parser.add_argument("--topk", action="store_true",
                        help="time top-k (flat and per row) beside torch.topk instead")
    parser.add_argument("--groupby", action="store_true",
                        help="time a group-by sum beside torch.unique + index_add_ instead")
    args = parser.parse_args()
    device = torch.cuda.get_device_name()
    print(f"gpuprim {gpuprim.__version__} (library {gpuprim.library_version()}), torch "
          f"{torch.__version__}, {device}\n")
    if args.segmented:
        bench_segmented(args)
        return
    if args.topk:
        bench_topk(args)
        return
    if args.groupby:
        bench_groupby(args)
        return
    rows = []
    big = [torch.randn(1 << 24, device="cuda") for _ in range(3)]
    for name, ours, theirs in [
        ("sort f32 2^24", lambda x: gpuprim.sort(x), lambda x: torch.sort(x).values),
        ("argsort f32 2^24", lambda x: gpuprim.argsort(x), lambda x: torch.argsort(x, stable=True)),
    ]:
        a, b = time_single(ours, big, args.repeats), time_single(theirs, big, args.repeats)
        rows.append((name, "one call", a, b))
    del big
    small = torch.randn(1 << 10, device="cuda")
    small_i = torch.randint(-100, 100, (1 << 10,), device="cuda")
    cases = [
        ("sort", lambda x: gpuprim.sort(x), lambda x: torch.sort(x).values, small),
        ("argsort", lambda x: gpuprim.argsort(x), lambda x: torch.argsort(x, stable=True), small),
        ("cumsum i64", lambda x: gpuprim.cumsum(x), lambda x: torch.cumsum(x, 0), small_i),
        ("sum", lambda x: gpuprim.sum(x), lambda x: x.sum(), small),
        ("max", lambda x: gpuprim.max(x), lambda x: x.max(), small),
        ("dot", lambda x: gpuprim.dot(x, x), lambda x: torch.dot(x, x), small),
    ]
    for name, ours, theirs, x in cases:
        rows.append((f"{name} 2^10", "one call", time_single(ours, [x], args.repeats),
                     time_single(theirs, [x], args.repeats)))
        rows.append((f"{name} 2^10", "batched", time_batched(ours, x, args.repeats),
                     time_batched(theirs, x, args.repeats)))

    # The bare C call for sort 2^10 with the same (cached) buffers.
    array = _arrays.describe(small, "x")
    context = gpuprim.context_for(array)
    out = torch.empty_like(small)
    kin = context._wrap(array)
    kout = context._wrap(_arrays.describe(out, "out"))
    handle = context._handle
    c_sort = lambda _: LIB.gpuprim_sort(handle, kin, 0, kout, 0, 0)  # noqa: E731
    c_sum_result = context._wrap(_arrays.describe(torch.empty(1, device="cuda"), "r"))
    c_sum = lambda _: LIB.gpuprim_reduce_to_buffer(handle, 0, kin, c_sum_result)  # noqa: E731

    print("| case | timing | gpuprim µs | torch µs | torch / gpuprim |")
    print("|---|---|---|---|---|")
    for name, how, a, b in rows:
        print(f"| {name} | {how} | {a:.1f} | {b:.1f} | {b / a:.2f} |")
    py_sort = time_batched(lambda x: gpuprim.sort(x), small, args.repeats)
    c_sort_t = time_batched(c_sort, small, args.repeats)
    py_sum = time_batched(lambda x: gpuprim.sum(x), small, args.repeats)
    c_sum_t = time_batched(c_sum, small, args.repeats)
    print(f"\nPython layer, batched, 2^10 f32: sort {py_sort:.1f} µs vs the bare C call "
          f"{c_sort_t:.1f} µs (+{py_sort - c_sort_t:.1f}); sum {py_sum:.1f} vs {c_sum_t:.1f} "
          f"(+{py_sum - c_sum_t:.1f})")


if __name__ == "__main__":
    main()
