#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gpuprim calls captured into a PyTorch CUDA graph, and replayed.

Captures a sort of a 1-D tensor, a per-row sort of a 2-D tensor (the
library's segmented sort on uniform rows), a cumsum and a sum, all written
into static output tensors (out=), in one torch.cuda.graph; replays the
graph on new data copied into the static inputs and checks every result
against torch's own.

    python3 torch_cuda_graph.py [--library path/to/libgpuprim.so] [--count N]

What capture needs (python/README.md, "CUDA graphs"):
- The calls run on the thread's gpuprim context for torch's current stream
  (gpuprim.context_for(x)): warm-up, capture and replay use one side stream
  `s` (torch.cuda.graph(g, stream=s)), so they share one context.
- The warm-up sizes that context's workspace (and makes the context: a
  context cannot be created during capture); reserve_workspace(fix=True)
  then holds it still, so the addresses the graph keeps stay valid. A call
  that would need more workspace during capture raises
  gpuprim.NotCapturableError (after capture: OutOfMemoryError) instead of
  moving it.
- Outputs given as out= (warmed up with the same tensors) make the captured
  calls reuse what the warm-up set up; new outputs (gpuprim.argsort(x), ...)
  are fine too: torch allocates them from the graph's private pool.
- Calls that wait for the device or return a value to the host (argmin,
  select, unique, segments given by CSR offsets, ...) raise
  gpuprim.NotCapturableError before enqueueing anything.

Uses the installed package, or the package's source in ../../python with
--library (or $GPUPRIM_LIBRARY) naming a built shared library (and
$GPUPRIM_EXTENSION_DIR its compiled layer). Exit status: 0 all results
right (prints OK), 1 a wrong result, 2 setup failed, 77 no torch or no CUDA
device (a skip for a test runner).
"""
import argparse
import os
import sys


def import_gpuprim(library):
    if library:
        os.environ["GPUPRIM_LIBRARY"] = library
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
        sys.path.insert(0, os.path.normpath(source))
    import gpuprim
    return gpuprim


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", help="path to a built shared libgpuprim (.so)")
    parser.add_argument("--count", type=int, default=1 << 20, help="elements of the 1-D tensor")
    parser.add_argument("--replays", type=int, default=3)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_cuda_graph.py: skipped, PyTorch is not installed")
        return 77
    if not torch.cuda.is_available():
        print("torch_cuda_graph.py: skipped, no CUDA device for PyTorch")
        return 77
    try:
        gpuprim = import_gpuprim(args.library)
    except (ImportError, OSError) as error:
        print(f"torch_cuda_graph.py: cannot start: {error}")
        return 2

    device = torch.device("cuda", torch.cuda.current_device())
    n, rows, length = args.count, 256, 1000

    # Static tensors: the graph reads and writes these addresses on every replay.
    x = torch.randn(n, device=device)
    m = torch.randn(rows, length, device=device)
    sorted_x = torch.empty_like(x)
    sorted_rows = torch.empty_like(m)
    prefix = torch.empty_like(x)
    total = torch.empty((), device=device)

    def calls():
        gpuprim.sort(x, out=sorted_x)                  # 1-D: gpuprim_sort
        gpuprim.sort(m, axis=-1, out=sorted_rows)      # per row: gpuprim_segmented_sort on uniform rows
        gpuprim.cumsum(x, out=prefix)                  # gpuprim_scan
        gpuprim.sum(x, out=total)                      # gpuprim_reduce_to_buffer

    # Warm-up on a side stream, as torch.cuda.graph asks; the capture uses
    # the same stream, hence the same gpuprim context.
    s = torch.cuda.Stream(device=device)
    s.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(s):
        for _ in range(2):
            calls()
        context = gpuprim.context_for(x)  # the thread's context for x on the current stream, s
        assert context.cuda_stream == s.cuda_stream, (context.cuda_stream, s.cuda_stream)
        context.reserve_workspace(fix=True)  # hold the warmed-up workspace still
    torch.cuda.current_stream(device).wait_stream(s)
    print(f"context: {context!r}, allocator {context.allocator!r}, stream {context.cuda_stream:#x}, "
          f"workspace {context.workspace_size} bytes held")

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        calls()
        # A call that cannot be captured is refused before it enqueues anything:
        # the capture goes on.
        try:
            gpuprim.argmin(x)
            print("argmin was captured (unexpected)")
            return 1
        except gpuprim.NotCapturableError as error:
            refused = str(error)
    print(f"captured; argmin refused: {refused}")

    failures = []
    for replay in range(args.replays):
        # New data into the static inputs, then replay: the graph sorts what is there now.
        x.copy_(torch.randn(n, device=device))
        m.copy_(torch.randn(rows, length, device=device))
        graph.replay()
        torch.cuda.synchronize(device)
        # float32 sums against float64 ones, within 1e-4 of the sum of the
        # magnitudes (rounding; stale or wrong data is off by far more)
        exact = torch.cumsum(x.double(), 0)
        bound = 1e-4 * torch.cumsum(x.double().abs(), 0)
        checks = [
            ("sort", torch.equal(sorted_x, torch.sort(x).values)),
            ("sort per row", torch.equal(sorted_rows, torch.sort(m, dim=-1).values)),
            ("cumsum", bool(((prefix.double() - exact).abs() <= bound).all())),
            ("sum", abs(total.item() - exact[-1].item()) <= bound[-1].item()),
        ]
        for what, right in checks:
            if not right:
                failures.append(f"replay {replay}: {what}")

    del graph  # it reads the workspace: gone before the workspace is let go
    context.release_workspace()
    if failures:
        print("WRONG: " + ", ".join(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
