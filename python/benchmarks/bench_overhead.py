#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a Python call of the package costs above the same C call, and the
package against torch's own ops (issue 36's table).

Overhead: host time of one call (time.perf_counter_ns around it; the device
idle before each call, not timed), median of --repeats calls after warm-up,
for gpuprim.sort(x, out=y) and gpuprim.sum(x, out=r) (and both allocating
their results), minus the same for the bare library call on the same cached
buffers (gpuprim._ext.c_call_times), which allocates nothing; and, of that
overhead, what the extension's own steps take without the library call
(gpuprim._ext.c_layer_times: reading x and out, the thread's context with
its stream, the two wraps) and, for the allocating calls, what making and
dropping the result takes (gpuprim._ext.c_output_times: the framework's
allocator, as the common path calls it). On
numpy arrays (CPU backend) and, when a GPU is there, on torch's CUDA
tensors (read through torch's DLPack C exchange table, and again through
torch._C._to_dlpack) and CuPy's arrays (each when installed).

Against torch: one call between CUDA events, synchronized, median of
--repeats after warm-up, inputs rotated over a 64 MB pool (so nothing is
timed warm in L2), for sort, argsort, topk(k=16) and sum(axis=-1) at 2^10
and 2^24 elements of float32.

    PYTHONPATH=python python3 python/benchmarks/bench_overhead.py [--repeats 1001]

1,001 by default: on the H200's host the torch sort row's median of 101
was 2.37 us where three medians of 1,001 on the same tree minutes later
were 0.89-1.41 (bench/RESULTS.md, fifty-eighth run).
"""
import argparse
import statistics
import time

import numpy as np

import gpuprim
from gpuprim import _ext


def host_times(function, repeats, sync):
    times = []
    for _ in range(repeats + 10):
        sync()
        begin = time.perf_counter_ns()
        function()
        times.append(time.perf_counter_ns() - begin)
    return times[10:]


def overhead_rows(kind, x, repeats, sync, empty):
    """empty(shape): a new array of x's kind, dtype and device."""
    y = empty(x.shape)
    r = empty((1,))  # the C call's one-element result
    rows = []
    scalar_out = empty(())
    cases = [("sort 2^10, out=", lambda: gpuprim.sort(x, out=y), "sort", y, None),
             ("sum 2^10, out=", lambda: gpuprim.sum(x, out=scalar_out), "sum", r, None),
             ("sort 2^10, allocating", lambda: gpuprim.sort(x), "sort", y, False),
             ("sum 2^10, allocating", lambda: gpuprim.sum(x), "sum", r, True)]
    for name, call, what, out, scalar in cases:
        py = statistics.median(host_times(call, repeats, sync))
        c = statistics.median(_ext.c_call_times(what, x, out, repeats + 10)[10:])
        layer = statistics.median(_ext.c_layer_times(x, out, repeats + 10)[10:])
        made = None if scalar is None else statistics.median(_ext.c_output_times(x, scalar, repeats + 10)[10:])
        rows.append((f"{name} ({kind})", py / 1e3, c / 1e3, (py - c) / 1e3, layer / 1e3,
                     None if made is None else made / 1e3))
    return rows


def torch_rows(torch, repeats):
    rows = []
    for log2 in (10, 24):
        n = 1 << log2
        pool = max(1, (64 << 20) // (4 * n))
        inputs = [torch.randn(n, device="cuda") for _ in range(pool)]
        cases = [
            ("sort", lambda x: gpuprim.sort(x), lambda x: torch.sort(x, stable=True)),
            ("argsort", lambda x: gpuprim.argsort(x), lambda x: torch.argsort(x, stable=True)),
            ("topk k=16", lambda x: gpuprim.topk(x, 16), lambda x: torch.topk(x, 16)),
            ("sum(axis=-1)", lambda x: gpuprim.sum(x, axis=-1), lambda x: torch.sum(x, dim=-1)),
        ]
        for name, ours, theirs in cases:
            timed = []
            for function in (ours, theirs):
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                samples = []
                for i in range(repeats + 10):
                    x = inputs[i % pool]
                    torch.cuda.synchronize()
                    start.record()
                    function(x)
                    stop.record()
                    stop.synchronize()
                    samples.append(start.elapsed_time(stop) * 1e3)
                timed.append(statistics.median(samples[10:]))
            rows.append((f"{name} 2^{log2}", timed[0], timed[1], timed[1] / timed[0]))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=1001)
    args = parser.parse_args()
    print(f"gpuprim {gpuprim.__version__}, library {gpuprim.library_version()}, numpy {np.__version__}")
    rows = overhead_rows("numpy", np.random.default_rng(1).random(1024, dtype=np.float32),
                         args.repeats, lambda: None, lambda shape: np.empty(shape, np.float32))
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None and torch.cuda.is_available():
        print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
        x = torch.randn(1024, device="cuda")
        # torch >= 2.10 is read through its DLPack C exchange table; the
        # rows again through torch._C._to_dlpack show what that saves.
        exchange = _ext.fast_use_torch_exchange(True)
        rows += overhead_rows("torch" + (", C exchange" if exchange else ""), x, args.repeats,
                              torch.cuda.synchronize, x.new_empty)
        if exchange:
            _ext.fast_use_torch_exchange(False)
            rows += overhead_rows("torch, _to_dlpack", x, args.repeats, torch.cuda.synchronize, x.new_empty)
            _ext.fast_use_torch_exchange(True)
    try:
        import cupy
        has_cupy_device = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # not installed, or no driver for it
        has_cupy_device = False
    if has_cupy_device:
        print(f"cupy {cupy.__version__}")
        x = cupy.random.random(1024, dtype=cupy.float32)
        rows += overhead_rows("cupy", x, args.repeats, cupy.cuda.get_current_stream().synchronize,
                              lambda shape: cupy.empty(shape, cupy.float32))
    print("\n| call | Python µs | C µs | overhead µs | of it, reading x and out, context, wraps µs "
          "| of it, making the result µs |\n|---|---|---|---|---|---|")
    for name, py, c, extra, layer, made in rows:
        made_text = "–" if made is None else f"{made:.2f}"
        print(f"| {name} | {py:.2f} | {c:.2f} | {extra:.2f} | {layer:.2f} | {made_text} |")
    if torch is not None and torch.cuda.is_available():
        print("\n| case (float32, one call, synchronized) | gpuprim µs | torch µs | torch / gpuprim |\n|---|---|---|---|")
        for name, ours, theirs, ratio in torch_rows(torch, args.repeats):
            print(f"| {name} | {ours:.1f} | {theirs:.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
