# SPDX-License-Identifier: Apache-2.0
"""Reference semantics written from gpuprim.h, in numpy, and test inputs."""
import numpy as np

DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
UINT_OF = {4: np.uint32, 8: np.uint64}


def bits(x):
    """The array's elements as unsigned integers of the same width."""
    return x.view(UINT_OF[x.dtype.itemsize])


def sort_permutation(x, descending=False):
    """The stable permutation in the documented order: integers by value;
    floats -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, positive NaNs by
    increasing bits, then negative NaNs by decreasing bits; descending is the
    reverse order, equal keys still in input order."""
    width = x.dtype.itemsize * 8
    mask = np.uint64((1 << width) - 1)
    sign = np.uint64(1 << (width - 1))
    b = bits(x).astype(np.uint64)
    if x.dtype.kind == "f":
        key = np.where(b & sign, ~b & mask, b | sign)
        nan = np.isnan(x)
        group = np.where(nan, np.where(b & sign, 2, 1), 0)
    elif x.dtype.kind == "i":
        key = b ^ sign
        group = np.zeros(x.size, np.int64)
    else:
        key = b
        group = np.zeros(x.size, np.int64)
    if descending:
        key = ~key & mask
        group = 2 - group
    return np.lexsort((key, group))


def wrap_cumsum(x, exclusive=False):
    with np.errstate(over="ignore"):
        out = np.cumsum(x, dtype=x.dtype)
    if exclusive and x.size:
        out = np.concatenate(([x.dtype.type(0)], out[:-1])).astype(x.dtype)
    return out


def specials(dtype, n, rng):
    """Random values with the type's extremes mixed in: min/max, and for
    floats ±0, ±inf, NaNs of both signs with payloads, subnormals."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.standard_normal(n).astype(dt) * 1000
        u = UINT_OF[dt.itemsize]
        info = np.finfo(dt)
        sign = 1 << (dt.itemsize * 8 - 1)
        qnan = np.array([np.nan], dt).view(u)[0]
        inf_bits = np.array([np.inf], dt).view(u)[0]
        pool = np.array([0.0, -0.0, np.inf, -np.inf, info.max, -info.max, info.tiny, -info.tiny,
                         info.smallest_subnormal, -info.smallest_subnormal], dt)
        nans = np.array([qnan, qnan | u(1), qnan | u(sign), (qnan | u(sign)) | u(5),
                         inf_bits | u(1), inf_bits | u(sign) | u(3)], u).view(dt)
        pool = np.concatenate((pool, nans))
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        pool = np.array([info.min, info.max, 0, 1, info.max - 1], dt)
    where = rng.integers(0, max(n, 1), size=max(n // 8, 1))
    if n:
        x[where % n] = pool[rng.integers(0, pool.size, size=where.size)]
    return x


def pattern(dtype, n, kind, rng):
    if kind == "random":
        return specials(dtype, n, rng)
    if kind == "sorted":
        return np.sort(specials(dtype, n, rng)[: n]).astype(dtype)
    if kind == "reversed":
        return np.sort(specials(dtype, n, rng))[::-1].copy().astype(dtype)
    if kind == "equal":
        return np.full(n, specials(dtype, 1, rng)[0], dtype=dtype)
    if kind == "few":
        pool = specials(dtype, 4, rng)
        return pool[rng.integers(0, 4, size=n)] if n else np.empty(0, dtype)
    raise ValueError(kind)


PATTERNS = ["random", "sorted", "reversed", "equal", "few"]
SIZES = [0, 1, 2, 31, 1000, 4097, 70001]
