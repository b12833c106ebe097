# SPDX-License-Identifier: Apache-2.0
"""gpuprim.searchsorted, histogram (bins as a count or as edges, flat and per
row), bincount (flat and per row) and merge on numpy arrays (the
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

def histogram_even_rule(x, bins, range=None):
    """Counts of np.histogram(x, bins, range) for a float x by
    gpuprim_histogram_even's rule: bin floor((x - lower) * (bins / (upper -
    lower))) in float64, clamped to the last bin, so x == upper, and any x
    the rounding puts past the last bin, count in it. range: Python bounds,
    taken in x's float dtype as numpy takes them (elements outside dropped);
    default (x.min(), x.max()), widened by 0.5 each side where they are
    equal."""
    wide = x.astype(np.float64)
    if range is None:
        lower, upper = float(wide.min()), float(wide.max())
        if lower == upper:
            lower, upper = lower - 0.5, upper + 0.5
    else:
        lower, upper = (float(x.dtype.type(bound)) for bound in range)
        wide = wide[(wide >= lower) & (wide <= upper)]
    index = np.floor((wide - lower) * (bins / (upper - lower)))
    return np.bincount(np.minimum(index, bins - 1).astype(np.int64), minlength=bins)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + FLOAT_DTYPES)
def test_histogram_default_range(dtype):
    dt = dtype_of(dtype)
    for n in [1, 2, 100, 10000]:
        lo = 0 if dt.kind == "u" else -40
        x = rng.integers(lo, 40, size=n).astype(dt)
        for bins in [1, 2, 10, 80, 257]:
            try:
                want_counts, want_edges = np.histogram(x, bins)
            except ValueError:
                # numpy >= 2.5 refuses edges that collide in x's dtype (257
                # float16 bins over [-40, 40)); so does gpuprim, by numpy's edges
                with pytest.raises(ValueError):
                    gpuprim.histogram(x, bins)
                continue
            counts, edges = gpuprim.histogram(x, bins)
            assert counts.dtype == np.int64 and edges.dtype == want_edges.dtype
            np.testing.assert_array_equal(edges, want_edges)
            if dtype == "float16":
                # numpy bins by its float16 edges, rounded much more coarsely
                # than the library's float64 rule, so an element may sit a bin
                # away from numpy's (how many depends on the data): the counts
                # must be the rule's exactly (gpuprim_histogram_even, and
                # numpy's closed last bin)
                assert counts.sum() == want_counts.sum() == n
                np.testing.assert_array_equal(counts, histogram_even_rule(x, bins))
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
        # the library's rule exactly; numpy's counts may differ by elements
        # within a rounding of an inner edge, so only their total is its
        np.testing.assert_array_equal(counts, histogram_even_rule(x, bins, r), err_msg=f"{bins} {r}")
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


def test_histogram_python_bounds_in_the_float_dtype():
    # numpy rounds Python bounds to a float16/float32 x's dtype (NEP 50), so
    # float32(0.3) counts in range=(0.1, 0.3); comparing in float64 lost it
    for x, bounds in ((np.array([0.1, 0.2, 0.3], np.float32), (0.1, 0.3)),
                      (np.array([0.7, 0.9], np.float32), (0.7, 1.0)),
                      (np.array([0.1, 0.5, 0.9], np.float16), (0.1, 0.9))):
        for bins in (1, 3):
            counts = gpuprim.histogram(x, bins, range=bounds)[0]
            assert counts.sum() == x.size
            np.testing.assert_array_equal(counts.sum(), np.histogram(x, bins, range=bounds)[0].sum())
    x = np.array([0.1, 0.2, 0.3], np.float32)
    np.testing.assert_array_equal(gpuprim.histogram(x, 1, range=(0.1, 0.3))[0], [3])


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


# -- histogram with edges (bins an array) -----------------------------------------

def _edge_sets(dt):
    """Edges of several dtypes for x of dtype dt: its own values, int64 lists, float64 with
    fractions, with -inf/+inf ends for floats, duplicates, one bin, the dtype's extremes."""
    sets = [np.array([0, 1, 2, 5, 10], dt), [-3, 0, 0, 4, 30], [0.5, 2.5, 7.25], [2, 3],
            np.array([1, 1, 1, 9], np.int64), np.array([-1e9, 0.0, 1e9])]
    if dt.kind == "f":
        sets += [np.array([-np.inf, -1.0, 0.0, np.inf]), np.array([-2.0, -0.0, 0.0, np.inf], dt),
                 np.array([0.1, 0.2, 0.30000000000000004])]
    else:
        info = np.iinfo(dt)
        sets += [np.array([info.min, 0, info.max], dt), np.array([info.max - 1, info.max], dt),
                 np.array([info.min, info.min + 1], dt)]
    return [s for s in sets if dt.kind != "u" or np.min(s) >= 0 or np.asarray(s).dtype.kind == "f"]


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + FLOAT_DTYPES)
def test_histogram_edges_numpy(dtype):
    dt = dtype_of(dtype)
    for n in [0, 1, 7, 1000, 20000]:
        lo = 0 if dt.kind == "u" else -20
        x = rng.integers(lo, 40, size=n).astype(dt)
        if dt.kind == "f" and n > 2:
            x[::5] = np.nan
            x[1] = np.inf
            x[2] = -0.0
            x = np.where(rng.random(n) < 0.2, x + dt.type(0.5), x).astype(dt)
        for edges in _edge_sets(dt):
            if dt.kind != "f" and n:  # the dtype's extremes among the elements
                info = np.iinfo(dt)
                x[0], x[-1] = info.max, info.min
            counts, got_edges = gpuprim.histogram(x, edges)
            with np.errstate(invalid="ignore"):
                want_counts, want_edges = np.histogram(x, edges)
            assert counts.dtype == np.int64
            np.testing.assert_array_equal(got_edges, want_edges)
            np.testing.assert_array_equal(counts, want_counts, err_msg=f"{dtype} n={n} edges={edges}")


