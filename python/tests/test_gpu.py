# SPDX-License-Identifier: Apache-2.0
"""gpuprim on PyTorch CUDA tensors and CuPy arrays: results of the input's
kind on its device, zero copy, ordered on the framework's current stream.
Skipped where there is no CUDA device or the framework is missing."""
import gc
import types

import numpy as np
import pytest

import gpuprim
from reference import (DTYPES, bits, numpy_cumsum, numpy_sum_dtype, pattern, rows_of, sort_permutation,
                       specials, torch_sum_dtype, wrap_cumsum)

rng = np.random.default_rng(7)


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    return torch


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device for CuPy")
    except Exception:
        pytest.skip("no CUDA device for CuPy")
    return cupy


# Helpers that move data between numpy and each framework.
def to_torch(torch, x):
    return torch.from_numpy(x.copy()).cuda() if x.dtype != np.uint64 else \
        torch.from_numpy(x.view(np.int64).copy()).cuda().view(torch.uint64)


def from_torch(torch, t):
    if t.dtype == torch.uint64:
        return t.view(torch.int64).cpu().numpy().view(np.uint64)
    return t.cpu().numpy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_sort_argsort_scan_reduce(dtype):
    torch = _torch()
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    for n in (0, 1, 1000, 70001, 1 << 20):
        x = specials(dtype, n, rng)
        t = to_torch(torch, x)
        for descending in (False, True):
            perm = sort_permutation(x, descending)
            s = gpuprim.sort(t, descending=descending)
            assert isinstance(s, torch.Tensor) and s.device == t.device and s.dtype == t.dtype
            np.testing.assert_array_equal(bits(from_torch(torch, s)), bits(x[perm]))
            i = gpuprim.argsort(t, descending=descending)
            assert i.dtype == torch.int64 and i.device == t.device
            np.testing.assert_array_equal(i.cpu().numpy(), perm)
        if np.dtype(dtype).kind != "f":
            # torch's rule: integers narrower than 64 bits sum in int64
            wide = torch_sum_dtype(x.dtype)
            c = gpuprim.cumsum(t)
            assert c.dtype == getattr(torch, wide.name)
            np.testing.assert_array_equal(from_torch(torch, c), np.cumsum(x, dtype=wide))
            c = gpuprim.cumsum(t, dtype=t.dtype)  # the tensor's own dtype: wraps like C
            np.testing.assert_array_equal(from_torch(torch, c), wrap_cumsum(x))
            total = gpuprim.sum(t)
            assert isinstance(total, torch.Tensor) and total.dim() == 0 and total.is_cuda
            assert total.dtype == getattr(torch, wide.name)
            assert from_torch(torch, total.reshape(1))[0] == np.sum(x, dtype=wide)
            with np.errstate(over="ignore"):
                total = gpuprim.sum(t, dtype=t.dtype)
                assert from_torch(torch, total.reshape(1))[0] == np.sum(x, dtype=x.dtype)
        if n:
            mx = gpuprim.max(t)
            ref = x.max() if np.dtype(dtype).kind != "f" or not np.isnan(x).any() else np.nan
            got = from_torch(torch, mx.reshape(1))[0]
            assert (np.isnan(got) and np.isnan(ref)) or got == ref


