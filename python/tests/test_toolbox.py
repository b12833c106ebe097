# SPDX-License-Identifier: Apache-2.0
"""gpuprim.searchsorted, histogram, bincount and merge on numpy arrays (the
CPU backend; no torch imported) against numpy, and against the definition
(reference.sort_permutation / radix_key, written from gpuprim.h) where the
library's float order differs from numpy's (-0.0 before +0.0, NaNs by bit
pattern): random and adversarial data (duplicates at the bounds, empty
inputs, NaN, one bin, values outside the range)."""
import numpy as np
import pytest

import gpuprim
from reference import ALL_DTYPES, PATTERNS, dtype_of, is_float, pattern, radix_key, sort_permutation

rng = np.random.default_rng(20261127)
INTEGER_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]


def test_torch_free():
    # numpy in, numpy out, through the general path only (no torch needed)
    counts, edges = gpuprim.histogram(np.arange(4.0), bins=2)
    assert type(counts) is np.ndarray and type(edges) is np.ndarray


# -- searchsorted ---------------------------------------------------------------

def _sorted(x, descending=False):
    return x[sort_permutation(x, descending=descending)]


def _reference_search(a, v, side, descending):
    """The definition: positions by the library's order (radix keys)."""
    ka, kv = radix_key(a, descending), radix_key(v, descending)
    return np.searchsorted(ka, kv, side=side)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("descending", [False, True])
def test_searchsorted_definition(dtype, side, descending):
    for n, m in [(0, 5), (1, 3), (7, 0), (31, 100), (1000, 1000), (4097, 333)]:
        kind = PATTERNS[(n + m) % len(PATTERNS)]
        a = _sorted(pattern(dtype, n, kind, rng), descending)
        # queries: the keys themselves (duplicates at every bound), plus random ones
        v = np.concatenate((a, pattern(dtype, m, "random", rng)))
        rng.shuffle(v)
        got = gpuprim.searchsorted(a, v, side=side, descending=descending)
        assert got.dtype == np.int64 and got.shape == v.shape
        np.testing.assert_array_equal(got, _reference_search(a, v, side, descending))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "float32", "float64", "float16"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_numpy(dtype, side):
    dt = dtype_of(dtype)
    for n in [0, 1, 2, 100, 5000]:
        a = np.sort(rng.integers(0, 50, size=n).astype(dt))  # many duplicates
        v = rng.integers(-5, 60, size=777).astype(dt) if dt.kind != "u" else \
            rng.integers(0, 60, size=777).astype(dt)
        v[:3] = [a[0] if n else 0, a[-1] if n else 0, 0]
        np.testing.assert_array_equal(gpuprim.searchsorted(a, v, side=side),
                                      np.searchsorted(a, v, side=side))
        # v of any shape; other index dtypes
        v2 = v[:776].reshape(4, 194)
        got = gpuprim.searchsorted(a, v2, side=side, dtype="int32")
        assert got.dtype == np.int32 and got.shape == v2.shape
        np.testing.assert_array_equal(got, np.searchsorted(a, v2, side=side))


def test_searchsorted_float_order():
    a = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan], np.float64)
    v = np.array([0.0, -0.0, np.nan, np.inf])
    # the library's order: -0.0 before +0.0 (numpy ties them), NaN after +inf
    np.testing.assert_array_equal(gpuprim.searchsorted(a, v), [3, 2, 6, 5])
    np.testing.assert_array_equal(gpuprim.searchsorted(a, v, side="right"), [4, 3, 7, 6])
    np.testing.assert_array_equal(np.searchsorted(a, v[2:]), [6, 5])


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("descending", [False, True])
def test_searchsorted_rows(side, descending):
    for rows, n, m in [(1, 10, 4), (3, 0, 5), (4, 17, 0), (5, 100, 33), (2, 3, 1000)]:
        a = np.sort(rng.integers(-20, 20, size=(rows, n)).astype(np.int32), axis=-1)
        if descending:
            a = a[:, ::-1].copy()
        v = rng.integers(-25, 25, size=(rows, m)).astype(np.int32)
        got = gpuprim.searchsorted(a, v, side=side, descending=descending)
        assert got.shape == (rows, m)
        for r in range(rows):
            np.testing.assert_array_equal(got[r], _reference_search(a[r], v[r], side, descending))
    a3 = np.sort(rng.standard_normal((2, 3, 8)), axis=-1)
    v3 = rng.standard_normal((2, 3, 5))
    got = gpuprim.searchsorted(a3, v3, side=side)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(got[i, j], np.searchsorted(a3[i, j], v3[i, j], side=side))