def test_histogram_edges_last_bin_closed():
    # elements equal to the last edge count in the last bin, as numpy counts them
    x = np.array([0, 1, 2, 2, 2, 3], np.int32)
    np.testing.assert_array_equal(gpuprim.histogram(x, [0, 1, 2])[0], [1, 4])
    np.testing.assert_array_equal(gpuprim.histogram(x, [0, 2, 2])[0], [2, 3])  # an empty-width last bin
    y = np.array([1.0, np.inf, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(gpuprim.histogram(y, [-np.inf, 0.0, np.inf])[0], [1, 3])
    big = np.iinfo(np.uint64).max
    z = np.array([big, big, 0, 5], np.uint64)
    np.testing.assert_array_equal(gpuprim.histogram(z, np.array([0, 5, big], np.uint64))[0], [1, 3])
    # one edge: no bins (numpy's answer)
    counts, edges = gpuprim.histogram(x, [1])
    assert counts.shape == (0,) and edges.tolist() == [1]


def test_histogram_edges_compare_as_numpy():
    # int64 elements past 2^53 with float edges compare in float64, as numpy compares them
    x = np.array([2**53, 2**53 + 1, 2**53 + 3, 5], np.int64)
    edges = np.array([0.0, float(2**53), float(2**54)])
    np.testing.assert_array_equal(gpuprim.histogram(x, edges)[0], np.histogram(x, edges)[0])
    # float32 elements with float64 edges that are not float32 values
    y = np.array([0.1, 0.2, 0.3], np.float32)
    e = np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(gpuprim.histogram(y, e)[0], np.histogram(y, e)[0])
    # uint64 with int64 edges (numpy compares them in float64)
    u = np.array([0, 3, 7, 2**63], np.uint64)
    np.testing.assert_array_equal(gpuprim.histogram(u, np.array([0, 3, 8]))[0],
                                  np.histogram(u, np.array([0, 3, 8]))[0])


def test_histogram_edges_errors():
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="monotonically"):
        gpuprim.histogram(x, [0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        gpuprim.histogram(x, [0.0, np.nan, 1.0])
    with pytest.raises(ValueError):
        gpuprim.histogram(x, np.zeros((2, 2)))
    with pytest.raises(ValueError):
        gpuprim.histogram(x, [])
    with pytest.raises(ValueError):
        gpuprim.histogram(x, "auto")
    with pytest.raises(TypeError):
        gpuprim.histogram(x, np.array([1 + 1j, 2 + 0j]))


# -- per-row histograms (axis=-1) -----------------------------------------------------

def _rows(x):
    """x as a 2-D array of its rows (a 1-D x: one row)."""
    return x.reshape(int(np.prod(x.shape[:-1])), x.shape[-1])


ROW_SHAPES = [(1, 9), (4, 0), (6, 1), (3, 1000), (500, 3), (2, 3, 17), (0, 5), (5,)]


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + FLOAT_DTYPES)
def test_histogram_rows_bins(dtype):
    dt = dtype_of(dtype)
    for shape in ROW_SHAPES:
        lo = 0 if dt.kind == "u" else -10
        x = rng.integers(lo, 30, size=shape).astype(dt)
        for bins, r in [(1, (0, 10)), (7, (-3, 22)), (40, None), (3, (100, 200))]:
            if dt.kind == "u" and r is not None and r[0] < 0:
                r = (0, r[1])
            if r is None and x.size == 0:
                continue
            counts, edges = gpuprim.histogram(x, bins, range=r, axis=-1)
            flat_counts, flat_edges = gpuprim.histogram(x, bins, range=r)
            np.testing.assert_array_equal(edges, flat_edges)  # the same edges as the flat call
            want_shape = (bins,) if x.ndim == 1 else x.shape[:-1] + (bins,)
            assert counts.shape == want_shape and counts.dtype == np.int64
            whole = r if r is not None else (x.min(), x.max())
            if whole[0] == whole[1]:
                whole = (whole[0] - 0.5, whole[1] + 0.5)
            for row, got in zip(_rows(x), counts.reshape(len(_rows(x)), bins)):
                want = np.histogram(row, bins, range=whole)[0]
                if dtype == "float16" and r is None:  # numpy's float16 edges round coarsely
                    assert got.sum() == want.sum()
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"{dtype} {shape} {bins} {r}")
            np.testing.assert_array_equal(counts.reshape(len(_rows(x)), bins).sum(axis=0), flat_counts)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + FLOAT_DTYPES)