def test_torch_bfloat16_and_bit_ranges():
    """bfloat16 CUDA tensors (no ml_dtypes needed), f16 sums rounded once,
    and bit-range sorts on the device."""
    torch = _torch()
    from reference import range_permutation
    x = specials("float32", 100_003, rng)
    t = torch.from_numpy(x).cuda().to(torch.bfloat16)
    b = t.view(torch.int16).cpu().numpy().view(np.uint16)  # the keys' bits
    # the order of bf16 keys is that of f32 keys made of their bits << 16
    wide = (b.astype(np.uint32) << 16).view(np.float32)
    for descending in (False, True):
        perm = sort_permutation(wide, descending)
        s = gpuprim.sort(t, descending=descending)
        assert s.dtype == torch.bfloat16 and s.is_cuda
        np.testing.assert_array_equal(s.view(torch.int16).cpu().numpy().view(np.uint16), b[perm])
    total = gpuprim.sum(torch.ones(257, device="cuda", dtype=torch.bfloat16))
    assert total.dtype == torch.bfloat16 and float(total) == 256.0
    assert float(gpuprim.sum(torch.ones(4097, device="cuda", dtype=torch.float16))) == 4096.0
    keys = torch.randint(0, 1 << 16, (300_001,), device="cuda", dtype=torch.int32)
    host = keys.cpu().numpy()
    for begin, end in ((0, 16), (4, 12), (31, 32)):
        perm = range_permutation(host, False, begin, end)
        got = gpuprim.argsort(keys, begin_bit=begin, end_bit=end)
        np.testing.assert_array_equal(got.cpu().numpy(), perm)


def test_torch_pairs_and_out():
    torch = _torch()
    keys = torch.randint(0, 50, (100_003,), device="cuda", dtype=torch.int32)
    values = torch.arange(keys.numel(), device="cuda", dtype=torch.float64)
    k, v = gpuprim.sort(keys, values=values)
    ref_k, ref_i = torch.sort(keys, stable=True)
    assert torch.equal(k, ref_k) and torch.equal(v, ref_i.double())
    out = torch.empty_like(keys)
    assert gpuprim.sort(keys, out=out) is out and torch.equal(out, ref_k)
    gpuprim.sort(keys, out=keys)  # in place
    assert torch.equal(keys, ref_k)


def test_torch_current_stream_no_sync():
    """A torch op on a side stream, then ours on the same stream, no sync in
    between: our call must see the torch op's result (a slow kernel delays it)."""
    torch = _torch()
    n = 1 << 22
    side = torch.cuda.Stream()
    x = torch.zeros(n, device="cuda", dtype=torch.int64)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of spinning on `side`
        x.fill_(1)
        c = gpuprim.cumsum(x)           # must run after fill_ on `side`
        s = gpuprim.sum(x)
        y = c * 2                       # and torch sees our result, no sync
    side.synchronize()
    expected = torch.arange(1, n + 1, device="cuda", dtype=torch.int64)
    assert torch.equal(c, expected) and torch.equal(y, expected * 2)
    assert int(s) == n


def test_torch_cpu_tensors_run_on_cpu():
    torch = pytest.importorskip("torch")
    t = torch.tensor([3.0, -0.0, 0.0, float("nan"), -1.0])
    s = gpuprim.sort(t)
    assert isinstance(s, torch.Tensor) and s.device.type == "cpu"
    assert torch.equal(torch.signbit(s[:3]), torch.tensor([True, True, False]))
    assert torch.isnan(s[4])
    assert float(gpuprim.sum(torch.ones(10))) == 10.0


def test_torch_errors():
    torch = _torch()
    t = torch.arange(10, device="cuda", dtype=torch.float32)
    with pytest.raises(ValueError, match="contiguous"):
        gpuprim.sort(t[::2])
    with pytest.raises(TypeError, match="supported"):
        gpuprim.sort(t.to(torch.complex64))  # (float16 is supported since issue #18)
    with pytest.raises(TypeError, match="same kind"):
        gpuprim.sort(t, values=np.arange(10))
    with pytest.raises(ValueError, match="values has 3 elements, x 10"):
        gpuprim.sort(t, values=torch.arange(3, device="cuda"))


def test_torch_many_calls_keep_memory_flat():
    torch = _torch()
    x = torch.randn(1024, device="cuda")
    for _ in range(1000):
        gpuprim.sort(x)
    torch.cuda.synchronize()
    gc.collect()
    before = torch.cuda.memory_allocated()
    for _ in range(100_000):
        gpuprim.sort(x)
        gpuprim.sum(x)
    torch.cuda.synchronize()
    gc.collect()
    assert torch.cuda.memory_allocated() - before < 1 << 20