def test_searchsorted_errors():
    a = np.arange(5, dtype=np.int32)
    with pytest.raises(ValueError):
        gpuprim.searchsorted(a, a, side="middle")
    with pytest.raises(TypeError):
        gpuprim.searchsorted(a, a.astype(np.int64))
    with pytest.raises(ValueError):
        gpuprim.searchsorted(a.reshape(1, 5), np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError):
        gpuprim.searchsorted(a, a, dtype="float32")


# -- histogram ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTEGER_DTYPES + FLOAT_DTYPES)
def test_histogram_default_range(dtype):
    dt = dtype_of(dtype)
    for n in [1, 2, 100, 10000]:
        lo = 0 if dt.kind == "u" else -40
        x = rng.integers(lo, 40, size=n).astype(dt)
        for bins in [1, 2, 10, 80, 257]:
            counts, edges = gpuprim.histogram(x, bins)
            want_counts, want_edges = np.histogram(x, bins)
            assert counts.dtype == np.int64 and edges.dtype == want_edges.dtype
            np.testing.assert_array_equal(edges, want_edges)
            if dtype == "float16":
                # numpy bins by its float16 edges, rounded much more coarsely
                # than our float64 arithmetic: elements move to a next bin
                assert counts.sum() == want_counts.sum() == n
                assert np.abs(np.cumsum(counts - want_counts)).max() <= max(3, n // 50)
            else:
                np.testing.assert_array_equal(counts, want_counts)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + FLOAT_DTYPES)
def test_histogram_range(dtype):
    dt = dtype_of(dtype)
    ranges = [(0, 10), (2, 3), (5, 6), (1, 100), (0.5, 9.5), (-3, 7)]
    for n in [0, 1, 1000, 20000]:
        lo = 0 if dt.kind == "u" else -20
        x = rng.integers(lo, 30, size=n).astype(dt)  # elements outside, duplicates on the bounds
        for r in ranges:
            if dt.kind == "u" and r[0] < 0:
                continue
            for bins in [1, 3, 10, 64]:
                counts, edges = gpuprim.histogram(x, bins, range=r)
                want_counts, want_edges = np.histogram(x, bins, range=r)
                assert edges.dtype == want_edges.dtype
                np.testing.assert_array_equal(edges, want_edges)
                np.testing.assert_array_equal(counts, want_counts, err_msg=f"{dtype} {r} {bins}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_random_floats(dtype):
    x = rng.standard_normal(100000).astype(dtype)
    for bins, r in [(10, None), (100, (-2.0, 2.0)), (1, (-1.0, 1.0)), (7, (0.0, 3.0))]:
        counts, edges = gpuprim.histogram(x, bins, range=r)
        want_counts, want_edges = np.histogram(x, bins, range=r)
        np.testing.assert_allclose(edges, want_edges)
        # random values are almost never within a rounding of an inner edge
        assert np.abs(counts - want_counts).sum() <= 2
        assert counts.sum() == want_counts.sum()


def test_histogram_bounds_nan_and_outside():
    x = np.array([0.0, 1.0, np.nan, -1.0, 2.0, 1.0, np.nextafter(1.0, 0), 0.5, -0.0, np.inf])
    counts, edges = gpuprim.histogram(x, 2, range=(0, 1))
    # numpy: NaN and out-of-range ignored, 1.0 in the closed last bin
    np.testing.assert_array_equal(counts, [2, 4])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(counts, np.histogram(x, 2, range=(0, 1))[0])
    with pytest.raises(ValueError):
        gpuprim.histogram(x, 2)  # autodetected range with NaN
    with pytest.raises(ValueError):
        gpuprim.histogram(x, 0, range=(0, 1))
    with pytest.raises(ValueError):
        gpuprim.histogram(x, 2, range=(1, 1))
    # float32 just below the upper bound lands in the last bin
    y = np.array([np.nextafter(np.float32(1), np.float32(0))] * 5, np.float32)
    np.testing.assert_array_equal(gpuprim.histogram(y, 256, range=(0, 1))[0][-1], 5)


def test_histogram_empty_and_constant():
    counts, edges = gpuprim.histogram(np.empty(0, np.float32), 4)
    want = np.histogram(np.empty(0, np.float32), 4)
    np.testing.assert_array_equal(counts, want[0])
    np.testing.assert_array_equal(edges, want[1])
    for x in [np.full(9, 3.0), np.full(5, 7, np.int32)]:
        counts, edges = gpuprim.histogram(x, 5)
        want = np.histogram(x, 5)
        np.testing.assert_array_equal(counts, want[0])
        np.testing.assert_array_equal(edges, want[1])


def test_histogram_dtype_max_bound():
    # upper is the dtype's largest value: no value above it
    x = np.array([0, 100, 127, 127, -128], np.int8)
    np.testing.assert_array_equal(gpuprim.histogram(x, 3, range=(0, 127))[0],
                                  np.histogram(x, 3, range=(0, 127))[0])
    big = np.finfo(np.float16).max
    y = np.array([0, big, big, 1], np.float16)
    np.testing.assert_array_equal(gpuprim.histogram(y, 2, range=(0, float(big)))[0], [2, 2])


def test_histogram_2d_input():
    x = rng.integers(0, 10, size=(30, 7)).astype(np.int16)
    np.testing.assert_array_equal(gpuprim.histogram(x, 5)[0], np.histogram(x, 5)[0])


# -- bincount -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_bincount(dtype):
    dt = dtype_of(dtype)
    for n in [0, 1, 5, 1000, 50000]:
        x = rng.integers(0, 100, size=n).astype(dt)
        for minlength in [0, 1, 50, 300]:
            got = gpuprim.bincount(x, minlength=minlength)
            want = np.bincount(x.astype(np.int64), minlength=minlength)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, want)


