# SPDX-License-Identifier: Apache-2.0
"""gpuprim.select, compress, flatnonzero, nonzero, stable_partition, unique,
unique_consecutive and run_length_encode on numpy arrays (the CPU backend)
against numpy: every dtype, random and adversarial data (NaNs of both signs
and several payloads, +-0, +-inf, subnormals, the dtypes' extremes, runs),
empty and one-element inputs; runs compare by bits (reference: numpy on the
bits), comparisons by value (numpy's operators)."""
import numpy as np
import pytest

import gpuprim
from reference import ALL_DTYPES, PATTERNS, dtype_of, is_float, pattern

rng = np.random.default_rng(20261127)
SIZES = [0, 1, 2, 31, 1000, 4097, 70001]
OPS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal, "==": np.equal,
       "!=": np.not_equal}


def _bits(x):
    return x.view(f"u{x.dtype.itemsize}")


def _as_numpy_floats(x):
    """x in a dtype numpy's operators compare exactly (bfloat16 widened to float32)."""
    return x.astype(np.float32) if x.dtype.name == "bfloat16" else x


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_select_comparisons(dtype, op):
    for n in SIZES:
        x = pattern(dtype, n, PATTERNS[n % len(PATTERNS)], rng)
        value = x[rng.integers(n)] if n else dtype_of(dtype).type(0)
        keep = OPS[op](_as_numpy_floats(x), _as_numpy_floats(np.array([value], x.dtype))[0])
        got = gpuprim.select(x, op=op, value=value)
        np.testing.assert_array_equal(_bits(got), _bits(x[keep]))
        kept, positions = gpuprim.select(x, op=op, value=value, positions=True)
        np.testing.assert_array_equal(positions, np.flatnonzero(keep))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_select_range_nan_mask_values(dtype):
    for n in SIZES:
        x = pattern(dtype, n, "random", rng)
        wide = _as_numpy_floats(x)
        if n:
            low, high = np.sort(wide[rng.integers(n, size=2)])
            if is_float(dtype) and (np.isnan(low) or np.isnan(high)):
                low, high = wide.dtype.type(-1), wide.dtype.type(1)
        else:
            low, high = 0, 1
        low, high = np.array([low, high]).astype(x.dtype)
        keep = (wide >= _as_numpy_floats(np.array([low]))[0]) & (wide < _as_numpy_floats(np.array([high]))[0])
        np.testing.assert_array_equal(_bits(gpuprim.select(x, op="in_range", value=low, upper=high)),
                                      _bits(x[keep]))
        nan = np.isnan(wide) if is_float(dtype) else np.zeros(n, bool)
        np.testing.assert_array_equal(_bits(gpuprim.select(x, op="isnan")), _bits(x[nan]))
        np.testing.assert_array_equal(_bits(gpuprim.select(x, op="notnan")), _bits(x[~nan]))
        mask = rng.integers(0, 2, n).astype(bool)
        values = np.arange(n, dtype=np.int32)
        kept, moved = gpuprim.select(x, mask, values=values)
        np.testing.assert_array_equal(_bits(kept), _bits(x[mask]))
        np.testing.assert_array_equal(moved, values[mask])
        np.testing.assert_array_equal(_bits(gpuprim.compress(mask.astype(np.uint16) * 256, x)), _bits(x[mask]))


def test_select_known_answers():
    x = np.array([-0.0, 0.0, np.nan, -np.nan, 1.0, np.inf], np.float32)
    np.testing.assert_array_equal(gpuprim.select(x, op="==", value=0.0, positions=True)[1], [0, 1])
    np.testing.assert_array_equal(gpuprim.select(x, op="!=", value=0.0, output=False, positions=True), [2, 3, 4, 5])
    np.testing.assert_array_equal(gpuprim.flatnonzero(x), np.flatnonzero(x))
    np.testing.assert_array_equal(gpuprim.nonzero(np.array([0, 3, 0, 4]))[0], [1, 3])
    np.testing.assert_array_equal(gpuprim.flatnonzero(np.array([True, False, True])), [0, 2])
    np.testing.assert_array_equal(gpuprim.select(np.array([3, 1, 4, 1, 5]), op=">", value=2), [3, 4, 5])
    assert gpuprim.flatnonzero(np.array([], np.int8)).size == 0


def test_select_errors():
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(ValueError):
        gpuprim.select(x, op="<", value=0.5)  # not a value of int32
    with pytest.raises(ValueError):
        gpuprim.select(np.arange(5, dtype=np.uint8), op="<", value=300)
    with pytest.raises(ValueError):
        gpuprim.select(x, op="~", value=1)
    with pytest.raises(ValueError):
        gpuprim.select(x, op="in_range", value=1)
    with pytest.raises(ValueError):
        gpuprim.select(x, np.ones(4, bool))
    with pytest.raises(TypeError):
        gpuprim.select(x, np.ones(5, np.float32))
    with pytest.raises(ValueError):
        gpuprim.select(x, np.ones(5, bool), op="<", value=1)


