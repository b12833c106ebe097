# SPDX-License-Identifier: Apache-2.0
"""A context's allocator (Context(allocator=...), gpuprim.h's
gpuprim_context_options_t.allocate), the workspace held still
(reserve_workspace) and the CUDA graph status (NotCapturableError).

On the CPU backend, everywhere: an allocator object of host memory that
counts its blocks (every block given back, with its size, by close(); the
results right), one that fails (OutOfMemoryError, the output unchanged),
one that gives a misaligned block (InvalidArgumentError, the block given
back), one whose free raises (reported, ignored), threads with allocators
of their own; "torch"/"cupy" refused for CPU contexts; reserve_workspace
with and without fix; the workspace query (nothing run, written or
allocated; its sizes reserved by reserve_workspace_sizes serve the calls
without growth). On a GPU (skipped without one, or without torch /
CuPy): the module-level functions' contexts take torch's caching allocator
for CUDA tensors and CuPy's pool for CuPy arrays, and the example
examples/python/torch_cuda_graph.py captures and replays a graph."""
import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gpuprim
from gpuprim import _lib
from test_gpu import _cupy, _torch  # the frameworks on a CUDA device, or a skip

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "python", "torch_cuda_graph.py")
ALIGNMENT = 256
rng = np.random.default_rng(5)