def test_histogram_rows_edges(dtype):
    dt = dtype_of(dtype)
    for shape in ROW_SHAPES:
        lo = 0 if dt.kind == "u" else -10
        x = rng.integers(lo, 30, size=shape).astype(dt)
        if dt.kind == "f" and x.size:
            x.reshape(-1)[::3] = np.nan
        for edges in [np.array([0, 1, 2, 29], dt), [-5.5, 0.0, 3.25, 29.0], [3, 4]]:
            if dt.kind == "u" and np.min(edges) < 0:
                continue
            counts, got_edges = gpuprim.histogram(x, edges, axis=-1)
            bins = len(edges) - 1
            assert counts.shape == ((bins,) if x.ndim == 1 else x.shape[:-1] + (bins,))
            np.testing.assert_array_equal(got_edges, np.asarray(edges))
            for row, got in zip(_rows(x), counts.reshape(len(_rows(x)), bins)):
                with np.errstate(invalid="ignore"):
                    np.testing.assert_array_equal(got, np.histogram(row, edges)[0],
                                                  err_msg=f"{dtype} {shape} {edges}")


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_bincount_rows(dtype):
    dt = dtype_of(dtype)
    for shape in ROW_SHAPES:
        x = rng.integers(0, 20, size=shape).astype(dt)
        for minlength in [0, 3, 50]:
            counts = gpuprim.bincount(x, minlength=minlength, axis=-1)
            bins = max(minlength, int(x.max()) + 1 if x.size else 0)
            if x.ndim == 1:
                np.testing.assert_array_equal(counts, np.bincount(x.astype(np.int64), minlength=minlength))
                continue
            assert counts.shape == x.shape[:-1] + (bins,) and counts.dtype == np.int64
            for row, got in zip(_rows(x), counts.reshape(len(_rows(x)), bins)):
                np.testing.assert_array_equal(got, np.bincount(row.astype(np.int64), minlength=bins))


def test_rows_axis_errors():
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(ValueError, match="axis"):
        gpuprim.histogram(x, 3, axis=0)
    with pytest.raises(ValueError, match="axis"):
        gpuprim.bincount(x.astype(np.int32), axis=0)
    with pytest.raises(ValueError, match="negative"):
        gpuprim.bincount(np.array([[0, 1], [2, -1]], np.int8), axis=-1)
    # the default flattens, as numpy does
    np.testing.assert_array_equal(gpuprim.histogram(x, 3)[0], np.histogram(x, 3)[0])
    np.testing.assert_array_equal(gpuprim.histogram(x, 3, axis=1)[0][1], np.histogram(x[1], 3, range=(0, 11))[0])


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


def test_merge_refuses_dtypes_of_one_width():
    # bool and uint8 are one dtype code to the library: their merge would
    # write uint8 bytes (2, 200) into a bool result, or the result's dtype
    # would follow the order of the arguments.
    flags = np.array([False, True, True])
    small = np.array([2, 200], np.uint8)
    for a, b in ((flags, small), (small, flags)):
        with pytest.raises(TypeError, match="merge: b has dtype"):
            gpuprim.merge(a, b)
    keys = np.array([1, 2], np.int32)
    with pytest.raises(TypeError, match="values_b has dtype"):
        gpuprim.merge(keys, keys, values_a=flags[:2], values_b=small)
    np.testing.assert_array_equal(gpuprim.merge(flags, np.array([False, True])), [False, False, True, True, True])


def test_merge_refuses_values_of_another_kind():
    # numpy keys with JAX values gave (numpy keys, JAX values) where every
    # other call with values refuses the mix.
    jnp = pytest.importorskip("jax.numpy")
    keys = np.array([1, 3], np.int32)
    values = np.array([10, 30], np.int32)  # JAX's default integers are 32-bit
    with pytest.raises(TypeError, match="merge: values_b must be of the same kind and device as b"):
        gpuprim.merge(keys, keys, values_a=values, values_b=jnp.asarray(values))
    with pytest.raises(TypeError, match="merge: values_a must be of the same kind and device as a"):
        gpuprim.merge(keys, keys, values_a=jnp.asarray(values), values_b=values)