@pytest.mark.parametrize("dtype", ["int32", "uint64", "float32", "float64"])
def test_cupy(dtype):
    cupy = _cupy()
    x = pattern(dtype, 300_001, "random", rng)
    a = cupy.asarray(x)
    s = gpuprim.sort(a)
    assert isinstance(s, cupy.ndarray) and s.device.id == a.device.id
    np.testing.assert_array_equal(bits(cupy.asnumpy(s)), bits(x[sort_permutation(x)]))
    np.testing.assert_array_equal(cupy.asnumpy(gpuprim.argsort(a)), sort_permutation(x))
    if np.dtype(dtype).kind != "f":
        c = gpuprim.cumsum(a)  # numpy's rule for CuPy: int32 -> int64
        assert c.dtype == numpy_sum_dtype(x.dtype)
        np.testing.assert_array_equal(cupy.asnumpy(c), numpy_cumsum(x))
        np.testing.assert_array_equal(cupy.asnumpy(gpuprim.cumsum(a, dtype=a.dtype)), wrap_cumsum(x))
    total = gpuprim.sum(a)
    assert isinstance(total, cupy.ndarray) and total.shape == ()
    assert total.dtype == numpy_sum_dtype(x.dtype)


def test_cupy_current_stream():
    cupy = _cupy()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        a = cupy.ones(1 << 20, dtype=cupy.int64)
        c = gpuprim.cumsum(a)
        from gpuprim import _arrays
        assert gpuprim.context_for(_arrays.describe(a, "a")).stream == stream.ptr
    stream.synchronize()
    assert int(c[-1]) == 1 << 20


ROW_DTYPES = ["int32", "uint32", "int64", "float32", "float64", "float16", "int8", "uint16"]


@pytest.mark.parametrize("dtype", ROW_DTYPES)
def test_torch_rows(dtype):
    """Per-row (axis=-1) calls on CUDA tensors against numpy row by row."""
    check_torch_rows(_torch(), gpuprim, dtype)


@pytest.mark.parametrize("dtype", ROW_DTYPES)
def test_torch_rows_checks_on_numpy(dtype):
    """test_torch_rows' own code (every shape, the numpy references) on a
    numpy stand-in for torch (fake_torch.py), so it runs without a GPU: its
    rows of length 0 once failed in the test itself, on the device only."""
    import fake_torch
    check_torch_rows(fake_torch.torch, fake_torch.gpuprim, dtype)


