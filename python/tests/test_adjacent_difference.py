# SPDX-License-Identifier: Apache-2.0
"""gpuprim.adjacent_difference against numpy's np.diff(x, prepend=0), as
numpy computes it (integers wrap; float16 and bfloat16 through float32,
rounded once): numpy arrays (the CPU backend) of every dtype, random and
adversarial data (NaNs of both signs and several payloads, +-0, +-inf,
subnormals, the dtypes' extremes), sizes around the library's pieces; the
first element kept bit for bit, a NaN result the canonical quiet NaN; in
place, out= (a partly overlapping one too), the cumsum round trip, the
refusals; CUDA tensors where torch has a device (around the kernel's chunks
and blocks)."""
import numpy as np
import pytest

import gpuprim
from reference import ALL_DTYPES, DTYPES, FLOAT_FORMATS, PATTERNS, bits, is_float, pattern, specials

rng = np.random.default_rng(20261205)
SIZES = [0, 1, 2, 31, 513, 4097, 131073, 300007]


def expected(x):
    """x[0], then np.diff(x) as numpy computes it, every NaN result the
    canonical quiet NaN (the header's rule; numpy keeps a payload)."""
    want = np.empty_like(x)
    if x.size == 0:
        return want
    want[:1] = x[:1]
    with np.errstate(invalid="ignore", over="ignore"):
        want[1:] = np.diff(x)
    if is_float(x.dtype):
        fraction_bits, inf_bits = FLOAT_FORMATS[np.dtype(x.dtype).name]
        rest = bits(want)[1:]
        tail = want[1:].astype(np.float32) if x.dtype.name == "bfloat16" else want[1:]
        rest[np.isnan(tail)] = inf_bits | (1 << (fraction_bits - 1))
    return want


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_against_numpy(dtype):
    for n in SIZES:
        for kind in PATTERNS:
            x = pattern(dtype, n, kind, rng)
            before = x.copy()
            got = gpuprim.adjacent_difference(x)
            assert got.dtype == x.dtype and got.shape == x.shape
            np.testing.assert_array_equal(bits(got), bits(expected(x)), err_msg=f"{dtype} n={n} {kind}")
            np.testing.assert_array_equal(bits(x), bits(before))  # the input is left as it was


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "float16"])
def test_in_place_and_out(dtype):
    x = pattern(dtype, 100_003, PATTERNS[0], rng)
    want = expected(x)
    y = x.copy()
    assert gpuprim.adjacent_difference(y, out=y) is y
    np.testing.assert_array_equal(bits(y), bits(want))
    out = np.full_like(x, 7)
    assert gpuprim.adjacent_difference(x, out=out) is out
    np.testing.assert_array_equal(bits(out), bits(want))
    # out partly over x, one element on: numpy's rule (x read first)
    z = np.concatenate([x, x[:1]])
    gpuprim.adjacent_difference(z[:-1], out=z[1:])
    np.testing.assert_array_equal(bits(z[1:]), bits(want))


def test_cumsum_round_trip():
    for dtype in ["int8", "uint8", "int32", "uint64"]:
        x = pattern(dtype, 70_001, "random", rng)
        d = gpuprim.adjacent_difference(x)
        np.testing.assert_array_equal(gpuprim.cumsum(d, dtype=x.dtype), x)


def test_np_diff_is_the_tail():
    x = np.array([1.5, -2.0, 4.0, 4.0])
    np.testing.assert_array_equal(gpuprim.adjacent_difference(x)[1:], np.diff(x))


def test_refusals():
    with pytest.raises(TypeError, match="bool"):
        gpuprim.adjacent_difference(np.array([True, False]))
    with pytest.raises(ValueError):
        gpuprim.adjacent_difference(np.zeros((2, 3)))  # 1-D only
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(TypeError):
        gpuprim.adjacent_difference(x, out=np.zeros(5, np.int64))
    with pytest.raises(ValueError):
        gpuprim.adjacent_difference(x, out=np.zeros(4, np.int32))
    np.testing.assert_array_equal(x, np.arange(5))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_tensors(dtype):
    """CUDA tensors out of place and in place, bit for bit (runs where torch
    has a CUDA device)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    if not hasattr(torch, dtype) or dtype.startswith("uint") and dtype != "uint8":
        pytest.skip(f"torch has no arithmetic on {dtype}")
    for n in (0, 1, 127, 129, 4097, 70001, 1 << 20):
        x = specials(dtype, n, rng)
        want = bits(expected(x))
        t = torch.from_numpy(x.copy()).cuda()
        d = gpuprim.adjacent_difference(t)
        assert isinstance(d, torch.Tensor) and d.device == t.device and d.dtype == t.dtype
        np.testing.assert_array_equal(bits(d.cpu().numpy()), want)
        np.testing.assert_array_equal(bits(t.cpu().numpy()), bits(x))
        assert gpuprim.adjacent_difference(t, out=t) is t
        np.testing.assert_array_equal(bits(t.cpu().numpy()), want)