def test_select_float_values_as_numpy_takes_them():
    x = np.array([0.1, 0.5, np.nan, np.inf, -0.0], np.float32)
    # Python floats are weakly typed (NEP 50): rounded to x's dtype, as numpy does
    np.testing.assert_array_equal(gpuprim.select(x, op="<=", value=0.1), x[x <= 0.1])
    # a typed scalar x's dtype holds exactly: the same compare as numpy's
    for value in (np.float64(0.5), np.float16(0.5), np.float64(np.inf), np.float64(-0.0)):
        np.testing.assert_array_equal(gpuprim.select(x, op="<", value=value), x[x < value])
    np.testing.assert_array_equal(gpuprim.select(x, op="!=", value=np.float64("nan")), x)
    # one it cannot hold: numpy would compare in float64 (x[x <= v] is empty here)
    with pytest.raises(ValueError, match=r"value=0\.1 \(float64\) is not a value of x's dtype float32"):
        gpuprim.select(x, op="<=", value=np.float64(0.1))
    with pytest.raises(ValueError, match="upper="):
        gpuprim.select(x, op="in_range", value=0.0, upper=np.float64(0.3))
    # not numbers: errors naming the argument
    for value, error in (("a", TypeError), (1j, TypeError), (np.array([1.0, 2.0]), ValueError),
                         (10**400, ValueError)):
        with pytest.raises(error, match="select: value="):
            gpuprim.select(x, op=">", value=value)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_stable_partition(dtype):
    for n in SIZES:
        x = pattern(dtype, n, PATTERNS[n % len(PATTERNS)], rng)
        mask = rng.integers(0, 3, n) == 0
        values = np.arange(n, dtype=np.uint64)
        result, moved, count = gpuprim.stable_partition(x, mask, values=values)
        order = np.concatenate((np.flatnonzero(mask), np.flatnonzero(~mask)))
        assert count == int(mask.sum())
        np.testing.assert_array_equal(_bits(result), _bits(x[order]))
        np.testing.assert_array_equal(moved, order)


def _runs_reference(x, non_trivial=False):
    """Runs of equal bits: (keys, starts, lengths)."""
    bits = _bits(x)
    n = bits.size
    if n == 0:
        return x[:0], np.zeros(0, np.int64), np.zeros(0, np.int64)
    heads = np.flatnonzero(np.concatenate(([True], bits[1:] != bits[:-1])))
    lengths = np.diff(np.concatenate((heads, [n])))
    if non_trivial:
        keep = lengths >= 2
        heads, lengths = heads[keep], lengths[keep]
    return x[heads], heads, lengths


def _with_runs(dtype, n):
    x = pattern(dtype, n, "random", rng)
    return np.repeat(x, rng.integers(1, 5, n))[:n] if n else x


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_runs(dtype):
    for n in SIZES:
        for x in (_with_runs(dtype, n), pattern(dtype, n, "few", rng), pattern(dtype, n, "equal", rng)):
            for non_trivial in (False, True):
                keys, starts, lengths = gpuprim.run_length_encode(x, non_trivial=non_trivial)
                want_keys, want_starts, want_lengths = _runs_reference(x, non_trivial)
                np.testing.assert_array_equal(_bits(keys), _bits(want_keys))
                np.testing.assert_array_equal(starts, want_starts)
                np.testing.assert_array_equal(lengths, want_lengths)
            want_keys, want_starts, want_lengths = _runs_reference(x)
            np.testing.assert_array_equal(_bits(gpuprim.unique_consecutive(x)), _bits(want_keys))
            keys, counts = gpuprim.unique_consecutive(x, return_counts=True)
            np.testing.assert_array_equal(counts, want_lengths)
            keys, first = gpuprim.unique_consecutive(x, values=np.arange(n, dtype=np.int16))
            np.testing.assert_array_equal(first, want_starts.astype(np.int16))


def test_runs_bits():
    # -0.0 and +0.0 differ; NaNs of the same bits are one run, of other bits not
    x = np.array([0.0, 0.0, -0.0, np.nan, np.nan, -np.nan], np.float64)
    keys, starts, lengths = gpuprim.run_length_encode(x)
    np.testing.assert_array_equal(starts, [0, 2, 3, 5])
    np.testing.assert_array_equal(lengths, [2, 1, 2, 1])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unique(dtype):
    for n in SIZES:
        x = pattern(dtype, n, PATTERNS[n % len(PATTERNS)], rng)
        if dtype == "bfloat16":
            want, inverse, counts = np.unique(x.astype(np.float32), return_inverse=True, return_counts=True)
            want = want.astype(x.dtype)
        else:
            want, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
        got, got_inverse, got_counts = gpuprim.unique(x, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(_as_numpy_floats(got), _as_numpy_floats(want))
        np.testing.assert_array_equal(got_counts, counts)
        np.testing.assert_array_equal(got_inverse, inverse)
        np.testing.assert_array_equal(_as_numpy_floats(gpuprim.unique(x)), _as_numpy_floats(want))


def test_unique_shapes_and_floats():
    x = np.array([[3, 1], [1, 2]], np.int32)
    values, inverse = gpuprim.unique(x, return_inverse=True)
    np.testing.assert_array_equal(values, [1, 2, 3])
    assert inverse.shape == x.shape
    np.testing.assert_array_equal(values[inverse], x)
    f = np.array([0.0, -0.0, np.nan, -np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(gpuprim.unique(f), np.unique(f))