def check_torch_rows(torch, gp, dtype):
    """test_torch_rows with torch and gpuprim (gp) passed in."""
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    for shape in ((0, 5), (5, 0), (1, 7), (37, 1), (300, 33), (64, 4097), (3, 200_001),
                  (4, 5, 17)):
        n = int(np.prod(shape))
        x = specials(dtype, n, rng).reshape(shape)
        t = to_torch(torch, x)
        rows = rows_of(x)
        for descending in (False, True):
            s = gp.sort(t, axis=-1, descending=descending)
            i = gp.argsort(t, axis=-1, descending=descending)
            assert s.shape == t.shape and s.dtype == t.dtype and s.device == t.device
            assert i.shape == t.shape and i.dtype == torch.int64 and i.device == t.device
            got_s = from_torch(torch, s).reshape(rows.shape)
            got_i = i.cpu().numpy().reshape(rows.shape)
            for r, row in enumerate(rows):
                perm = sort_permutation(row, descending)
                np.testing.assert_array_equal(bits(got_s[r]), bits(row[perm]), err_msg=f"{shape} {r}")
                np.testing.assert_array_equal(got_i[r], perm, err_msg=f"{shape} {r}")
        if np.dtype(dtype).kind != "f":
            # sums of integers narrower than 64 bits: torch's int64 (the numpy
            # stand-in runs gpuprim on numpy arrays: numpy's rule)
            wide = torch_sum_dtype(x.dtype) if isinstance(torch, types.ModuleType) else \
                numpy_sum_dtype(x.dtype)
            c = gp.cumsum(t, axis=-1)
            assert c.dtype == getattr(torch, wide.name)
            got_c = from_torch(torch, c).reshape(rows.shape)
            for r, row in enumerate(rows):
                np.testing.assert_array_equal(got_c[r], np.cumsum(row, dtype=wide))
            c = gp.cumsum(t, axis=-1, dtype=t.dtype)  # the tensor's own dtype: wraps like C
            got_c = from_torch(torch, c).reshape(rows.shape)
            for r, row in enumerate(rows):
                np.testing.assert_array_equal(got_c[r], wrap_cumsum(row))
            total = gp.sum(t, axis=-1)
            assert total.shape == shape[:-1] and total.is_cuda
            assert total.dtype == getattr(torch, wide.name)
            np.testing.assert_array_equal(from_torch(torch, total), np.sum(x, axis=-1, dtype=wide))
            total = gp.sum(t, axis=-1, dtype=t.dtype)
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal(from_torch(torch, total), np.sum(x, axis=-1, dtype=x.dtype))
            np.testing.assert_array_equal(from_torch(torch, gp.max(t, axis=-1)),
                                          x.max(axis=-1) if shape[-1] else
                                          np.full(shape[:-1], np.iinfo(dtype).min, dtype))
        else:
            finite = torch.randn(shape, device="cuda").to(t.dtype)
            total = gp.sum(finite, axis=-1)
            wide = finite.double().sum(dim=-1)
            bound = shape[-1] * (2.0 ** -10 if dtype == "float16" else 1e-6) * \
                finite.double().abs().sum(dim=-1) + 1e-3
            assert total.shape == shape[:-1] and bool(((total.double() - wide).abs() <= bound).all())


def test_torch_rows_match_torch():
    torch = _torch()
    x = torch.randn(1024, 257, device="cuda")
    values, indices = torch.sort(x, dim=1, stable=True)
    assert torch.equal(gpuprim.sort(x, axis=-1), values)
    assert torch.equal(gpuprim.argsort(x, axis=1), indices)
    assert torch.equal(gpuprim.max(x, axis=-1), x.max(dim=1).values)
    assert torch.allclose(gpuprim.sum(x, axis=-1), x.sum(dim=1), atol=1e-4)
    assert torch.allclose(gpuprim.cumsum(x, axis=-1), torch.cumsum(x, dim=1), atol=1e-4)
    with pytest.raises(ValueError, match="only the last axis"):
        gpuprim.sort(x, axis=0)
    with pytest.raises(ValueError, match="contiguous"):
        gpuprim.sort(x.t(), axis=-1)