def test_bincount_errors():
    with pytest.raises(ValueError, match="x"):
        gpuprim.bincount(np.array([0, 1, -1], np.int32))
    with pytest.raises(TypeError):
        gpuprim.bincount(np.array([0.0, 1.0]))
    np.testing.assert_array_equal(gpuprim.bincount(np.array([3, 3], np.uint8)), [0, 0, 0, 2])
    assert gpuprim.bincount(np.empty(0, np.int64)).size == 0


# -- merge ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_merge(dtype, descending):
    for na, nb in [(0, 0), (0, 5), (7, 0), (1, 1), (100, 3), (1000, 1000), (4097, 70001)]:
        a = _sorted(pattern(dtype, na, PATTERNS[na % len(PATTERNS)], rng), descending)
        b = _sorted(pattern(dtype, nb, PATTERNS[nb % len(PATTERNS)], rng), descending)
        both = np.concatenate((a, b))
        order = sort_permutation(both, descending=descending)  # stable: ties from a first
        keys = gpuprim.merge(a, b, descending=descending)
        np.testing.assert_array_equal(keys.view(f"u{keys.itemsize}"),
                                      both[order].view(f"u{keys.itemsize}"))
        va, vb = np.arange(na, dtype=np.int64), np.arange(na, na + nb, dtype=np.int64)
        keys, values = gpuprim.merge(a, b, values_a=va, values_b=vb, descending=descending)
        np.testing.assert_array_equal(values, order)


def test_merge_numpy_ties():
    a = np.array([1, 2, 2, 5], np.int32)
    b = np.array([0, 2, 5, 9], np.int32)
    keys, values = gpuprim.merge(a, b, values_a=np.array([10, 11, 12, 13]), values_b=np.array([20, 21, 22, 23]))
    np.testing.assert_array_equal(keys, np.sort(np.concatenate((a, b)), kind="stable"))
    np.testing.assert_array_equal(values, [20, 10, 11, 12, 21, 13, 22, 23])
    with pytest.raises(ValueError):
        gpuprim.merge(a, b, values_a=np.arange(4))
