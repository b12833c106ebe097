# SPDX-License-Identifier: Apache-2.0
"""Reference semantics written from gpuprim.h, in numpy, and test inputs."""
import numpy as np

try:  # optional: numpy's bfloat16
    import ml_dtypes
except ImportError:
    ml_dtypes = None

DTYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64",
          "float16", "int8", "uint8", "int16", "uint16"]
# bfloat16 numpy arrays need ml_dtypes; its tests are skipped without it.
BFLOAT16 = np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else None
ALL_DTYPES = DTYPES + (["bfloat16"] if ml_dtypes is not None else [])
UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# Float formats: (fraction bits, +inf bits). bfloat16 is the top half of an f32.
FLOAT_FORMATS = {"float16": (10, 0x7C00), "bfloat16": (7, 0x7F80),
                 "float32": (23, 0x7F800000), "float64": (52, 0x7FF0000000000000)}


def dtype_of(name):
    return BFLOAT16 if name == "bfloat16" else np.dtype(name)


def is_float(dtype):
    return np.dtype(dtype).name in FLOAT_FORMATS


def is_half(dtype):
    return np.dtype(dtype).name in ("float16", "bfloat16")


def min_max_identity(dtype, op):
    """What min (op "min") or max of no elements gives: the dtype's largest
    (smallest) value, +inf (-inf) for floats."""
    if is_float(dtype):
        return np.inf if op == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if op == "min" else info.min


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
    if is_float(x.dtype):
        key = np.where(b & sign, ~b & mask, b | sign)
        nan = (b & ~sign & mask) > np.uint64(FLOAT_FORMATS[x.dtype.name][1])
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


def radix_key(x, descending=False):
    """The order-preserving unsigned form of the keys (gpuprim_sort_options_t),
    as uint64: unsigned as they are, signed with the sign bit flipped, floats
    mapped onto the unsigned numbers in the documented order (derived from the
    order alone: with inf the +inf bits and m the magnitude bits, a key's rank
    is inf + 1 + m for a positive sign and inf - m mod 2^W for a negative one);
    descending: the complement."""
    width = x.dtype.itemsize * 8
    mask = np.uint64((1 << width) - 1)
    sign = np.uint64(1 << (width - 1))
    b = bits(x).astype(np.uint64)
    with np.errstate(over="ignore"):
        if is_float(x.dtype):
            inf = np.uint64(FLOAT_FORMATS[x.dtype.name][1])
            m = b & ~sign & mask
            key = np.where(b & sign, (inf - m) & mask, inf + np.uint64(1) + m)
        elif x.dtype.kind == "i":
            key = b ^ sign
        else:
            key = b
    return (~key & mask) if descending else key


def sort_bits(x, descending=False, begin_bit=0, end_bit=None):
    """Bits [begin_bit, end_bit) of radix_key (end_bit None or 0: the width)."""
    width = x.dtype.itemsize * 8
    end = end_bit or width
    key = radix_key(x, descending) >> np.uint64(begin_bit)
    return key if end - begin_bit >= 64 else key & np.uint64((1 << (end - begin_bit)) - 1)


def range_permutation(x, descending=False, begin_bit=0, end_bit=None):
    """The stable permutation by those bits: numpy's stable argsort."""
    return np.argsort(sort_bits(x, descending, begin_bit, end_bit), kind="stable")


def round_half(values, dtype):
    """float64 values rounded once to nearest even in dtype (float16, bfloat16)."""
    with np.errstate(over="ignore"):  # past the largest finite value: inf
        return np.asarray(values, np.float64).astype(dtype_of(dtype))


def rows_of(x):
    """x's rows (the last axis) as a 2-D array. Not x.reshape(-1, n): numpy
    cannot infer -1 for rows of length 0 (shape (5, 0) raises ValueError)."""
    return x.reshape(int(np.prod(x.shape[:-1])), x.shape[-1])


def numpy_sum_dtype(dtype):
    """The dtype numpy sums (and cumsums) an array of dtype in by default:
    integers narrower than 64 bits widened (int64; uint64 for unsigned), the
    others their own (float16 too)."""
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    return np.sum(np.zeros(1, dt)).dtype if dt.kind in "biu" else dt


def torch_sum_dtype(dtype):
    """torch.sum's and torch.cumsum's rule: int64 for every integer dtype
    narrower than 64 bits (bool too)."""
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    return np.dtype(np.int64) if dt.kind in "biu" and dt.itemsize < 8 else dt


def numpy_cumsum(x, exclusive=False):
    """numpy's cumsum of the 1-D x in its default dtype (numpy_sum_dtype:
    64-bit integers wrap), exclusive: shifted right by one from 0."""
    out = np.cumsum(x, dtype=numpy_sum_dtype(x.dtype))
    if exclusive and x.size:
        out = np.concatenate(([out.dtype.type(0)], out[:-1])).astype(out.dtype)
    return out


def wrap_cumsum(x, exclusive=False):
    with np.errstate(over="ignore"):
        out = np.cumsum(x, dtype=x.dtype)
    if exclusive and x.size:
        out = np.concatenate(([x.dtype.type(0)], out[:-1])).astype(x.dtype)
    return out


def specials(dtype, n, rng):
    """Random values with the type's extremes mixed in: min/max, and for
    floats ±0, ±inf, NaNs of both signs with payloads, subnormals."""
    dt = dtype_of(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    if is_float(dt):
        with np.errstate(over="ignore"):
            x = (rng.standard_normal(n) * 1000).astype(dt)
        u = UINT_OF[dt.itemsize]
        info = ml_dtypes.finfo(dt) if dt.name == "bfloat16" else np.finfo(dt)
        sign = 1 << (dt.itemsize * 8 - 1)
        fraction_bits, inf_bits = FLOAT_FORMATS[dt.name]
        qnan = u(inf_bits | (1 << (fraction_bits - 1)))
        inf_bits = u(inf_bits)
        pool = np.array([0.0, -0.0, np.inf, -np.inf, float(info.max), -float(info.max),
                         float(info.tiny), -float(info.tiny), float(info.smallest_subnormal),
                         -float(info.smallest_subnormal)]).astype(dt)
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
        x = specials(dtype, n, rng)
        return x[sort_permutation(x)]
    if kind == "reversed":
        x = specials(dtype, n, rng)
        return x[sort_permutation(x)][::-1].copy()
    if kind == "equal":
        return np.full(n, specials(dtype, 1, rng)[0], dtype=dtype_of(dtype))
    if kind == "few":
        pool = specials(dtype, 4, rng)
        return pool[rng.integers(0, 4, size=n)] if n else np.empty(0, dtype_of(dtype))
    raise ValueError(kind)


PATTERNS = ["random", "sorted", "reversed", "equal", "few"]
SIZES = [0, 1, 2, 31, 1000, 4097, 70001]