class CountingAllocator:
    """Host memory from numpy: a uint8 array of size + 255 bytes per block,
    the address 256-aligned inside it. Records every allocate and free
    (with their sizes and streams); `fail` makes allocate raise (for any
    size, or above `limit` when that is set), `offset` moves the address
    off the alignment."""

    def __init__(self):
        self.live = {}        # address -> (array, size)
        self.allocated = []   # (address, size, stream) of every allocate that gave a block
        self.freed = []       # (address, size, stream) of every free
        self.wrong_frees = []  # frees of an unknown address or with another size
        self.fail = False
        self.limit = None
        self.offset = 0

    def allocate(self, size, stream):
        if self.fail and (self.limit is None or size > self.limit):
            raise MemoryError(f"the test's allocator refuses {size} bytes")
        block = np.empty(size + ALIGNMENT - 1 + self.offset, np.uint8)
        base = block.__array_interface__["data"][0]
        address = (base + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT + self.offset
        self.live[address] = (block, size)
        self.allocated.append((address, size, stream))
        return address

    def free(self, address, size, stream):
        self.freed.append((address, size, stream))
        found = self.live.pop(address, None)
        if found is None or found[1] != size:
            self.wrong_frees.append((address, size))

    def live_bytes(self):
        return sum(size for _, size in self.live.values())

    def check_all_freed(self):
        assert not self.live, f"blocks not given back: {sorted(size for _, size in self.live.values())}"
        assert not self.wrong_frees, f"frees of unknown blocks or with a wrong size: {self.wrong_frees}"
        assert sorted((a, s) for a, s, _ in self.allocated) == sorted((a, s) for a, s, _ in self.freed)


def floats(n, dtype=np.float32):
    return rng.standard_normal(n).astype(dtype)


# -- the status and its exception ---------------------------------------------
def test_not_capturable_status():
    assert _lib.STATUS_CODES["NOT_CAPTURABLE"] == 14
    error = _lib.error_for(14, "sort cannot be captured into a CUDA graph")
    assert type(error) is gpuprim.NotCapturableError
    assert isinstance(error, gpuprim.GpuprimError) and isinstance(error, RuntimeError)
    assert error.status == 14 and error.status_name == "NOT_CAPTURABLE"
    assert "NotCapturableError" in gpuprim.__all__


def test_contexts_the_package_closes_while_capturing_are_kept():
    """A context the package closes on its own (evicted from a thread's
    cache, or at exit) whose close is refused (its stream captures a graph)
    is kept and closed at the next try, not dropped open nor raised into an
    unrelated call."""
    from gpuprim import _core

    class Capturing:  # a context whose first close is refused
        def __init__(self):
            self.tries = 0

        def close(self):
            self.tries += 1
            if self.tries == 1:
                raise _lib.error_for(14, "gpuprim_context_destroy cannot be captured into a CUDA graph")

    context = Capturing()
    _core._close_or_keep(context)
    assert context in _core._closing_later and context.tries == 1
    _core._close_kept()
    assert context not in _core._closing_later and context.tries == 2


def test_cpu_context_stream_and_default_allocator():
    with gpuprim.Context("cpu") as context:
        assert context.cuda_stream == 0  # NULL on the CPU
        assert context.allocator is None
    implicit = gpuprim.context_for(np.arange(3.0))  # an array, or its description
    assert implicit is gpuprim.context_for(None) and implicit.allocator is None
    assert implicit.backend == "cpu"


# -- an allocator object on a CPU context --------------------------------------
def test_counting_allocator_serves_every_block_and_gets_each_back():
    allocator = CountingAllocator()
    n = 1 << 20
    x = floats(n)
    keys = rng.integers(0, 1000, n)
    with gpuprim.Context("cpu", allocator=allocator) as context:
        assert context.allocator is allocator
        np.testing.assert_array_equal(context.sort(x), np.sort(x, kind="stable"))
        assert allocator.allocated, "the sort's workspace did not come from the allocator"
        # the workspace is the allocator's memory: all it holds now
        assert allocator.live_bytes() == context.workspace_size > 0
        np.testing.assert_array_equal(context.argsort(x), np.argsort(x, kind="stable"))
        values, indices = context.topk(x, 10)
        np.testing.assert_array_equal(indices, np.argsort(-x, kind="stable")[:10])
        np.testing.assert_array_equal(values, x[indices])
        unique_keys, sums = context.groupby_sum(keys, x.astype(np.float64))
        np.testing.assert_array_equal(unique_keys, np.unique(keys))
        np.testing.assert_allclose(sums, np.bincount(keys, x.astype(np.float64))[unique_keys], rtol=1e-9,
                                   atol=1e-9)
        found, counts = context.unique(keys, return_counts=True)
        np.testing.assert_array_equal(found, np.unique(keys))
        np.testing.assert_array_equal(counts, np.bincount(keys)[found])
        rows = x.reshape(1024, -1)
        np.testing.assert_array_equal(context.sort(rows, axis=-1), np.sort(rows, axis=-1, kind="stable"))
        sorted_keys, moved = context.sort(keys, values=x)
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(sorted_keys, keys[order])
        np.testing.assert_array_equal(moved, x[order])
        assert context.cumsum(x).dtype == np.float32
        assert allocator.live_bytes() == context.workspace_size
        assert all(stream == 0 for _, _, stream in allocator.allocated)  # the CPU has no stream
        assert all(address % ALIGNMENT == 0 for address, _, _ in allocator.allocated)
        assert not allocator.freed or allocator.freed[0][1] < context.workspace_size  # grown: old block back
    allocator.check_all_freed()


def test_release_and_close_give_blocks_back():
    allocator = CountingAllocator()
    context = gpuprim.Context("cpu", allocator=allocator)
    context.sort(floats(1 << 19))
    held = context.workspace_size
    assert held and allocator.live_bytes() == held
    context.release_workspace()
    assert context.workspace_size == 0 and not allocator.live
    context.reserve_workspace(3 << 20, fix=True)  # growth comes from the allocator too
    assert context.workspace_size >= 3 << 20 == allocator.allocated[-1][1]
    context.close()  # a workspace held still goes back too
    allocator.check_all_freed()
    context.close()  # twice: nothing more


def test_failing_allocator_raises_out_of_memory_and_changes_nothing():
    allocator = CountingAllocator()
    allocator.fail = True
    x = floats(1 << 20)
    out = np.full_like(x, 7.0)
    with gpuprim.Context("cpu", allocator=allocator) as context:
        with pytest.raises(gpuprim.OutOfMemoryError) as caught:
            context.sort(x, out=out)
        assert isinstance(caught.value, MemoryError)
        assert caught.value.status_name == "OUT_OF_MEMORY"
        assert isinstance(caught.value.__cause__, MemoryError)  # the allocator's own exception
        assert "refuses" in str(caught.value.__cause__)
        assert np.all(out == 7.0)
        assert context.workspace_size == 0
        # the context stays usable
        allocator.fail = False
        np.testing.assert_array_equal(context.sort(x, out=out), np.sort(x))
        # a growth that fails keeps the block held (given back to make room,
        # then taken again: the allocator still has that much)
        held = context.workspace_size
        allocator.fail, allocator.limit = True, held
        with pytest.raises(gpuprim.OutOfMemoryError):
            context.reserve_workspace(held + (8 << 20))
        assert context.workspace_size == held and allocator.live_bytes() == held
        np.testing.assert_array_equal(context.sort(x), np.sort(x))
    allocator.check_all_freed()


@pytest.mark.parametrize("answer", [0, None, "0x100", -256, 1 << 64])
def test_allocator_answers_that_are_no_block(answer):
    class Refusing:
        frees = []

        def allocate(self, size, stream):
            return answer

        def free(self, address, size, stream):
            self.frees.append(address)
    x = floats(1 << 20)
    out = np.zeros_like(x)
    with gpuprim.Context("cpu", allocator=Refusing()) as context:
        with pytest.raises(gpuprim.OutOfMemoryError) as caught:
            context.sort(x, out=out)
        if answer == 0:  # the plain "cannot": no exception behind it
            assert caught.value.__cause__ is None
            # The message names what the allocator answered, not the status
            # of the C function between the package and the library.
            assert "its allocate returned 0" in str(caught.value)
            assert "it returned 1" not in str(caught.value)
        else:
            assert isinstance(caught.value.__cause__, (TypeError, ValueError))
        assert not out.any()
    assert Refusing.frees == []


def test_misaligned_block_is_given_back_and_refused():
    allocator = CountingAllocator()
    allocator.offset = 64  # 64-byte aligned, not 256
    x = floats(1 << 20)
    out = np.full_like(x, -1.0)
    with gpuprim.Context("cpu", allocator=allocator) as context:
        with pytest.raises(gpuprim.InvalidArgumentError) as caught:
            context.sort(x, out=out)
        assert "aligned" in str(caught.value)
        assert np.all(out == -1.0)
        assert len(allocator.allocated) >= 1 and not allocator.live  # given back at once
        assert [(a, s) for a, s, _ in allocator.freed] == [(a, s) for a, s, _ in allocator.allocated]
        allocator.offset = 0
        np.testing.assert_array_equal(context.sort(x), np.sort(x))
    allocator.check_all_freed()


def test_a_free_that_raises_is_reported_and_ignored(monkeypatch):
    reported = []  # the exceptions' types and texts (their tracebacks would keep the context's frames)
    monkeypatch.setattr(sys, "unraisablehook",
                        lambda hook: reported.append((type(hook.exc_value), str(hook.exc_value))))

    class BadFree(CountingAllocator):
        def free(self, address, size, stream):
            super().free(address, size, stream)
            raise RuntimeError("the test's free fails")
    allocator = BadFree()
    context = gpuprim.Context("cpu", allocator=allocator)
    context.sort(floats(1 << 20))
    context.close()
    allocator.check_all_freed()  # called for every block all the same
    assert reported and all(kind is RuntimeError and "free fails" in text for kind, text in reported)


def test_allocators_on_threads_of_their_own():
    """The library calls allocate with the GIL released by the binding:
    the callback takes it, while other threads run Python."""
    results, errors = {}, []

    def work(index):
        try:
            allocator = CountingAllocator()
            x = floats(1 << 18)
            with gpuprim.Context("cpu", allocator=allocator) as context:
                for n in (1 << 14, 1 << 16, 1 << 18):
                    np.testing.assert_array_equal(context.sort(x[:n]), np.sort(x[:n]))
                    np.testing.assert_array_equal(context.argsort(x[:n]), np.argsort(x[:n], kind="stable"))
            allocator.check_all_freed()
            results[index] = len(allocator.allocated)
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive(), "a thread hangs (the GIL in the allocator's callback?)"
    assert not errors, errors
    assert len(results) == 4 and all(results.values())


def test_a_context_left_to_its_thread_gives_its_blocks_back():
    """A context dropped when its thread ends (in a threading.local, never
    closed): its destruction calls free from the thread's teardown."""
    local = threading.local()
    allocators = []

    def work():
        allocators.append(CountingAllocator())
        local.context = gpuprim.Context("cpu", allocator=allocators[-1])
        local.context.sort(floats(1 << 20))
    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    gc.collect()
    assert len(allocators) == 3
    for allocator in allocators:
        assert allocator.allocated
        allocator.check_all_freed()


def test_framework_allocators_need_cuda():
    for name in ("torch", "cupy"):
        with pytest.raises(ValueError, match="CUDA contexts"):
            gpuprim.Context("cpu", allocator=name)
    with gpuprim.Context("auto") as probe:
        on_cpu = probe.backend == "cpu"
    if on_cpu:  # auto chose the CPU: refused once the backend is known
        for name in ("torch", "cupy"):
            with pytest.raises(ValueError, match="CUDA contexts"):
                gpuprim.Context("auto", allocator=name)
    with pytest.raises(ValueError, match="allocator must be"):
        gpuprim.Context("cpu", allocator="jax")
    with pytest.raises(TypeError, match="allocate"):
        gpuprim.Context("cpu", allocator=object())


# -- the workspace held still --------------------------------------------------
def test_reserve_workspace_fix_and_grow():
    x = floats(1 << 20)
    with gpuprim.Context("cpu") as context:
        context.reserve_workspace(fix=True)  # held at what it is: nothing
        assert context.workspace_size == 0
        out = np.full_like(x, 3.0)
        with pytest.raises(gpuprim.OutOfMemoryError, match="held still"):
            context.sort(x, out=out)
        assert np.all(out == 3.0) and context.workspace_size == 0
        context.reserve_workspace(fix=False)  # let go: it grows again
        np.testing.assert_array_equal(context.sort(x, out=out), np.sort(x))
        held = context.workspace_size
        assert held > 0
        context.reserve_workspace(fix=True)
        context.sort(x[: x.size // 2])  # within what is held
        assert context.workspace_size == held
        with pytest.raises(gpuprim.OutOfMemoryError):
            # twice the keys: more than the sort of x on every CPU engine
            # (4 bytes a key and 4 of scratch at most there, 8 a key here)
            context.argsort(np.concatenate([x, x]))
        assert context.workspace_size == held
        context.reserve_workspace(4 * held, fix=True)  # grows, then holds still
        assert context.workspace_size >= 4 * held
        np.testing.assert_array_equal(context.argsort(x), np.argsort(x, kind="stable"))
        context.release_workspace()  # lets go of the hold too
        assert context.workspace_size == 0
        np.testing.assert_array_equal(context.argsort(x), np.argsort(x, kind="stable"))
        with pytest.raises(ValueError):
            context.reserve_workspace(-1)
        with pytest.raises(TypeError):
            context.reserve_workspace(True)
    with pytest.raises(ValueError, match="closed"):
        context.reserve_workspace()


# -- the workspace query (Context.workspace_query, reserve_workspace_sizes) -------
def test_workspace_query_measures_without_running():
    x = floats(1 << 20)
    allocator = CountingAllocator()
    with gpuprim.Context("cpu", allocator=allocator) as context:
        out = np.full_like(x, 3.0)
        keys = x.copy()
        with context.workspace_query() as sizes:
            assert isinstance(sizes, gpuprim.WorkspaceSizes)
            context.sort(x, out=out)
            context.argsort(x)
            context.sort(keys, out=keys)  # in place: not even that is written
        assert np.all(out == 3.0) and np.array_equal(keys, x)
        assert allocator.allocated == [] and allocator.freed == [] and context.workspace_size == 0
        assert sizes.main_bytes > 0 and sizes.side_bytes == 0 and sizes.bounded is False
        assert "main_bytes=" in repr(sizes)
        # Reserved and held, the same calls run without the workspace growing.
        context.reserve_workspace_sizes(sizes)
        held = context.workspace_size
        assert held >= sizes.main_bytes
        blocks = len(allocator.allocated)
        np.testing.assert_array_equal(context.sort(x, out=out), np.sort(x))
        np.testing.assert_array_equal(context.argsort(x), np.argsort(x, kind="stable"))
        assert context.workspace_size == held and len(allocator.allocated) == blocks
        # A larger sort needs more than the query measured: refused while held.
        with pytest.raises(gpuprim.OutOfMemoryError, match="held still"):
            context.argsort(floats(1 << 22))
        context.reserve_workspace_sizes(gpuprim.WorkspaceSizes(), fix=False)  # 0: as is, let go
        assert context.workspace_size == held
        context.argsort(floats(1 << 22))


def test_workspace_query_rules():
    x = floats(1000)
    with gpuprim.Context("cpu") as context:
        with context.workspace_query() as sizes:
            with pytest.raises(gpuprim.InvalidArgumentError, match="already open"):
                with context.workspace_query():
                    pass
            with pytest.raises(gpuprim.InvalidArgumentError, match="k = 2000"):
                context.topk(x, 2000)  # the real call's error
        assert sizes.main_bytes == 0
        # Offsets are not read in a query: their sizes are a bound.
        offsets = np.array([0, 10, 1000], np.int64)
        with context.workspace_query() as sizes:
            context.segment_sort(x, offsets)
        assert sizes.bounded is True
        # An error in the block ends the query, and goes on.
        with pytest.raises(KeyError):
            with context.workspace_query():
                raise KeyError("inside")
        with context.workspace_query() as sizes:  # a new one opens
            pass
        assert (sizes.main_bytes, sizes.side_bytes, sizes.bounded) == (0, 0, False)
        with pytest.raises(gpuprim.OutOfMemoryError):
            context.reserve_workspace_sizes(gpuprim.WorkspaceSizes(main_bytes=1 << 62))
        assert context.workspace_size == 0
        with pytest.raises(ValueError):
            context.reserve_workspace_sizes(gpuprim.WorkspaceSizes(main_bytes=-1))
        with pytest.raises(AttributeError):
            context.reserve_workspace_sizes(None)


# -- on a GPU: the frameworks' allocators ----------------------------------------
def test_torch_tensors_use_torchs_caching_allocator():
    torch = _torch()
    stream = torch.cuda.Stream()  # a stream of its own: a new context, its workspace empty
    with torch.cuda.stream(stream):
        x = torch.randn(1 << 24, device="cuda")
        before = torch.cuda.memory_allocated()
        y = gpuprim.sort(x)
        context = gpuprim.context_for(x)
        assert context.allocator == "torch" and context.backend == "cuda"
        assert context.cuda_stream == stream.cuda_stream
        workspace = context.workspace_size
        assert workspace > 0
        grown = torch.cuda.memory_allocated()
        # the output (torch's own) and the workspace (from torch for gpuprim)
        assert grown - before >= workspace + y.numel() * y.element_size()
        stream.synchronize()
        assert torch.equal(y, torch.sort(x).values)
        context.release_workspace()
        assert context.workspace_size == 0
        assert grown - torch.cuda.memory_allocated() >= workspace  # back to torch
        del y
    plain = gpuprim.Context("cuda", device=x.device.index)  # the library's own
    assert plain.allocator is None
    plain.close()


def test_torch_allocator_on_an_explicit_context():
    torch = _torch()
    with gpuprim.Context("cuda", device=torch.cuda.current_device(), allocator="torch") as context:
        before = torch.cuda.memory_allocated()
        x = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32)
        np.testing.assert_array_equal(context.sort(x), np.sort(x))  # staged copies and the workspace
        assert torch.cuda.memory_allocated() - before >= context.workspace_size > 0
    assert torch.cuda.memory_allocated() <= before


def test_cupy_arrays_use_cupys_pool():
    cupy = _cupy()
    pool = cupy.get_default_memory_pool()
    with cupy.cuda.Stream(non_blocking=True):
        a = cupy.random.random(1 << 22, dtype=cupy.float32)
        before = pool.used_bytes()
        s = gpuprim.sort(a)
        context = gpuprim.context_for(a)
        assert context.allocator == "cupy"
        workspace = context.workspace_size
        assert workspace > 0
        assert pool.used_bytes() - before >= workspace + s.nbytes
        assert bool((s == cupy.sort(a)).all())
        held = pool.used_bytes()
        context.release_workspace()
        assert held - pool.used_bytes() >= workspace


def test_torch_cuda_graph_capture_and_replay():
    torch = _torch()
    x = torch.randn(1 << 16, device="cuda")
    y = torch.empty_like(x)
    total = torch.empty((), device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        gpuprim.sort(x, out=y)
        gpuprim.sum(x, out=total)
        context = gpuprim.context_for(x)
        context.reserve_workspace(fix=True)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        gpuprim.sort(x, out=y)
        with pytest.raises(gpuprim.NotCapturableError):
            gpuprim.argmax(x)  # refused before anything is enqueued: the capture goes on
        gpuprim.sum(x, out=total)
    for _ in range(2):
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, torch.sort(x).values)
        assert abs(total.item() - x.double().sum().item()) <= 1e-4 * x.double().abs().sum().item()
    del graph
    context.release_workspace()


def test_close_while_capturing_is_refused():
    """Context.close() on a stream that captures raises NotCapturableError
    and leaves the context open and the capture intact; after the capture it
    closes."""
    torch = _torch()
    x = torch.randn(1 << 12, device="cuda")
    y = torch.empty_like(x)
    s = torch.cuda.Stream()
    context = gpuprim.Context("cuda", stream=s.cuda_stream)
    with torch.cuda.stream(s):
        context.sort(x, out=y)  # sizes the workspace before the capture
        context.reserve_workspace(fix=True)
    s.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        with pytest.raises(gpuprim.NotCapturableError, match="gpuprim_context_destroy"):
            context.close()
        context.sort(x, out=y)  # still open, and the capture still takes calls
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, torch.sort(x).values)
    context.close()
    assert "closed" in repr(context)


def test_torch_cuda_graph_example():
    _torch()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(HERE, "..") + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, EXAMPLE, "--count", str(1 << 18)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.rstrip().endswith("OK"), done.stdout + done.stderr
