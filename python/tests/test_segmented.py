# SPDX-License-Identifier: Apache-2.0
"""Per-row (axis=-1) and per-segment (CSR offsets) calls on numpy arrays (CPU
backend), checked row by row / segment by segment against reference.py and
numpy."""
import numpy as np
import pytest

import gpuprim
from reference import (ALL_DTYPES, DTYPES, bits, dtype_of, is_float, is_half, min_max_identity,
                       numpy_cumsum, numpy_sum_dtype, pattern, round_half, rows_of, sort_permutation, specials,
                       wrap_cumsum)

rng = np.random.default_rng(20261124)

# 2-D shapes: no rows, empty rows, one row, one-element rows, short and long
# rows; and an N-D one (leading axes flattened to rows).
SHAPES = [(0, 5), (5, 0), (0, 0), (1, 7), (37, 1), (13, 100), (200, 33), (3, 5000), (4, 5, 17)]
INDEX_DTYPES = ["int64", "int32", "uint32", "uint64"]


def make(dtype, shape, kind="random"):
    return pattern(dtype, int(np.prod(shape)), kind, rng).reshape(shape)


def random_offsets(n, dtype, segments=None, margin=True):
    """Offsets over n elements: random cuts with empty segments among them,
    and (margin) elements before the first and after the last segment."""
    segments = segments if segments is not None else int(rng.integers(0, 40))
    low, high = (int(rng.integers(0, n // 8 + 1)), n - int(rng.integers(0, n // 8 + 1))) \
        if margin and n else (0, n)
    cuts = np.sort(rng.integers(low, high + 1, size=max(segments - 1, 0)))
    if segments > 2:
        cuts[rng.integers(0, cuts.size)] = cuts[0]  # an empty segment at least
        cuts.sort()
    return np.concatenate(([low], cuts, [high])).astype(dtype)


def segments_of(x, offsets):
    return [x[int(a):int(b)] for a, b in zip(offsets[:-1], offsets[1:])]


def row_sum_ok(got, x, dtype):
    """Float row sums within n * eps * sum|x| (f16/bf16: between the
    roundings of that interval around the exact sum)."""
    for r, (g, row) in enumerate(zip(got, x)):
        wide = row.astype(np.float64)
        exact = float(wide.sum())
        if is_half(dtype):
            bound = max(row.size, 1) * 2.0 ** -24 * float(np.abs(wide).sum())
            low, high = round_half([exact - bound, exact + bound], dtype).astype(np.float64)
            assert low <= float(g) <= high, (r, float(g), exact)
        else:
            eps = np.finfo(dtype).eps
            assert abs(float(g) - exact) <= row.size * eps * float(np.abs(wide).sum()) + 1e-30, \
                (r, float(g), exact)


def min_max_reference(x, op):
    """Row (or segment) min/max with the library's rules, compared as float64
    where that is exact: NaN wins, -0.0 < +0.0; the identity when empty."""
    dt = x.dtype
    if x.size == 0:
        return min_max_identity(dt, op)
    if is_float(dt):
        with np.errstate(invalid="ignore"):  # signaling NaNs
            w = x.astype(np.float64)
        if np.isnan(w).any():
            return np.nan
        return w.min() if op == "min" else w.max()
    return x.min() if op == "min" else x.max()


def same_value(got, expected):
    got = float(got) if is_float(np.asarray(got).dtype) else got
    if isinstance(expected, float) and np.isnan(expected):
        return np.isnan(got)
    return got == expected


# --- per row -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_rows_sort_and_argsort(dtype, descending):
    for shape in SHAPES:
        for kind in ("random", "few"):
            x = make(dtype, shape, kind)
            keep = x.copy()
            got = gpuprim.sort(x, axis=-1, descending=descending)
            order = gpuprim.argsort(x, axis=-1, descending=descending)
            assert got.shape == x.shape and got.dtype == x.dtype
            assert order.shape == x.shape and order.dtype == np.int64
            for r, row in enumerate(rows_of(x)):
                perm = sort_permutation(row, descending)
                np.testing.assert_array_equal(bits(rows_of(got)[r]), bits(row[perm]),
                                              err_msg=f"{shape} row {r}")
                np.testing.assert_array_equal(rows_of(order)[r], perm, err_msg=f"{shape} row {r}")
            np.testing.assert_array_equal(bits(x), bits(keep), err_msg="input changed")
            if not is_float(x.dtype) and not descending:  # numpy's own, where it agrees
                np.testing.assert_array_equal(got, np.sort(x, axis=-1, kind="stable"))
                np.testing.assert_array_equal(order, np.argsort(x, axis=-1, kind="stable"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_rows_numpy_agrees(dtype):
    x = (rng.standard_normal((64, 129)) * 50).astype(dtype)  # no NaN: numpy's order is ours
    np.testing.assert_array_equal(gpuprim.sort(x, axis=-1), np.sort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(gpuprim.argsort(x, axis=1), np.argsort(x, axis=-1, kind="stable"))
    got = gpuprim.sum(x, axis=-1)
    assert got.shape == (64,) and got.dtype == x.sum(axis=-1).dtype  # int16: int64, as numpy's
    if is_float(x.dtype):
        row_sum_ok(got, x, dtype)
    else:
        np.testing.assert_array_equal(got, x.sum(axis=-1))
        np.testing.assert_array_equal(gpuprim.sum(x, axis=-1, dtype=x.dtype),
                                      x.sum(axis=-1, dtype=x.dtype))
    np.testing.assert_array_equal(gpuprim.min(x, axis=-1), x.min(axis=-1))
    np.testing.assert_array_equal(gpuprim.max(x, axis=-1), x.max(axis=-1))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_rows_argsort_index_dtypes(index_dtype):
    x = make("int64", (17, 301), "few")
    order = gpuprim.argsort(x, axis=-1, dtype=index_dtype)
    assert order.dtype == np.dtype(index_dtype) and order.shape == x.shape
    np.testing.assert_array_equal(order.astype(np.int64), np.argsort(x, axis=-1, kind="stable"))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_rows_sort_pairs_and_out(dtype):
    x = make(dtype, (23, 77), "few")
    values = np.arange(x.size, dtype=np.uint32).reshape(x.shape)
    k, v = gpuprim.sort(x, axis=-1, values=values, descending=True)
    for r in range(x.shape[0]):
        perm = sort_permutation(x[r], True)
        np.testing.assert_array_equal(bits(k[r]), bits(x[r][perm]))
        np.testing.assert_array_equal(v[r], values[r][perm])
    # out and values_out, and in place
    out, vout = np.empty_like(x), np.empty_like(values)
    k2, v2 = gpuprim.sort(x, axis=-1, values=values, out=out, values_out=vout, descending=True)
    assert k2 is out and v2 is vout
    np.testing.assert_array_equal(bits(out), bits(k))
    y, w = x.copy(), values.copy()
    gpuprim.sort(y, axis=-1, values=w, out=y, values_out=w, descending=True)
    np.testing.assert_array_equal(bits(y), bits(k))
    np.testing.assert_array_equal(w, v)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_rows_cumsum(dtype, exclusive):
    for shape in SHAPES:
        n = int(np.prod(shape))
        if is_float(dtype_of(dtype)):
            x = rng.integers(-1000, 1000, size=n).astype(dtype_of(dtype)).reshape(shape)
        else:
            x = specials(dtype, n, rng).reshape(shape)  # 64-bit sums wrap
        got = gpuprim.cumsum(x, axis=-1, exclusive=exclusive)
        assert got.shape == x.shape and got.dtype == numpy_sum_dtype(x.dtype)
        for r, row in enumerate(rows_of(x)):
            if is_half(dtype):
                # f32 accumulation (exact for these integers), one rounding per output
                exact = np.cumsum(row.astype(np.float64))
                if exclusive:
                    exact = np.concatenate(([0.0], exact[:-1]))[:row.size]
                expected = round_half(exact, dtype)
                np.testing.assert_array_equal(bits(rows_of(got)[r]), bits(expected))
            else:
                np.testing.assert_array_equal(rows_of(got)[r], numpy_cumsum(row, exclusive),
                                              err_msg=f"{shape} row {r}")
        if not is_float(x.dtype) and not exclusive and x.size:
            np.testing.assert_array_equal(got, np.cumsum(x, axis=-1))
            own = gpuprim.cumsum(x, axis=-1, dtype=x.dtype)  # x's dtype: wraps like C
            assert own.dtype == x.dtype
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal(own, np.cumsum(x, axis=-1, dtype=x.dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["min", "max"])
def test_rows_scan_min_max(dtype, op):
    x = specials(dtype, 31 * 257, rng).reshape(31, 257)
    if is_float(x.dtype):
        with np.errstate(invalid="ignore"):
            x[x == 0] = 1  # the sign of zero: test_signed_zero_min_max
    ufunc = np.minimum if op == "min" else np.maximum
    wide = np.float64 if x.dtype.name == "bfloat16" else x.dtype
    with np.errstate(invalid="ignore"):
        expected = ufunc.accumulate(x.astype(wide), axis=-1)
    got = gpuprim.scan(x, op, axis=-1)
    out = x.copy()
    assert gpuprim.scan(out, op, axis=-1, out=out) is out  # in place
    with np.errstate(invalid="ignore"):  # signaling NaNs widened
        np.testing.assert_array_equal(got.astype(wide), expected)
        np.testing.assert_array_equal(out.astype(wide), expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_rows_reductions(dtype):
    for shape in SHAPES:
        x = make(dtype, shape)
        for op, function in (("sum", gpuprim.sum), ("min", gpuprim.min), ("max", gpuprim.max)):
            got = function(x, axis=-1)
            assert isinstance(got, np.ndarray) and got.shape == shape[:-1]
            assert got.dtype == (numpy_sum_dtype(x.dtype) if op == "sum" else x.dtype)
            flat = got.reshape(-1)
            if op == "sum":
                if is_float(x.dtype):
                    continue  # specials (inf, NaN) make float sums of no use: below
                np.testing.assert_array_equal(got, np.sum(x, axis=-1))
                with np.errstate(over="ignore"):
                    np.testing.assert_array_equal(gpuprim.sum(x, axis=-1, dtype=x.dtype),
                                                  np.sum(x, axis=-1, dtype=x.dtype))
                continue
            for r, row in enumerate(rows_of(x)):
                expected = min_max_reference(row, op)
                assert same_value(flat[r], expected), (shape, op, r, flat[r], expected)
        if is_float(x.dtype):
            finite = (rng.standard_normal(int(np.prod(shape))) * 4).astype(x.dtype).reshape(shape)
            got = gpuprim.sum(finite, axis=-1)
            row_sum_ok(got.reshape(-1), rows_of(finite), dtype)
            if not shape[-1]:
                assert (got == 0).all()


def test_rows_one_dimensional_and_whole():
    x = rng.integers(-100, 100, size=1001).astype(np.int32)
    # axis=-1 (or 0) of a 1-D array is the whole array, like numpy
    np.testing.assert_array_equal(gpuprim.sort(x, axis=-1), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(gpuprim.argsort(x, axis=0), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(gpuprim.cumsum(x, axis=-1), np.cumsum(x, dtype=np.int32))
    assert gpuprim.sum(x, axis=-1) == x.sum() and np.ndim(gpuprim.sum(x, axis=-1)) == 0
    # axis=None reduces an N-D array whole, as before
    y = x[:1000].reshape(10, 100)
    assert gpuprim.sum(y) == y.sum() and gpuprim.max(y, axis=None) == y.max()
    # numpy integer axes
    np.testing.assert_array_equal(gpuprim.max(y, axis=np.int64(1)), y.max(axis=1))


def test_rows_errors():
    x = rng.standard_normal((6, 8)).astype(np.float32)
    with pytest.raises(ValueError, match="1-D.*axis=-1"):
        gpuprim.sort(x, axis=None)  # N-D with axis=None: 1-D only, with the hint
    # axis=-1 is the default of sort, argsort and topk (the array API's, torch.topk's)
    np.testing.assert_array_equal(gpuprim.sort(x), np.sort(x, axis=-1))
    np.testing.assert_array_equal(gpuprim.argsort(x), np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(gpuprim.topk(x, 3)[0], -np.sort(-x, axis=-1)[:, :3])
    with pytest.raises(ValueError, match="1-D"):
        gpuprim.cumsum(x)
    for function in (gpuprim.sort, gpuprim.argsort, gpuprim.cumsum, gpuprim.sum, gpuprim.min,
                     gpuprim.max):
        with pytest.raises(ValueError, match="only the last axis"):
            function(x, axis=0)
        with pytest.raises(ValueError, match="only the last axis"):
            function(x, axis=-2)
        with pytest.raises(ValueError, match="only the last axis"):
            function(x, axis=2)
        with pytest.raises(TypeError, match="axis"):
            function(x, axis=1.0)
        with pytest.raises(TypeError, match="axis"):
            function(x, axis=(0, 1))
        with pytest.raises(TypeError, match="axis"):
            function(x, axis=True)
        with pytest.raises(ValueError, match="C-contiguous"):
            function(x.T, axis=-1)
        with pytest.raises(ValueError, match="C-contiguous"):
            function(x[:, ::2], axis=-1)
        with pytest.raises(ValueError, match="0-d"):
            function(np.array(1.0, np.float32), axis=-1)
    with pytest.raises(ValueError, match="shape"):
        gpuprim.sort(x, axis=-1, out=np.empty((8, 6), np.float32))
    with pytest.raises(ValueError, match="shape"):
        gpuprim.sort(x, axis=-1, values=np.arange(48))
    with pytest.raises(ValueError, match="shape"):
        gpuprim.scan(x, "max", axis=-1, out=np.empty(48, np.float32))
    with pytest.raises(TypeError, match="index dtype"):
        gpuprim.argsort(x, axis=-1, dtype="int16")


# --- per segment (CSR) ---------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_segment_sort_and_argsort(dtype, descending):
    for n in (0, 1, 100, 5003):
        for offset_dtype in INDEX_DTYPES:
            x = pattern(dtype, n, "few" if offset_dtype == "int32" else "random", rng)
            keep = x.copy()
            offsets = random_offsets(n, offset_dtype)
            got = gpuprim.segment_sort(x, offsets, descending=descending)
            order = gpuprim.segment_argsort(x, offsets, descending=descending)
            assert got.shape == x.shape and order.dtype == np.int64
            first, last = int(offsets[0]), int(offsets[-1])
            np.testing.assert_array_equal(bits(got[:first]), bits(x[:first]))  # copied
            np.testing.assert_array_equal(bits(got[last:]), bits(x[last:]))
            assert not order[:first].any() and not order[last:].any()  # zeros
            for s, (a, b) in enumerate(zip(offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64))):
                perm = sort_permutation(x[a:b], descending)
                where = f"n={n} {offset_dtype} segment {s} [{a}, {b})"
                np.testing.assert_array_equal(bits(got[a:b]), bits(x[a:b][perm]), err_msg=where)
                np.testing.assert_array_equal(order[a:b], perm, err_msg=where)
            np.testing.assert_array_equal(bits(x), bits(keep), err_msg="input changed")


@pytest.mark.parametrize("dtype", ["int32", "float64", "uint8", "float16"])
def test_segment_sort_pairs_and_out(dtype):
    n = 3001
    x = pattern(dtype, n, "few", rng)
    values = np.arange(n, dtype=np.int64)
    offsets = random_offsets(n, "int64", 25)
    k, v = gpuprim.segment_sort(x, offsets, values=values)
    first, last = int(offsets[0]), int(offsets[-1])
    np.testing.assert_array_equal(v[:first], values[:first])
    np.testing.assert_array_equal(v[last:], values[last:])
    for a, b in zip(offsets[:-1], offsets[1:]):
        perm = sort_permutation(x[a:b])
        np.testing.assert_array_equal(bits(k[a:b]), bits(x[a:b][perm]))
        np.testing.assert_array_equal(v[a:b], values[a:b][perm])
    # a given out keeps its elements outside every segment; in place works
    out = np.zeros_like(x)
    assert gpuprim.segment_sort(x, offsets, out=out) is out
    np.testing.assert_array_equal(bits(out[first:last]), bits(k[first:last]))
    assert not bits(out[:first]).any() and not bits(out[last:]).any()
    y = x.copy()
    gpuprim.segment_sort(y, offsets, out=y)
    np.testing.assert_array_equal(bits(y), bits(k))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_segment_argsort_index_dtypes(index_dtype):
    x = pattern("int16", 4000, "few", rng)
    offsets = np.array([0, 10, 10, 2000, 4000], np.uint32)
    order = gpuprim.segment_argsort(x, offsets, dtype=index_dtype)
    assert order.dtype == np.dtype(index_dtype)
    for a, b in zip(offsets[:-1], offsets[1:]):
        np.testing.assert_array_equal(order[a:b].astype(np.int64),
                                      np.argsort(x[a:b], kind="stable"))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_segment_cumsum(dtype, exclusive):
    for n in (0, 1, 100, 5003):
        for offset_dtype in INDEX_DTYPES:
            if is_float(dtype_of(dtype)):
                x = rng.integers(-1000, 1000, size=n).astype(dtype_of(dtype))
            else:
                x = specials(dtype, n, rng)
            offsets = random_offsets(n, offset_dtype)
            got = gpuprim.segment_cumsum(x, offsets, exclusive=exclusive)
            assert got.dtype == numpy_sum_dtype(x.dtype)  # narrower integers widened
            first, last = int(offsets[0]), int(offsets[-1])
            np.testing.assert_array_equal(bits(got[:first]), bits(x[:first].astype(got.dtype)))
            np.testing.assert_array_equal(bits(got[last:]), bits(x[last:].astype(got.dtype)))
            own = None if is_float(x.dtype) else \
                gpuprim.segment_cumsum(x, offsets, exclusive=exclusive, dtype=x.dtype)
            for a, b in zip(offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)):
                segment = x[a:b]
                if is_half(dtype):
                    exact = np.cumsum(segment.astype(np.float64))
                    if exclusive:
                        exact = np.concatenate(([0.0], exact[:-1]))[:segment.size]
                    expected = round_half(exact, dtype)
                else:
                    expected = numpy_cumsum(segment, exclusive)
                if own is not None:  # dtype=x.dtype: wraps like C
                    np.testing.assert_array_equal(own[a:b], wrap_cumsum(segment, exclusive))
                np.testing.assert_array_equal(bits(got[a:b]), bits(expected), err_msg=f"[{a}, {b})")


@pytest.mark.parametrize("op", ["min", "max"])
def test_segment_scan_min_max(op):
    x = specials("float32", 5003, rng)
    x[x == 0] = 1
    offsets = random_offsets(x.size, "int32", 30)
    ufunc = np.minimum if op == "min" else np.maximum
    got = gpuprim.segment_scan(x, offsets, op)
    for a, b in zip(offsets[:-1], offsets[1:]):
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(got[a:b], ufunc.accumulate(x[a:b]))
    out = x.copy()
    assert gpuprim.segment_scan(out, offsets, op, out=out) is out  # in place
    np.testing.assert_array_equal(bits(out), bits(got))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_segment_reductions(dtype):
    for n in (0, 1, 100, 5003):
        for offset_dtype in INDEX_DTYPES:
            x = specials(dtype, n, rng)
            offsets = random_offsets(n, offset_dtype)
            count = offsets.size - 1
            parts = segments_of(x, offsets.astype(np.int64))
            for op, function in (("min", gpuprim.segment_min), ("max", gpuprim.segment_max)):
                got = function(x, offsets)
                assert got.shape == (count,) and got.dtype == x.dtype
                for s, part in enumerate(parts):
                    expected = min_max_reference(part, op)
                    assert same_value(got[s], expected), (n, offset_dtype, op, s, got[s], expected)
            if is_float(x.dtype):
                finite = (rng.standard_normal(n) * 4).astype(x.dtype)
                got = gpuprim.segment_sum(finite, offsets)
                row_sum_ok(got, segments_of(finite, offsets.astype(np.int64)), dtype)
            else:
                got = gpuprim.segment_sum(x, offsets)  # narrower integers widened, as numpy's
                wide = numpy_sum_dtype(x.dtype)
                assert got.dtype == wide
                expected = [np.sum(part, dtype=wide) for part in parts]
                np.testing.assert_array_equal(got, np.array(expected, wide).reshape(count))
                own = gpuprim.segment_sum(x, offsets, dtype=x.dtype)  # x's dtype: wraps
                with np.errstate(over="ignore"):
                    expected = [np.sum(part, dtype=x.dtype) for part in parts]
                assert own.dtype == x.dtype
                np.testing.assert_array_equal(own, np.array(expected, x.dtype).reshape(count))


def test_segment_no_segments():
    x = np.arange(10, dtype=np.float32)
    one = np.array([4], np.int64)  # no segments at all
    assert gpuprim.segment_sum(x, one).shape == (0,)
    np.testing.assert_array_equal(gpuprim.segment_sort(x, one), x)
    np.testing.assert_array_equal(gpuprim.segment_cumsum(x, one), x)
    assert not gpuprim.segment_argsort(x, one).any()
    empty = np.empty(0, np.float32)
    assert gpuprim.segment_max(empty, np.zeros(3, np.int32)).tolist() == [-np.inf, -np.inf]


def test_segment_errors():
    x = np.arange(10, dtype=np.int32)[::-1].copy()
    keep = x.copy()
    out = np.full(10, 7, np.int32)
    bad = [
        (np.array([0, 2, 5, 3, 10], np.int64), r"offsets\[3\] = 3 is less than offsets\[2\] = 5"),
        (np.array([0, 4, 11], np.uint32), r"offsets\[2\] = 11 is past the end"),
        (np.array([-1, 4, 10], np.int32), r"offsets\[0\] = -1 is negative"),
    ]
    for offsets, message in bad:
        for call in (lambda: gpuprim.segment_sort(x, offsets, out=out),
                     lambda: gpuprim.segment_argsort(x, offsets),
                     lambda: gpuprim.segment_cumsum(x, offsets, out=out),
                     lambda: gpuprim.segment_scan(x, offsets, "max", out=out),
                     lambda: gpuprim.segment_sum(x, offsets),
                     lambda: gpuprim.segment_min(x, offsets)):
            with pytest.raises(gpuprim.InvalidArgumentError, match=message) as info:
                call()
            assert isinstance(info.value, ValueError) and info.value.status_name == "INVALID_ARGUMENT"
    np.testing.assert_array_equal(x, keep)
    assert (out == 7).all()  # nothing written
    good = np.array([0, 5, 10], np.int64)
    with pytest.raises(TypeError, match="offsets"):
        gpuprim.segment_sum(x, good.astype(np.float64))
    with pytest.raises(TypeError, match="offsets"):
        gpuprim.segment_sum(x, good.astype(np.int16))
    with pytest.raises(ValueError, match="offsets"):
        gpuprim.segment_sum(x, np.empty(0, np.int64))
    with pytest.raises(ValueError, match="offsets"):
        gpuprim.segment_sum(x, good.reshape(1, 3))
    with pytest.raises(TypeError, match="numpy array"):
        gpuprim.segment_sum(x, [0, 5, 10])
    with pytest.raises(ValueError, match="1-D"):
        gpuprim.segment_sort(x.reshape(2, 5), good)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.segment_sort(np.arange(20, dtype=np.int32)[::2], good)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.segment_sum(x, np.array([0, 0, 5, 5, 10, 10], np.int64)[::2])
    with pytest.raises(ValueError, match="op"):
        gpuprim.segment_scan(x, good, "prod")
    with pytest.raises(ValueError, match="elements"):
        gpuprim.segment_sort(x, good, out=np.empty(9, np.int32))
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="same kind"):
        gpuprim.segment_sum(torch.from_numpy(x), good)


def test_context_methods_mirror_functions():
    x = rng.integers(0, 50, size=(9, 40)).astype(np.uint16)
    offsets = np.array([0, 40, 100, 360], np.int32)
    with gpuprim.Context("cpu", cpu_threads=1) as context:
        np.testing.assert_array_equal(context.sort(x, axis=-1), np.sort(x, axis=-1))
        np.testing.assert_array_equal(context.argsort(x, axis=-1),
                                      np.argsort(x, axis=-1, kind="stable"))
        np.testing.assert_array_equal(context.sum(x, axis=-1), x.sum(axis=-1, dtype=np.uint16))
        np.testing.assert_array_equal(context.cumsum(x, axis=-1), np.cumsum(x, axis=-1, dtype=np.uint16))
        flat = x.reshape(-1)
        np.testing.assert_array_equal(context.segment_sum(flat, offsets),
                                      np.add.reduceat(flat, offsets[:-1], dtype=np.uint16))
        np.testing.assert_array_equal(context.segment_max(flat, offsets),
                                      np.maximum.reduceat(flat, offsets[:-1]))
        expected = np.concatenate([np.sort(flat[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
        np.testing.assert_array_equal(context.segment_sort(flat, offsets), expected)


def test_context_methods_default_to_rows_and_take_stable():
    # The module functions' array-API defaults hold for a context's methods:
    # axis=-1 (rows of an N-D array, a 1-D array whole) and stable=
    x = rng.standard_normal((7, 33)).astype(np.float32)
    with gpuprim.Context("cpu", cpu_threads=2) as context:
        np.testing.assert_array_equal(context.sort(x), np.sort(x, axis=-1))
        np.testing.assert_array_equal(context.sort(x, stable=False), np.sort(x, axis=-1))
        np.testing.assert_array_equal(context.argsort(x, stable=True), np.argsort(x, axis=-1, kind="stable"))
        values, indices = context.topk(x, 4)
        np.testing.assert_array_equal(values, -np.sort(-x, axis=-1)[:, :4])
        np.testing.assert_array_equal(np.take_along_axis(x, indices, axis=-1), values)
        np.testing.assert_array_equal(context.sort(x[0]), np.sort(x[0]))
        with pytest.raises(ValueError, match="1-D"):
            context.sort(x, axis=None)
        with pytest.raises(ValueError, match="1-D"):
            context.topk(x, 4, axis=None)


def test_argsort_large_and_int32_limit_message():
    # the indices come from the library now: check a size past one CPU block
    x = rng.integers(0, 1000, size=300_001).astype(np.float32)
    np.testing.assert_array_equal(gpuprim.argsort(x), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(gpuprim.argsort(x, dtype="int32"), np.argsort(x, kind="stable"))


def test_torch_cpu_rows_and_segments():
    torch = pytest.importorskip("torch")
    t = torch.randn(33, 65)
    values, indices = torch.sort(t, dim=-1, stable=True)
    assert torch.equal(gpuprim.sort(t, axis=-1), values)
    assert torch.equal(gpuprim.argsort(t, axis=-1), indices)
    s = gpuprim.sum(t, axis=-1)
    assert isinstance(s, torch.Tensor) and s.shape == (33,)
    assert torch.allclose(s, t.sum(dim=-1), atol=1e-4)
    assert torch.equal(gpuprim.max(t, axis=-1), t.max(dim=-1).values)
    offsets = torch.tensor([0, 100, 100, 2145], dtype=torch.int64)
    flat = t.reshape(-1)
    got = gpuprim.segment_sum(flat, offsets)
    assert isinstance(got, torch.Tensor) and got.shape == (3,) and float(got[1]) == 0.0
    c = gpuprim.segment_cumsum(flat, offsets)
    assert torch.equal(c[:100], torch.cumsum(flat[:100], 0)) or \
        torch.allclose(c[:100], torch.cumsum(flat[:100], 0), atol=1e-4)