@pytest.mark.parametrize("offset_dtype", ["int32", "int64"])
def test_torch_segments(offset_dtype):
    """CSR calls on CUDA tensors with CUDA offsets, segment by segment."""
    torch = _torch()
    n = 300_001
    x = specials("float32", n, rng)
    x[np.isnan(x)] = 0  # min/max compared as numbers below
    cuts = np.sort(rng.integers(10, n - 10, size=99))
    cuts[5] = cuts[4]  # an empty segment
    cuts.sort()
    offsets = np.concatenate(([3], cuts, [n - 2])).astype(offset_dtype)
    t = to_torch(torch, x)
    o = torch.from_numpy(offsets).cuda()
    s = gpuprim.segment_sort(t, o)
    i = gpuprim.segment_argsort(t, o)
    mx = gpuprim.segment_max(t, o)
    c = gpuprim.segment_cumsum(t, o)
    assert s.is_cuda and i.is_cuda and mx.shape == (offsets.size - 1,) and c.shape == t.shape
    got_s, got_i, got_mx, got_c = s.cpu().numpy(), i.cpu().numpy(), mx.cpu().numpy(), c.cpu().numpy()
    np.testing.assert_array_equal(bits(got_s[:3]), bits(x[:3]))      # outside: copied
    np.testing.assert_array_equal(bits(got_s[n - 2:]), bits(x[n - 2:]))
    assert not got_i[:3].any() and not got_i[n - 2:].any()           # outside: 0
    for k, (a, b) in enumerate(zip(offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64))):
        perm = sort_permutation(x[a:b])
        np.testing.assert_array_equal(bits(got_s[a:b]), bits(x[a:b][perm]))
        np.testing.assert_array_equal(got_i[a:b], perm)
        assert got_mx[k] == (x[a:b].max() if b > a else -np.inf)
        if b > a:
            # Compared where every partial sum lies well inside f32's range
            # (the specials include +-max: an f32 running sum may overflow to
            # inf where the f64 reference does not); bound in f64.
            wide = x[a:b].astype(np.float64)
            expected = np.cumsum(wide)
            if np.isfinite(wide).all() and np.abs(expected).max() < 1e37:
                np.testing.assert_allclose(got_c[a:b], expected, rtol=1e-3, atol=1e-3 * np.abs(wide).sum())
    # bad offsets: the library's message, on the device's check
    bad = torch.tensor([0, 5, 3, 10], device="cuda", dtype=getattr(torch, offset_dtype))
    with pytest.raises(gpuprim.InvalidArgumentError, match=r"offsets\[2\] = 3 is less than"):
        gpuprim.segment_sum(t, bad)
    with pytest.raises(TypeError, match="same kind and device"):
        gpuprim.segment_sum(t, torch.from_numpy(offsets))  # offsets on the CPU


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint8", "int64"])
def test_torch_topk(dtype):
    """Top-k of CUDA tensors: flat, per row and per segment, bit for bit the
    first k of the stable argsort; against torch.topk where the order agrees."""
    torch = _torch()
    for n in (1, 4097, 1 << 20):
        x = specials(dtype, n, rng)
        t = to_torch(torch, x)
        for largest in (True, False):
            perm = sort_permutation(x, largest)
            for k in sorted({1, 8, 1024, n // 2, n} & set(range(n + 1))):
                values, indices = gpuprim.topk(t, k, largest=largest)
                assert values.is_cuda and indices.dtype == torch.int64
                np.testing.assert_array_equal(indices.cpu().numpy(), perm[:k])
                np.testing.assert_array_equal(bits(from_torch(torch, values)), bits(x[perm[:k]]))
    x = torch.randn(1024, 257, device="cuda")
    values, indices = gpuprim.topk(x, 64, axis=-1)
    want_values, _ = torch.topk(x, 64, dim=-1)
    assert torch.equal(values, want_values)
    assert torch.equal(torch.gather(x, 1, indices), values)
    offsets = torch.tensor([0, 10, 10, 5000, 200000, 262401], device="cuda")
    flat = x.reshape(-1)
    values, indices = gpuprim.segment_topk(flat, offsets, 16, largest=False)
    host, got_i = flat.cpu().numpy(), indices.cpu().numpy()
    for s, (a, b) in enumerate(zip(offsets[:-1].tolist(), offsets[1:].tolist())):
        m = min(16, b - a)
        np.testing.assert_array_equal(got_i[s, :m], sort_permutation(host[a:b])[:m])
        assert (got_i[s, m:] == -1).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_argmin_argmax_on_the_gpu(dtype):
    """gpuprim.argmin / argmax of CUDA tensors, CuPy arrays and numpy arrays
    on a CUDA context: numpy's np.argmin / np.argmax of the same data (first
    NaN, first of equal extremes, -0.0 == +0.0), a Python int; sizes past
    the kernels' one-block limit (64 KiB) and their tiles."""
    torch = _torch()
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    context = gpuprim.Context("cuda")
    for n in (1, 33, 4097, 16385, 70001, (1 << 20) + 3, (1 << 24) + 1):
        for kind in ("random", "few", "equal"):
            x = pattern(dtype, n, kind, rng)
            reference = x.astype(np.float32) if x.dtype == np.float16 else x
            t = to_torch(torch, x)
            for op, numpy_op in (("min", np.argmin), ("max", np.argmax)):
                want = int(numpy_op(reference))
                got = getattr(gpuprim, "arg" + op)(t)
                assert type(got) is int and got == want, (op, n, kind)
                assert getattr(context, "arg" + op)(x) == want
        # a view off the 16-byte alignment (the kernels' head elements)
        if n > 3:
            assert gpuprim.argmax(t[3:]) == int(np.argmax(reference[3:]))
    with pytest.raises(gpuprim.InvalidArgumentError, match="argmin: x is empty"):
        gpuprim.argmin(torch.empty(0, device="cuda"))


HISTOGRAM_DTYPES = ["int32", "uint8", "int16", "int64", "float32", "float64", "float16"]


def _check_histograms(x, wrap, unwrap, is_kind, edges_device):
    """histogram (edges as numpy, as the framework's array on the device, as a list; int bins
    with a range) and bincount, flat and per row, of the framework's array wrap(x), against
    numpy on x (row by row for axis=-1)."""
    edges_np = np.array([0, 1.5, 7, 29])
    rows = rows_of(x)
    for edges in (edges_np, edges_device(edges_np), [0, 3, 29]):
        want_edges = np.asarray(edges_np if not isinstance(edges, list) else edges)
        bins = want_edges.size - 1
        counts, got_edges = gpuprim.histogram(wrap(x), edges, axis=-1)
        assert is_kind(counts) and is_kind(got_edges)
        got = unwrap(counts).reshape(rows.shape[0], bins)
        for r, row in enumerate(rows):
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(got[r], np.histogram(row, want_edges)[0], err_msg=f"{x.shape} {r}")
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(unwrap(gpuprim.histogram(wrap(x), edges)[0]),
                                          np.histogram(x, want_edges)[0])
    counts, _ = gpuprim.histogram(wrap(x), 5, range=(0, 30), axis=-1)
    got = unwrap(counts).reshape(rows.shape[0], 5)
    for r, row in enumerate(rows):
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got[r], np.histogram(row, 5, range=(0, 30))[0])
    if x.dtype.kind in "iu":
        bins = max(int(x.max()) + 1 if x.size else 0, 4)
        got = unwrap(gpuprim.bincount(wrap(x), minlength=4, axis=-1)).reshape(rows.shape[0], bins)
        for r, row in enumerate(rows):
            np.testing.assert_array_equal(got[r], np.bincount(row.astype(np.int64), minlength=bins))


def _histogram_data(dtype, shape):
    x = rng.integers(0, 30, size=shape).astype(dtype)
    if x.dtype.kind == "f" and x.size:
        x.reshape(-1)[::7] = np.nan
        x.reshape(-1)[1::11] = 29  # the last edge: numpy's closed last bin
    return x


@pytest.mark.parametrize("dtype", HISTOGRAM_DTYPES)
def test_torch_histograms(dtype):
    """gpuprim.histogram (edges and per row) and bincount on CUDA tensors: tensors out, numpy's counts."""
    torch = _torch()
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    for shape in ((0, 5), (5, 0), (1, 7), (37, 1), (300, 33), (3, 70001), (2, 3, 17)):
        x = _histogram_data(dtype, shape)
        _check_histograms(x, lambda a: to_torch(torch, a), lambda t: t.cpu().numpy(),
                          lambda t: isinstance(t, torch.Tensor) and t.is_cuda,
                          lambda e: torch.tensor(e, device="cuda"))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
def test_cupy_histograms(dtype):
    cupy = _cupy()
    for shape in ((5, 0), (1, 7), (300, 33), (3, 70001)):
        x = _histogram_data(dtype, shape)
        _check_histograms(x, cupy.asarray, cupy.asnumpy, lambda a: isinstance(a, cupy.ndarray), cupy.asarray)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "float16", "float32", "float64"])
