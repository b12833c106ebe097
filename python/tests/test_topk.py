# SPDX-License-Identifier: Apache-2.0
"""gpuprim.topk and gpuprim.segment_topk on numpy arrays (CPU backend) against
the definition: the first k of the stable argsort (reference.sort_permutation,
written from gpuprim.h), checked bit for bit, and against numpy where numpy
agrees (no NaNs, no signed zeros)."""
import numpy as np
import pytest

import gpuprim
from reference import ALL_DTYPES, PATTERNS, bits, dtype_of, is_float, pattern, sort_permutation

rng = np.random.default_rng(20261201)

INDEX_DTYPES = ["int64", "int32", "uint32", "uint64"]
KS = [0, 1, 2, 7, 8, 16, 63, 64, 65, 1024, 4096, 4097]


def ks_for(n):
    return sorted({k for k in KS if k <= n} | ({n - 1, n} if n else {0}))


def expected_topk(x, k, largest):
    order = sort_permutation(x, descending=largest)[:k]
    return x[order], order


def assert_same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(bits(np.ascontiguousarray(got)), bits(np.ascontiguousarray(want)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("largest", [True, False])
def test_flat(dtype, largest):
    for n in [0, 1, 2, 31, 33, 257, 1000, 4097, 70001]:
        kind = PATTERNS[n % len(PATTERNS)]
        x = pattern(dtype, n, kind, rng)
        for k in ks_for(n):
            values, indices = gpuprim.topk(x, k, largest=largest)
            want_values, want_indices = expected_topk(x, k, largest)
            assert indices.dtype == np.int64 and values.dtype == x.dtype
            np.testing.assert_array_equal(indices, want_indices, err_msg=f"n={n} k={k} {kind}")
            assert_same_bits(values, want_values)


@pytest.mark.parametrize("kind", PATTERNS)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_flat_patterns_and_index_dtypes(kind, index_dtype):
    for dtype in ALL_DTYPES:
        x = pattern(dtype, 3000, kind, rng)
        for largest in (True, False):
            values, indices = gpuprim.topk(x, 100, largest=largest, dtype=index_dtype)
            want_values, want_indices = expected_topk(x, 100, largest)
            assert indices.dtype == np.dtype(index_dtype)
            np.testing.assert_array_equal(indices.astype(np.int64), want_indices)
            assert_same_bits(values, want_values)


def test_matches_numpy_without_nans():
    """Without NaNs and signed zeros, numpy's stable argsort gives the same
    answer (ascending; descending: the stable argsort of the negation)."""
    x = rng.integers(-50, 50, size=10000).astype(np.float32)
    x[x == 0] = 1.5
    values, indices = gpuprim.topk(x, 300, largest=False)
    np.testing.assert_array_equal(indices, np.argsort(x, kind="stable")[:300])
    values, indices = gpuprim.topk(x, 300)
    np.testing.assert_array_equal(indices, np.argsort(-x, kind="stable")[:300])
    np.testing.assert_array_equal(values, x[indices])


def test_ties_and_specials():
    x = np.array([2.0, 1.0, 2.0, np.nan, -0.0, 0.0, 1.0, 2.0, -np.inf], dtype=np.float32)
    values, indices = gpuprim.topk(x, 4)
    np.testing.assert_array_equal(indices, [3, 0, 2, 7])  # NaN first, ties by position
    assert np.isnan(values[0]) and list(values[1:]) == [2.0, 2.0, 2.0]
    values, indices = gpuprim.topk(x, 4, largest=False)
    np.testing.assert_array_equal(indices, [8, 4, 5, 1])  # -0.0 below +0.0
    assert np.signbit(values[1]) and not np.signbit(values[2])
    same = np.full(10, 7, np.uint8)
    for largest in (True, False):
        np.testing.assert_array_equal(gpuprim.topk(same, 4, largest=largest)[1], [0, 1, 2, 3])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_rows(dtype):
    for shape in [(0, 5), (5, 0), (1, 7), (300, 1), (64, 33), (3, 5000), (2, 3, 17)]:
        x = pattern(dtype, int(np.prod(shape)), "few" if shape[-1] % 2 else "random", rng).reshape(shape)
        length = shape[-1]
        for k in sorted({0, min(1, length), min(8, length), length // 2, length}):
            for largest in (True, False):
                values, indices = gpuprim.topk(x, k, largest=largest, axis=-1)
                assert values.shape == shape[:-1] + (k,) and indices.shape == shape[:-1] + (k,)
                count = int(np.prod(shape[:-1]))
                rows = x.reshape(count, length)
                for r in range(count):
                    want_values, want_indices = expected_topk(rows[r], k, largest)
                    np.testing.assert_array_equal(indices.reshape(count, k)[r], want_indices)
                    assert_same_bits(values.reshape(count, k)[r], want_values)


def test_rows_k_past_length():
    x = np.zeros((4, 3), np.float32)
    with pytest.raises(gpuprim.InvalidArgumentError):
        gpuprim.topk(x, 4, axis=-1)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        gpuprim.topk(x.ravel(), 13)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("offset_dtype", INDEX_DTYPES)
def test_segments(dtype, offset_dtype):
    n = 20000
    x = pattern(dtype, n, "few" if offset_dtype.startswith("u") else "random", rng)
    lengths = np.minimum((1.0 / (rng.random(200) + 1e-3) ** 2).astype(np.int64), 5000)
    lengths[rng.integers(0, 200, size=20)] = 0
    ends = np.cumsum(lengths)
    ends = ends[ends <= n - 10]
    offsets = np.concatenate(([5], 5 + ends)).astype(offset_dtype)  # elements before and after
    for k in [0, 1, 7, 64, 1024]:
        for largest in (True, False):
            index_dtype = INDEX_DTYPES[(k + largest) % 4]
            values, indices = gpuprim.segment_topk(x, offsets, k, largest=largest, dtype=index_dtype)
            assert values.shape == (offsets.size - 1, k) and indices.dtype == np.dtype(index_dtype)
            missing = -1 if index_dtype.startswith("int") else np.iinfo(index_dtype).max
            for s in range(offsets.size - 1):
                segment = x[int(offsets[s]):int(offsets[s + 1])]
                m = min(k, segment.size)
                want_values, want_indices = expected_topk(segment, m, largest)
                np.testing.assert_array_equal(indices[s, :m].astype(np.int64), want_indices)
                assert_same_bits(values[s, :m], want_values)
                assert (indices[s, m:] == missing).all()
                assert (values[s, m:] == 0).all()


def test_segment_errors():
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(gpuprim.InvalidArgumentError, match=r"offsets\[2\]"):
        gpuprim.segment_topk(x, np.array([0, 5, 3, 8]), 2)
    with pytest.raises(TypeError):
        gpuprim.segment_topk(x, np.array([0, 8], np.float32), 2)
    with pytest.raises(TypeError):
        gpuprim.topk(x, 2, dtype="int16")
    with pytest.raises(TypeError):
        gpuprim.topk(x, 2.0)
    with pytest.raises(ValueError):
        gpuprim.topk(x, -1)
    with pytest.raises(ValueError):
        gpuprim.topk(x.reshape(2, 4), 2, axis=None)  # axis=None: 1-D only
    with pytest.raises(ValueError):
        gpuprim.topk(x.reshape(2, 4), 2, axis=0)


def test_large_flat():
    """Past the CPU's 2^16-key chunks (selected on every thread)."""
    x = pattern("float32", (1 << 20) + 3, "random", rng)
    for k in (1, 1024, 300000):
        values, indices = gpuprim.topk(x, k)
        want_values, want_indices = expected_topk(x, k, True)
        np.testing.assert_array_equal(indices, want_indices)
        assert_same_bits(values, want_values)


def test_is_float_reference_sane():
    """The reference puts NaNs first among the largest (sort_permutation descending)."""
    x = np.array([1.0, np.nan, 3.0], np.float64)
    assert is_float(x.dtype)
    np.testing.assert_array_equal(expected_topk(x, 2, True)[1], [1, 2])
    assert dtype_of("float32") == np.float32


def test_k_checked_before_the_outputs_are_made():
    """A k past the data is the library's InvalidArgumentError naming k,
    raised before outputs of k elements are allocated (issue 35: topk(x,
    2**40) failed in numpy's allocator, "Unable to allocate 4.00 TiB")."""
    x = np.arange(10, dtype=np.float32)
    for k in (11, 2 ** 40, 2 ** 63):
        with pytest.raises(gpuprim.InvalidArgumentError, match=f"k = {k} is more than the 10 "
                                                               "elements") as info:
            gpuprim.topk(x, k)
        assert isinstance(info.value, ValueError) and info.value.status_name == "INVALID_ARGUMENT"
        with pytest.raises(gpuprim.InvalidArgumentError, match=f"k = {k} is more than the length "
                                                               "of x's rows, 5"):
            gpuprim.topk(x.reshape(2, 5), k, axis=-1)
    with pytest.raises(gpuprim.InvalidArgumentError, match="k = 1 is more than the 0 elements"):
        gpuprim.topk(np.empty(0, np.int8), 1)
    with pytest.raises(gpuprim.InvalidArgumentError, match="k = 1 is more than the length"):
        gpuprim.topk(np.empty((3, 0), np.int8), 1, axis=-1)
    with pytest.raises(gpuprim.InvalidArgumentError, match="rows"):
        gpuprim.topk(np.empty((0, 4), np.int8), 5, axis=-1)  # no rows: still the rows' length
    # the k check comes before the index dtype's
    with pytest.raises(gpuprim.InvalidArgumentError, match="k = "):
        gpuprim.topk(x, 2 ** 40, dtype="int16")
    # CSR segments: k past every segment is the contract (padded slots), but
    # segments * k must fit 64 bits: the library's check, before allocating
    offsets = np.array([0, 4, 4, 10], np.int64)
    with pytest.raises(gpuprim.InvalidArgumentError, match="3 segments of k = 9223372036854775807 "
                                                           "results overflow 64 bits") as info:
        gpuprim.segment_topk(x, offsets, 2 ** 63 - 1)
    assert info.value.status_name == "SIZE_MISMATCH"
    values, indices = gpuprim.segment_topk(x, offsets, 12)  # past len(x): padded
    assert values.shape == (3, 12) and (indices[:, 6:] == -1).all()
