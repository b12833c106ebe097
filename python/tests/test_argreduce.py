# SPDX-License-Identifier: Apache-2.0
"""gpuprim.argmin / gpuprim.argmax (gpuprim_argreduce) against numpy's
np.argmin / np.argmax on the flattened array: the first of equal extremes,
the first NaN when there is one (both ops, any sign or payload), -0.0 equal
to +0.0, every dtype the package takes (bool included), any C-contiguous
shape; errors as numpy raises them (ValueError for an empty array)."""
import numpy as np
import pytest

import gpuprim
from reference import ALL_DTYPES, PATTERNS, bits, dtype_of, is_float, is_half, pattern, specials

rng = np.random.default_rng(20261127)

# Around the CPU backend's search blocks (64), parallel threshold (2^15) and
# pieces (2^14); the CUDA tiles (4096 4-byte elements) and one-block limit
# (64 KiB) when a CUDA context runs them.
SIZES = [1, 2, 3, 63, 65, 1000, 4095, 4097, 16385, 32769, 70001]


def numpy_arg(x, op):
    """numpy's answer. float16/bfloat16 through float32 (exact): the same
    values, NaNs stay NaNs, and numpy's float32 argmin/argmax are the
    reference of the other floats too."""
    flat = x.reshape(-1)
    if is_half(x.dtype):
        flat = flat.astype(np.float32)
    return int(np.argmin(flat) if op == "min" else np.argmax(flat))


def check(x, context=None):
    for op in ("min", "max"):
        call = getattr(context or gpuprim, "arg" + op)
        got = call(x)
        assert type(got) is int
        assert got == numpy_arg(x, op), (op, x.dtype, x.shape)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("kind", PATTERNS)
def test_against_numpy(dtype, kind):
    for n in SIZES:
        x = pattern(dtype, n, kind, rng)
        keep = x.copy()
        check(x)
        np.testing.assert_array_equal(bits(x), bits(keep), err_msg="input changed")
        if kind == "equal":
            assert gpuprim.argmin(x) == 0 and gpuprim.argmax(x) == 0


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_without_nans_and_with_ties(dtype):
    dt = dtype_of(dtype)
    for n in SIZES:
        if is_float(dt):
            x = (rng.standard_normal(n) * 100).astype(dt)
        else:
            info = np.iinfo(dt)
            x = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        check(x)
        # the extremes repeated elsewhere: ties, the first copy wins
        for op in ("min", "max"):
            at = numpy_arg(x, op)
            y = x.copy()
            y[n - 1], y[n // 2], y[n // 3] = x[at], x[at], x[at]
            check(y)


def test_specials():
    nan, inf = np.nan, np.inf
    cases = [
        ([1.0, nan, -inf, nan], 1, 1),         # the first NaN, for both ops
        ([-nan, 5.0, nan], 0, 0),              # a negative NaN counts as NaN
        ([0.0, -0.0, 1.0], 0, 2),              # -0.0 equals +0.0: the first zero
        ([-0.0, 0.0, -1.0], 2, 0),
        ([0.0, -0.0], 0, 0),
        ([3.0, inf, -inf, inf, -inf], 2, 1),   # infinities are ordinary values
        ([5e-324, -5e-324, 0.0, -1e-323], 3, 0),  # subnormals
    ]
    for values, want_min, want_max in cases:
        for dtype in ("float64", "float32", "float16"):
            with np.errstate(over="ignore", under="ignore"):
                x = np.array(values, dtype=dtype)
            if dtype != "float64" and values[0] == 5e-324:
                continue  # the subnormals round to zero in the narrower formats
            assert gpuprim.argmin(x) == want_min == np.argmin(x), (values, dtype)
            assert gpuprim.argmax(x) == want_max == np.argmax(x), (values, dtype)
    # NaN payloads and signs, by their bits
    x = np.array([1.0, 2.0, 0.5, 7.0], np.float32)
    for pattern_bits in (0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF):
        y = x.copy()
        bits(y)[2] = pattern_bits
        bits(y)[3] = 0x7FC00000
        assert gpuprim.argmin(y) == 2 == np.argmin(y)
        assert gpuprim.argmax(y) == 2 == np.argmax(y)


def test_integer_extremes():
    for dtype in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        info = np.iinfo(dtype)
        x = np.array([1, info.max, info.min, info.max, info.min, 0], dtype=dtype)
        assert gpuprim.argmin(x) == np.argmin(x) and gpuprim.argmax(x) == np.argmax(x)
        all_max = np.full(5, info.max, dtype=dtype)
        assert gpuprim.argmin(all_max) == 0 and gpuprim.argmax(all_max) == 0


def test_shapes_bools_and_contexts():
    x = rng.standard_normal((7, 9, 3)).astype(np.float32)
    check(x)  # the flat position, like np.argmin(x)
    assert np.unravel_index(gpuprim.argmax(x), x.shape) == np.unravel_index(np.argmax(x), x.shape)
    for n in (1, 2, 1001, 70001):
        b = rng.random(n) < 0.3
        assert gpuprim.argmin(b) == np.argmin(b) and gpuprim.argmax(b) == np.argmax(b)
    assert gpuprim.argmax(np.zeros(10, bool)) == 0 and gpuprim.argmin(np.ones(10, bool)) == 0
    with gpuprim.Context("cpu") as context:
        check(specials("float64", 5000, rng), context)
        check(rng.integers(-5, 5, size=(40, 50)).astype(np.int16), context)


def test_errors():
    for dtype in ("float32", "int64", "bool"):
        empty = np.empty(0, dtype)
        with pytest.raises(ValueError):
            np.argmin(empty)  # numpy raises; so does gpuprim, naming x
        for call in (gpuprim.argmin, gpuprim.argmax):
            with pytest.raises(gpuprim.InvalidArgumentError, match="x is empty") as info:
                call(empty)
            assert isinstance(info.value, ValueError) and info.value.status_name == "INVALID_ARGUMENT"
            assert "empty" in str(info.value)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for axis in (0, 1, -1):
        with pytest.raises(ValueError, match="axis=None"):
            gpuprim.argmin(x, axis=axis)
        with pytest.raises(ValueError, match="axis=None"):
            gpuprim.argmax(x, axis=axis)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.argmin(np.arange(10, dtype=np.float32)[::2])
    with pytest.raises(TypeError):
        gpuprim.argmax(np.zeros(4, np.complex64))