def test_torch_select_unique_runs(dtype):
    """select, stable_partition, unique, unique_consecutive and run_length_encode on CUDA tensors:
    tensors out on the input's device, numpy's answers."""
    torch = _torch()
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    for n in (0, 1, 4097, 70001, (1 << 20) + 3):
        x = np.repeat(specials(dtype, n, rng), 2)[:n]
        t = to_torch(torch, x)
        mask = rng.integers(0, 2, n).astype(bool)
        kept, positions = gpuprim.select(t, torch.from_numpy(mask).cuda(), positions=True)
        assert isinstance(kept, torch.Tensor) and kept.is_cuda and kept.dtype == t.dtype
        np.testing.assert_array_equal(bits(from_torch(torch, kept)), bits(x[mask]))
        np.testing.assert_array_equal(positions.cpu().numpy(), np.flatnonzero(mask))
        result, count = gpuprim.stable_partition(t, torch.from_numpy(mask).cuda())
        order = np.concatenate((np.flatnonzero(mask), np.flatnonzero(~mask)))
        assert count == int(mask.sum())
        np.testing.assert_array_equal(bits(from_torch(torch, result)), bits(x[order]))
        keys, starts, lengths = gpuprim.run_length_encode(t)
        b = bits(x)
        heads = np.flatnonzero(np.concatenate(([True], b[1:] != b[:-1]))) if n else np.zeros(0, np.int64)
        np.testing.assert_array_equal(starts.cpu().numpy(), heads)
        np.testing.assert_array_equal(lengths.cpu().numpy(), np.diff(np.concatenate((heads, [n]))))
        np.testing.assert_array_equal(bits(from_torch(torch, gpuprim.unique_consecutive(t))), bits(x[heads]))
        values, inverse, counts = gpuprim.unique(t, return_inverse=True, return_counts=True)
        want, want_inverse, want_counts = np.unique(x, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(from_torch(torch, values), want)
        np.testing.assert_array_equal(inverse.cpu().numpy(), want_inverse)
        np.testing.assert_array_equal(counts.cpu().numpy(), want_counts)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_cupy_select_runs(dtype):
    cupy = _cupy()
    for n in (0, 4097, 70001):
        x = np.repeat(specials(dtype, n, rng), 3)[:n]
        a = cupy.asarray(x)
        kept = gpuprim.select(a, op="!=", value=0)
        assert isinstance(kept, cupy.ndarray)
        np.testing.assert_array_equal(bits(cupy.asnumpy(kept)), bits(x[x != 0]))
        keys, starts, lengths = gpuprim.run_length_encode(a, non_trivial=True)
        assert isinstance(lengths, cupy.ndarray)
        assert int(cupy.asnumpy(lengths).min(initial=2)) >= 2


def _keyed_reference(keys, values, op, groups, count):
    """op over values per group (groups[i]: element i's group), in input order:
    float sums in float64, integer sums in int64 (wrapping), min/max exactly."""
    if op == "sum":
        want = np.zeros(count, np.float64 if values.dtype.kind == "f" else np.int64)
        with np.errstate(over="ignore"):
            np.add.at(want, groups, values.astype(want.dtype))
        return want
    start = np.inf if values.dtype.kind == "f" else (np.iinfo(values.dtype).max if op == "min"
                                                     else np.iinfo(values.dtype).min)
    want = np.full(count, start if op == "min" else (-start if values.dtype.kind == "f" else start),
                   values.dtype)
    (np.minimum if op == "min" else np.maximum).at(want, groups, values)
    return want


def _check_keyed(got, want):
    if want.dtype == np.float64:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-4, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, want)


