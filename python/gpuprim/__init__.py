# SPDX-License-Identifier: Apache-2.0
"""gpuprim: GPU sort, scan and reduce from libgpuprim on numpy arrays, PyTorch
tensors and CuPy arrays, without copies.

    import gpuprim, torch
    x = torch.randn(1 << 20, device="cuda")
    s = gpuprim.sort(x)                    # a torch tensor, on x's device
    i = gpuprim.argsort(x, descending=True)
    c = gpuprim.cumsum(x)                  # ordered on torch's current stream

Arrays are used in place: they must be 1-D (sort, argsort, scan) and
C-contiguous, of dtype int8, uint8, int16, uint16, int32, uint32, int64,
uint64, float16, bfloat16 (torch.bfloat16, or ml_dtypes.bfloat16 numpy arrays
when ml_dtypes is installed), float32 or float64. float16/bfloat16 sums
accumulate in float32 and round once. The
result is of the input's kind on the input's device. numpy arrays and CPU
tensors run on the CPU backend; CUDA tensors and CuPy arrays run on their
device, on the framework's current stream, without synchronizing (the next
framework op on that stream sees the result). ``Context("cuda")`` runs numpy
arrays on the GPU (copying them there and back). Errors raise GpuprimError
subclasses that are also ValueError, TypeError, MemoryError or RuntimeError,
carrying the library's message.
"""
from typing import Any, Optional, Tuple, TypeVar, Union

from . import _arrays
from ._core import Context, context_for
from ._lib import (LIBRARY_PATH, DeviceError, DtypeError, GpuprimError, InvalidArgumentError,
                   OutOfMemoryError, LIB as _LIB)

__all__ = ["sort", "sort_by_key", "argsort", "cumsum", "scan", "sum", "min", "max", "dot",
           "Context", "GpuprimError", "InvalidArgumentError", "DtypeError", "OutOfMemoryError",
           "DeviceError", "library_version", "__version__"]

__version__ = "0.2.0"

# A numpy array, a PyTorch tensor or a CuPy array; results are of its kind.
Array = TypeVar("Array")
Values = TypeVar("Values")


def library_version() -> str:
    """The version of the libgpuprim this package runs on ("0.2.0")."""
    return _LIB.gpuprim_version_string().decode()


def _described(x: Any, what: str = "x") -> Tuple[Context, Any]:
    array = _arrays.describe(x, what)
    return context_for(array), array


def sort(x: Array, *, descending: bool = False, values: Optional[Values] = None,
         out: Optional[Array] = None, values_out: Optional[Values] = None,
         begin_bit: Optional[int] = None,
         end_bit: Optional[int] = None) -> Union[Array, Tuple[Array, Values]]:
    """Stable sort of the 1-D array x, ascending (or descending). With
    ``values`` (an array of any supported dtype and x's size), returns
    ``(sorted_keys, values_moved_with_them)``. ``out``/``values_out`` receive
    the results and may be x/values themselves (in place). Floats order
    -inf < ... < -0.0 < +0.0 < ... < +inf < NaN (NaN last ascending).
    ``begin_bit``/``end_bit`` sort by bits [begin_bit, end_bit) of each key's
    order-preserving unsigned form only (like CUB): e.g. ``end_bit=16`` for
    uint32 keys known to be below 2^16 takes half the radix passes. Unsigned
    keys as they are, signed ones with the sign bit flipped, floats mapped
    onto unsigned numbers in the order above; descending complements that
    form. end_bit None (or 0) is the key's width; a range outside the key
    raises InvalidArgumentError."""
    context, array = _described(x)
    return context.sort(array, descending=descending, values=values, out=out,
                        values_out=values_out, begin_bit=begin_bit, end_bit=end_bit)


def sort_by_key(keys: Array, values: Values, *,
                descending: bool = False) -> Tuple[Array, Values]:
    """Sort (keys, values) pairs by key, stably; returns new (keys, values)."""
    return sort(keys, values=values, descending=descending)


def argsort(x: Array, *, descending: bool = False, dtype: str = "int64",
            begin_bit: Optional[int] = None, end_bit: Optional[int] = None) -> Array:
    """The stable permutation that sorts x: ``x[argsort(x)]`` is ``sort(x)``.
    Indices are int64 by default (numpy's and torch's index type); int32,
    uint32 and uint64 are accepted. begin_bit/end_bit as for sort()."""
    context, array = _described(x)
    return context.argsort(array, descending=descending, dtype=dtype, begin_bit=begin_bit,
                           end_bit=end_bit)


def scan(x: Array, op: str = "sum", *, exclusive: bool = False,
         out: Optional[Array] = None) -> Array:
    """Prefix scan of the 1-D array x with op "sum", "min" or "max",
    inclusive (default) or exclusive; ``out`` may be x (in place)."""
    context, array = _described(x)
    return context.scan(array, op, exclusive=exclusive, out=out)


def cumsum(x: Array, *, exclusive: bool = False, out: Optional[Array] = None) -> Array:
    """Inclusive (or exclusive) prefix sum, like numpy.cumsum / torch.cumsum
    on a 1-D array, but in x's own dtype (integers wrap like C)."""
    context, array = _described(x)
    return context.scan(array, "sum", exclusive=exclusive, out=out)


def sum(x: Array) -> Any:
    """Sum of all elements of x (any shape, contiguous). Integers wrap; float
    sums are deterministic. A numpy scalar for numpy input; a 0-d tensor /
    array of the input's kind otherwise (on the GPU: no synchronization)."""
    context, array = _described(x)
    return context.sum(array)


def min(x: Array) -> Any:
    """Smallest element of x (IEEE 754-2019 minimum for floats: NaN wins,
    -0.0 < +0.0). The identity (the dtype's largest value, +inf) when empty."""
    context, array = _described(x)
    return context.min(array)


def max(x: Array) -> Any:
    """Largest element of x (IEEE 754-2019 maximum for floats: NaN wins,
    -0.0 < +0.0). The identity (the dtype's smallest value, -inf) when empty."""
    context, array = _described(x)
    return context.max(array)


def dot(a: Array, b: Array) -> Any:
    """Sum of a[i] * b[i] over two arrays of the same dtype and size (fused
    multiply-add for floats, deterministic)."""
    context, array = _described(a, "a")
    return context.dot(array, b)
