# SPDX-License-Identifier: Apache-2.0
"""gpuprim.reduce_by_key, groupby_sum, groupby_min and groupby_max on numpy
arrays (the CPU backend) against numpy references (the pandas groupby
results, made with numpy: np.unique's groups, np.add.at / np.minimum.at /
np.maximum.at in input order): every key dtype, several value dtypes,
random and adversarial keys (NaNs of both signs and several payloads, +-0,
the dtypes' extremes, runs), empty and one-element inputs. Runs of
reduce_by_key compare keys by bits; groupby's keys group as np.unique's.
Float sums within a tolerance, integer sums, min and max exactly."""
import numpy as np
import pytest

import gpuprim
from reference import ALL_DTYPES, PATTERNS, is_float, pattern

rng = np.random.default_rng(20261128)
SIZES = [0, 1, 2, 31, 1000, 4097, 70001]
VALUE_DTYPES = ["float32", "float64", "int32", "int64", "uint8", "uint64", "float16", "bool"]


def _bits(x):
    return x.view(f"u{x.dtype.itemsize}")


def _wide(x):
    """x in a dtype numpy computes with exactly (bfloat16 widened to float32)."""
    return x.astype(np.float32) if x.dtype.name == "bfloat16" else x


def _values(dtype, n):
    """Values for sums: floats in [-100, 100] (float16: [-1, 1]; no overflow,
    no NaN), integers over their whole range (sums wrap as numpy's do), bools."""
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.startswith("float"):
        bound = 1 if dtype == "float16" else 100
        return rng.uniform(-bound, bound, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def _sum_dtype(dtype):
    return {"bool": np.int64, "int32": np.int64, "uint8": np.uint64}.get(dtype, np.dtype(dtype))


def _check_sums(got, values, groups, count, dtype):
    """got against the sums of values by group (groups[i]: element i's group),
    in input order; floats within a tolerance of the float64 sum."""
    want_dtype = _sum_dtype(dtype)
    assert got.dtype == want_dtype
    if dtype.startswith("float"):
        want = np.zeros(count, np.float64)
        np.add.at(want, groups, values.astype(np.float64))
        magnitude = np.zeros(count, np.float64)
        np.add.at(magnitude, groups, np.abs(values.astype(np.float64)))
        eps = float(np.finfo(dtype).eps)
        tolerance = 32 * eps * magnitude + 1e-30
        assert np.all(np.abs(got.astype(np.float64) - want) <= tolerance)
    else:
        want = np.zeros(count, want_dtype)
        with np.errstate(over="ignore"):
            np.add.at(want, groups, values.astype(want_dtype))
        np.testing.assert_array_equal(got, want)


def _extreme(values, groups, count, op):
    """np.minimum.at / np.maximum.at per group (NaN wins)."""
    wide = _wide(values)
    if values.dtype == bool:
        wide = values.astype(np.uint8)
    if wide.dtype.kind == "f":
        start = np.inf if op == "min" else -np.inf
    else:
        info = np.iinfo(wide.dtype)
        start = info.max if op == "min" else info.min
    want = np.full(count, start, wide.dtype)
    (np.minimum if op == "min" else np.maximum).at(want, groups, wide)
    return want


def _runs(keys):
    """(heads, run of each element) of runs of equal bits."""
    b = _bits(keys)
    n = b.size
    heads = np.flatnonzero(np.concatenate(([True], b[1:] != b[:-1]))) if n else np.zeros(0, np.int64)
    ids = np.repeat(np.arange(heads.size), np.diff(np.concatenate((heads, [n])))) if n else heads
    return heads, ids


def _with_runs(dtype, n):
    x = pattern(dtype, n, "random", rng)
    return np.repeat(x, rng.integers(1, 5, n))[:n] if n else x


def _groups(keys):
    """np.unique's groups of keys: (sorted distinct keys, counts, inverse)."""
    wide = _wide(keys)
    if wide.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            wide = np.where(np.isnan(wide), np.nan, wide + 0).astype(wide.dtype)
    distinct, inverse, counts = np.unique(wide, return_inverse=True, return_counts=True)
    return distinct, counts, inverse.reshape(-1)


@pytest.mark.parametrize("key_dtype", ALL_DTYPES)
def test_reduce_by_key(key_dtype):
    for n in SIZES:
        for keys in (_with_runs(key_dtype, n), pattern(key_dtype, n, PATTERNS[n % len(PATTERNS)], rng)):
            heads, ids = _runs(keys)
            for value_dtype in VALUE_DTYPES:
                values = _values(value_dtype, n)
                got_keys, sums, lengths = gpuprim.reduce_by_key(keys, values, return_counts=True)
                np.testing.assert_array_equal(_bits(got_keys), _bits(keys[heads]))
                np.testing.assert_array_equal(lengths, np.bincount(ids, minlength=heads.size))
                assert lengths.dtype == np.int64
                _check_sums(sums, values, ids, heads.size, value_dtype)
                for op in ("min", "max"):
                    got_keys, got = gpuprim.reduce_by_key(keys, values, op)
                    assert got.dtype == values.dtype
                    np.testing.assert_array_equal(_bits(got_keys), _bits(keys[heads]))
                    np.testing.assert_array_equal(_wide(got), _extreme(values, ids, heads.size, op))


@pytest.mark.parametrize("key_dtype", ALL_DTYPES)
def test_groupby(key_dtype):
    for n in SIZES:
        keys = pattern(key_dtype, n, PATTERNS[n % len(PATTERNS)], rng)
        distinct, counts, inverse = _groups(keys)
        for value_dtype in VALUE_DTYPES:
            values = _values(value_dtype, n)
            got_keys, sums = gpuprim.groupby_sum(keys, values)
            np.testing.assert_array_equal(_wide(got_keys), distinct)
            assert got_keys.dtype == keys.dtype
            _check_sums(sums, values, inverse, distinct.size, value_dtype)
            for op, function in (("min", gpuprim.groupby_min), ("max", gpuprim.groupby_max)):
                got_keys, got, got_counts = function(keys, values, return_counts=True)
                np.testing.assert_array_equal(_wide(got_keys), distinct)
                np.testing.assert_array_equal(got_counts, counts)
                assert got.dtype == values.dtype
                np.testing.assert_array_equal(_wide(got), _extreme(values, inverse, distinct.size, op))


@pytest.mark.parametrize("value_dtype", ["float16", "float32", "float64"])
def test_float_values_special(value_dtype):
    """NaN values win min and max and spread through sums; +-inf; -0.0 < +0.0 in min/max."""
    keys = np.array([1, 1, 2, 2, 3, 3, 4, 4, 5], np.int32)
    values = np.array([np.nan, 1, -np.inf, 5, -0.0, 0.0, np.inf, -np.inf, -0.0], value_dtype)
    k, s = gpuprim.groupby_sum(keys, values)
    np.testing.assert_array_equal(k, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(s, np.array([np.nan, -np.inf, 0.0, np.nan, -0.0], value_dtype))
    _, low = gpuprim.groupby_min(keys, values)
    _, high = gpuprim.groupby_max(keys, values)
    np.testing.assert_array_equal(low, np.array([np.nan, -np.inf, -0.0, -np.inf, -0.0], value_dtype))
    np.testing.assert_array_equal(high, np.array([np.nan, 5, 0.0, np.inf, -0.0], value_dtype))
    assert np.signbit(low[2]) and not np.signbit(high[2])
    _, low = gpuprim.reduce_by_key(keys, values, "min")
    assert np.signbit(low[2])


def test_known_answers():
    keys, sums = gpuprim.reduce_by_key(np.array([1, 1, 2, 1]), np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(keys, [1, 2, 1])
    np.testing.assert_array_equal(sums, [3.0, 3.0, 4.0])
    keys, sums, counts = gpuprim.groupby_sum(np.array([3, 1, 3]), np.array([1, 2, 4]), return_counts=True)
    np.testing.assert_array_equal(keys, [1, 3])
    np.testing.assert_array_equal(sums, [2, 5])
    np.testing.assert_array_equal(counts, [1, 2])
    # runs by bits: -0.0 and +0.0 are two runs; groups by value: one group
    f = np.array([0.0, -0.0, np.nan, -np.nan], np.float32)
    keys, sums, lengths = gpuprim.reduce_by_key(f, np.ones(4, np.int32), return_counts=True)
    np.testing.assert_array_equal(lengths, [1, 1, 1, 1])
    keys, sums, counts = gpuprim.groupby_sum(f, np.ones(4, np.int32), return_counts=True)
    np.testing.assert_array_equal(keys, [0.0, np.nan])
    np.testing.assert_array_equal(sums, [2, 2])
    # sum dtypes: widened as sum(), or dtype=
    assert gpuprim.groupby_sum(np.array([1, 1], np.int8), np.array([100, 100], np.int8))[1].dtype == np.int64
    got = gpuprim.groupby_sum(np.array([1, 1], np.int8), np.array([100, 100], np.int8), dtype=np.int8)[1]
    np.testing.assert_array_equal(got, np.array([200], np.int64).astype(np.int8))
    empty = gpuprim.groupby_max(np.zeros(0, np.int64), np.zeros(0, np.float32), return_counts=True)
    assert [a.size for a in empty] == [0, 0, 0]
    assert empty[1].dtype == np.float32


def test_errors():
    keys = np.arange(5, dtype=np.int32)
    with pytest.raises(ValueError):
        gpuprim.reduce_by_key(keys, np.ones(4))  # values of another length
    with pytest.raises(ValueError):
        gpuprim.groupby_sum(keys, np.ones(6))
    with pytest.raises(ValueError):
        gpuprim.reduce_by_key(keys, np.ones(5), "mean")
    with pytest.raises(ValueError):
        gpuprim.reduce_by_key(keys.reshape(5, 1), np.ones(5))
    with pytest.raises(ValueError):
        gpuprim.groupby_min(keys, np.ones((5, 1)))
    with pytest.raises(ValueError):
        gpuprim.reduce_by_key(keys, np.ones(5), "max", dtype=np.float32)
    with pytest.raises(TypeError):
        gpuprim.groupby_sum(keys, np.ones(5), dtype="complex64")
    with pytest.raises(TypeError):
        gpuprim.reduce_by_key(keys, None)
    with pytest.raises(TypeError):
        gpuprim.groupby_sum(keys, [1, 2, 3, 4, 5])


def test_unique_is_group_by():
    """unique (now one group-by call) against np.unique on adversarial floats and shapes."""
    x = np.array([[np.nan, -0.0, 0.0], [-np.nan, 1.0, -0.0]], np.float64)
    want = np.unique(x, return_inverse=True, return_counts=True)
    got = gpuprim.unique(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1].reshape(x.shape))
    np.testing.assert_array_equal(got[2], want[2])
    assert got[1].shape == x.shape and got[1].dtype == np.int64 and got[2].dtype == np.int64
    values, counts = gpuprim.unique(np.zeros(0, np.int16), return_counts=True)
    assert values.size == 0 and counts.size == 0