KEYED_DTYPES = ["int32", "uint8", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", KEYED_DTYPES)
def test_torch_reduce_by_key_groupby(dtype):
    """reduce_by_key, groupby_sum/min/max and unique on CUDA tensors: tensors out on
    the input's device, numpy's answers (runs by bits, groups as np.unique's)."""
    check_torch_keyed(_torch(), gpuprim, dtype, (0, 1, 2304, 2305, 70001, (1 << 20) + 3))


@pytest.mark.parametrize("dtype", KEYED_DTYPES)
def test_torch_reduce_by_key_groupby_checks_on_numpy(dtype):
    """test_torch_reduce_by_key_groupby's own code on fake_torch.py's numpy
    stand-in for torch, so it runs without a GPU."""
    import fake_torch
    check_torch_keyed(fake_torch.torch, fake_torch.gpuprim, dtype, (0, 1, 2305, 4097))


def check_torch_keyed(torch, gpuprim, dtype, sizes):
    if not hasattr(torch, dtype):
        pytest.skip(f"torch has no {dtype}")
    for n in sizes:
        keys = np.repeat(specials(dtype, n, rng), 3)[:n]
        if dtype in ("float16", "float32", "float64"):
            with np.errstate(invalid="ignore"):  # signaling NaNs: replaced anyway
                keys = np.where(np.isnan(keys), np.float32(np.nan), keys + 0).astype(dtype)  # one NaN, no -0.0
        t = to_torch(torch, keys)
        for values in (rng.integers(-1000, 1000, n).astype(np.int32), rng.uniform(-1, 1, n).astype(np.float32)):
            v = torch.from_numpy(values).cuda()
            b = bits(keys)
            heads = np.flatnonzero(np.concatenate(([True], b[1:] != b[:-1]))) if n else np.zeros(0, np.int64)
            runs = np.repeat(np.arange(heads.size), np.diff(np.concatenate((heads, [n])))) if n else heads
            distinct, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
            for op in ("sum", "min", "max"):
                got_keys, got, lengths = gpuprim.reduce_by_key(t, v, op, return_counts=True)
                assert isinstance(got, torch.Tensor) and got.is_cuda
                np.testing.assert_array_equal(bits(from_torch(torch, got_keys)), bits(keys[heads]))
                np.testing.assert_array_equal(lengths.cpu().numpy(), np.diff(np.concatenate((heads, [n]))))
                _check_keyed(got.cpu().numpy(), _keyed_reference(keys, values, op, runs, heads.size))
                function = getattr(gpuprim, f"groupby_{op}")
                got_keys, got, got_counts = function(t, v, return_counts=True)
                assert isinstance(got_keys, torch.Tensor) and got_keys.is_cuda
                np.testing.assert_array_equal(from_torch(torch, got_keys), distinct)
                np.testing.assert_array_equal(got_counts.cpu().numpy(), counts)
                _check_keyed(got.cpu().numpy(), _keyed_reference(keys, values, op, inverse.reshape(-1),
                                                                 distinct.size))
            got, got_inverse = gpuprim.unique(t, return_inverse=True)
            np.testing.assert_array_equal(from_torch(torch, got), distinct)
            np.testing.assert_array_equal(got_inverse.cpu().numpy(), inverse.reshape(-1))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_cupy_reduce_by_key_groupby(dtype):
    cupy = _cupy()
    for n in (0, 4097, 70001):
        keys = rng.integers(0, 50, n).astype(dtype)
        values = rng.integers(-1000, 1000, n).astype(np.int64)
        got_keys, sums, counts = gpuprim.groupby_sum(cupy.asarray(keys), cupy.asarray(values), return_counts=True)
        assert isinstance(sums, cupy.ndarray)
        distinct, inverse, want_counts = np.unique(keys, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(cupy.asnumpy(got_keys), distinct)
        np.testing.assert_array_equal(cupy.asnumpy(counts), want_counts)
        np.testing.assert_array_equal(cupy.asnumpy(sums), _keyed_reference(keys, values, "sum", inverse.reshape(-1),
                                                                           distinct.size))
        sorted_keys = np.sort(keys)
        got_keys, maxima = gpuprim.reduce_by_key(cupy.asarray(sorted_keys), cupy.asarray(values), "max")
        assert isinstance(maxima, cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(got_keys), distinct)
