# SPDX-License-Identifier: Apache-2.0
"""gpuprim: GPU sort, scan and reduce from libgpuprim on numpy arrays, PyTorch
tensors and CuPy arrays, without copies (but for sums of integers narrower
than 64 bits, widened first: below).

    import gpuprim, torch
    x = torch.randn(1 << 20, device="cuda")
    s = gpuprim.sort(x)                    # a torch tensor, on x's device
    i = gpuprim.argsort(x, descending=True)
    c = gpuprim.cumsum(x)                  # ordered on torch's current stream

Flat positions: ``argmin``/``argmax`` (numpy's ``np.argmin``/``np.argmax``
on the flattened array; experimental) return a Python int.

Select and runs (experimental; 1-D): ``select`` (``x[mask]``, ``x[x < v]``
and the other comparisons, with values and positions), ``compress``,
``flatnonzero``, ``nonzero``, ``stable_partition``, ``unique``
(``np.unique``), ``unique_consecutive`` and ``run_length_encode`` (runs by
bits). Their counts come back to the host (the call waits for them).

Keyed reductions (experimental; 1-D): ``reduce_by_key`` (each run of equal
consecutive keys, cub's ReduceByKey), ``groupby_sum``, ``groupby_min`` and
``groupby_max`` (keys in any order: the sorted distinct keys and each
group's aggregate, pandas' ``groupby(sort=True, dropna=False)``), one
library call each; ``unique`` is one group-by call too.

Per row: ``sort``, ``argsort``, ``topk``, ``cumsum``/``scan``, ``sum``, ``min`` and
``max`` take ``axis=-1`` to work on every row (the last axis) of a
C-contiguous N-D array on its own, like numpy's and torch's ``axis=-1`` /
``dim=-1``. Per segment (CSR): ``segment_sort``, ``segment_argsort``, ``segment_topk``,
``segment_cumsum``/``segment_scan``, ``segment_sum``, ``segment_min`` and
``segment_max`` take a 1-D array and offsets (segment s is
``x[offsets[s]:offsets[s+1]]``):

    lengths = torch.tensor([3, 0, 5], device="cuda")
    offsets = torch.cat((lengths.new_zeros(1), lengths.cumsum(0)))
    gpuprim.segment_sum(torch.randn(8, device="cuda"), offsets)   # 3 sums

Arrays are used in place: they must be 1-D (sort, argsort, scan without
axis) and C-contiguous, of dtype int8, uint8, int16, uint16, int32, uint32, int64,
uint64, float16, bfloat16 (torch.bfloat16, or ml_dtypes.bfloat16 numpy arrays
when ml_dtypes is installed), float32, float64 or bool; masked arrays
(numpy.ma) raise TypeError (pass ``x.filled(...)`` or ``x.compressed()``).
float16/bfloat16 sums accumulate in float32 and round once (the result is
of x's dtype, as numpy's float16 sum is). Sums and cumsums of integers
narrower than 64 bits accumulate and return a 64-bit integer, as the
framework's own do (numpy and CuPy: int64, uint64 for unsigned; torch:
int64), x cast first with its own library (a copy); ``dtype=`` chooses
(``dtype=x.dtype``: x's own, no copy, wrapping like C; 64-bit integers
always wrap). The result is of the input's kind on the input's device.
numpy arrays and CPU tensors run on the CPU backend; CUDA tensors and CuPy
arrays run on their device, on the framework's current stream, without
synchronizing (the next framework op on that stream sees the result).
``Context("cuda")`` runs numpy arrays on the GPU (copying them there and
back). ``dtype=`` arguments take a dtype as numpy, PyTorch and CuPy spell
it: ``"int32"``, ``np.int32``, ``np.dtype("int32")``, ``torch.int32``.
Errors raise GpuprimError subclasses that are also ValueError, TypeError,
MemoryError or RuntimeError, carrying the library's message.

bool arrays are taken as their bytes (uint8 0 and 1), where numpy's
meaning is kept: sort, argsort, topk (and per row, per segment,
distributed) order False before True and return bool keys/values; min,
max and their scans return bools (an empty min is True, an empty max
False: the identities); sum, cumsum and their segment and distributed
forms count the True elements, in int64 (numpy's and torch's
``sum(bool array)``), or in ``dtype=``; bool ``values=`` move with their
keys. dot refuses bools (TypeError), as do sums asked to be made in bool
(``dtype=bool``, a bool ``out=``); bool offsets and index dtypes are
refused.

Memory: the library's workspace (and any buffer a context makes) comes
from the framework's allocator for CUDA tensors (PyTorch's caching
allocator: it shows in ``torch.cuda.memory_allocated()``) and CuPy arrays
(CuPy's memory pool), from the library's own for everything else;
``Context(..., allocator=...)`` chooses ("torch", "cupy", None, or an
object with ``allocate(bytes, stream)`` and ``free(address, bytes,
stream)``). CUDA graphs (experimental): calls that only enqueue work
(sorts, scans, top-k, reductions to an array, ...) capture into
``torch.cuda.graph`` once warmed up on the capture stream and the
context's workspace is held still (``gpuprim.context_for(x)
.reserve_workspace(fix=True)``); the others raise NotCapturableError
before enqueueing anything.

Distributed (experimental): one process per rank, started by mpirun or
torchrun; ``distributed_sort``, ``distributed_argsort``, ``distributed_topk``,
``distributed_scan`` and ``distributed_reduce`` take this rank's part of the
data and the caller's communicator (an mpi4py communicator for numpy arrays
and CPU tensors; an NCCL communicator for CUDA arrays):

    from mpi4py import MPI
    part = gpuprim.distributed_sort(local_keys, comm=MPI.COMM_WORLD)
"""
from typing import Any, Optional, Sequence, Tuple, TypeVar, Union

import os as _os

# A CMake build's compiled layer (<build>/python_extension/_ext*.so; ctest's
# python_package sets it) for the package's source tree.
if _os.environ.get("GPUPRIM_EXTENSION_DIR"):
    __path__.insert(0, _os.environ["GPUPRIM_EXTENSION_DIR"])

from . import _arrays
from ._core import Context, WorkspaceSizes, context_for, distributed_context as _distributed_context
from ._lib import (LIBRARY_PATH, DeviceError, DtypeError, GpuprimError, InvalidArgumentError,
                   NotCapturableError, OutOfMemoryError, HAS_DISTRIBUTED as _HAS_DISTRIBUTED,
                   LIB as _LIB)
from . import _core

# The common path of sort, argsort, topk, sum, min and max runs in the
# compiled layer (python/src/fast_calls.cpp): it returns None for anything
# off that path, which then takes the general one below.
_LIB.fast_init(_arrays._fast_dtype_code, _core._context_for_object, _core._raise_status)
_fast_sort, _fast_argsort, _fast_topk, _fast_reduce = (
    _LIB.fast_sort, _LIB.fast_argsort, _LIB.fast_topk, _LIB.fast_reduce)
_OP_SUM, _OP_MIN, _OP_MAX = _LIB.OP_SUM, _LIB.OP_MIN, _LIB.OP_MAX

__all__ = ["sort", "sort_by_key", "argsort", "topk", "cumsum", "scan", "sum", "min", "max", "argmin", "argmax", "dot",
           "segment_sort", "segment_argsort", "segment_topk", "segment_cumsum", "segment_scan", "segment_sum",
           "segment_min", "segment_max", "searchsorted", "histogram", "bincount", "merge", "select", "compress", "flatnonzero", "nonzero",
           "stable_partition", "unique", "unique_consecutive", "run_length_encode", "reduce_by_key",
           "groupby_sum", "groupby_min", "groupby_max", "distributed_reduce", "distributed_scan",
           "distributed_sort", "distributed_argsort", "distributed_topk", "has_distributed", "Context",
           "WorkspaceSizes", "context_for", "GpuprimError", "InvalidArgumentError", "DtypeError", "OutOfMemoryError",
           "DeviceError", "NotCapturableError", "library_version", "__version__"]

__version__ = "0.3.0"

# A numpy array, a PyTorch tensor or a CuPy array; results are of its kind.
Array = TypeVar("Array")
Values = TypeVar("Values")


def library_version() -> str:
    """The version of the libgpuprim this package runs on ("0.3.0")."""
    return _LIB.gpuprim_version_string()


def _described(x: Any, what: str = "x") -> Tuple[Context, Any]:
    array = _arrays.describe(x, what)
    return context_for(array), array


def sort(x: Array, /, *, axis: Optional[int] = -1, descending: bool = False, stable: bool = True,
         values: Optional[Values] = None, out: Optional[Array] = None,
         values_out: Optional[Values] = None, begin_bit: Optional[int] = None,
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
    raises InvalidArgumentError.

    ``axis=-1`` (the default, as in the array API's ``sort``) sorts every row
    (the last axis) of a C-contiguous N-D array on its own, like
    ``np.sort(x, axis=-1, kind="stable")`` (values, out and values_out then
    have x's shape); for a 1-D x that is the whole array. ``axis=None``
    takes 1-D arrays only. Other axes raise ValueError. The sort is always
    stable (``stable=False`` is accepted, as the array API allows).

    Example::

        >>> gpuprim.sort(np.array([3.0, -0.0, np.nan, 0.0, -np.inf]))
        array([-inf,  -0.,   0.,   3.,  nan])
    """
    if values is None and begin_bit is None and end_bit is None and values_out is None:
        result = _fast_sort(x, axis, descending, out)
        if result is not None:
            return result
    context, array = _described(x)
    return context.sort(array, axis=axis, descending=descending, values=values, out=out,
                        values_out=values_out, begin_bit=begin_bit, end_bit=end_bit)


def sort_by_key(keys: Array, values: Values, *,
                descending: bool = False) -> Tuple[Array, Values]:
    """Sort (keys, values) pairs by key, stably; returns new (keys, values)."""
    return sort(keys, values=values, descending=descending)


def argsort(x: Array, /, *, axis: Optional[int] = -1, descending: bool = False,
            stable: bool = True, dtype: Any = "int64", begin_bit: Optional[int] = None,
            end_bit: Optional[int] = None) -> Array:
    """The stable permutation that sorts x: ``x[argsort(x)]`` is ``sort(x)``.
    Indices are int64 by default (numpy's and torch's index type); int32,
    uint32 and uint64 are accepted (the largest index must fit), spelled as
    numpy, PyTorch or CuPy spell dtypes (``np.int32``, ``"int32"``,
    ``np.dtype("int32")``, ``torch.int32``). The library
    generates the indices inside its sort. begin_bit/end_bit as for sort().
    ``axis=-1`` (the default): every row's permutation, indices within the
    row, like ``np.argsort(x, axis=-1, kind="stable")``; ``axis=None``: 1-D
    only. Always stable (``stable=False`` accepted).

    Example::

        >>> gpuprim.argsort(torch.tensor([2, 1, 2, 0], device="cuda"))
        tensor([3, 1, 0, 2], device='cuda:0')
    """
    if (dtype == "int64" or dtype is None) and begin_bit is None and end_bit is None:
        result = _fast_argsort(x, axis, descending)
        if result is not None:
            return result
    context, array = _described(x)
    return context.argsort(array, axis=axis, descending=descending, dtype=dtype,
                           begin_bit=begin_bit, end_bit=end_bit)


def topk(x: Array, k: int, /, *, largest: bool = True, axis: Optional[int] = -1,
         dtype: Any = "int64") -> Tuple[Array, Array]:
    """The k largest (or, largest=False, smallest) elements of x and their
    indices, like ``torch.topk(x, k, largest=largest)`` with sorted results:
    returns ``(values, indices)``, largest first (smallest first), equal
    elements by lower index first, so they are the first k of a stable
    descending (ascending) argsort: ``indices == argsort(x,
    descending=largest)[:k]`` and ``values == x[indices]``. Floats follow the
    sort's order: NaN ranks above +inf (NaNs come first among the largest, as
    in torch.topk) and -0.0 below +0.0. Indices are int64 by default (int32,
    uint32, uint64 accepted). ``axis=-1`` (the default, as torch.topk's
    ``dim=-1``): every row (last axis) of a C-contiguous N-D array, results
    of shape ``x.shape[:-1] + (k,)``, indices within the row (for a 1-D x:
    k elements); axis=None: 1-D only. k past the length (of x, or of its
    rows) raises InvalidArgumentError naming k, before any output is
    allocated.

    Example::

        >>> values, indices = gpuprim.topk(np.array([1.0, 5.0, 3.0, 5.0]), 2)
        >>> values, indices
        (array([5., 5.]), array([1, 3]))
    """
    if dtype == "int64" or dtype is None:
        result = _fast_topk(x, k, largest, axis)
        if result is not None:
            return result
    context, array = _described(x)
    return context.topk(array, k, largest=largest, axis=axis, dtype=dtype)


def scan(x: Array, op: str = "sum", *, axis: Optional[int] = None, exclusive: bool = False,
         out: Optional[Array] = None, dtype: Any = None) -> Array:
    """Prefix scan of the 1-D array x with op "sum", "min" or "max",
    inclusive (default) or exclusive; ``out`` may be x (in place).
    ``axis=-1``: every row (last axis) of a C-contiguous N-D array on its own.
    The scan's dtype (and the result's): ``dtype`` if given, else out's
    dtype if ``out`` is given, else for "sum" that of cumsum() (integers
    narrower than 64 bits widened), for "min"/"max" x's own."""
    context, array = _described(x)
    return context.scan(array, op, axis=axis, exclusive=exclusive, out=out, dtype=dtype)


def cumsum(x: Array, *, axis: Optional[int] = None, exclusive: bool = False,
           out: Optional[Array] = None, dtype: Any = None) -> Array:
    """Inclusive (or exclusive) prefix sum, like numpy.cumsum / torch.cumsum
    on a 1-D array (or along the last axis with ``axis=-1``). Integers
    narrower than 64 bits accumulate and return in a 64-bit integer as
    sum() does (numpy/CuPy: int64, or uint64 for unsigned; torch: int64),
    x cast first (a copy); ``dtype`` chooses the dtype instead (``x.dtype``:
    no copy, integers wrap like C), and a given ``out`` is summed in its own
    dtype (numpy's rule; ``out=x`` scans in place, wrapping)."""
    context, array = _described(x)
    return context.scan(array, "sum", axis=axis, exclusive=exclusive, out=out, dtype=dtype)


def sum(x: Array, /, *, axis: Optional[int] = None, dtype: Any = None,
        out: Optional[Array] = None) -> Any:
    """Sum of all elements of x (any shape, contiguous). Integers narrower
    than 64 bits are summed in, and return, a 64-bit integer, as the
    framework's own sum does: for numpy and CuPy arrays signed ones in
    int64 and unsigned ones in uint64 (numpy's rule: ``np.sum(x)``), for
    torch tensors int64 (``torch.sum``'s rule). The package casts x with its
    own library first (``x.astype`` / ``tensor.to``: a copy of x in the
    wider dtype). ``dtype`` chooses the dtype to sum in and return, like
    numpy's ``dtype=`` (``dtype=x.dtype``: no copy, integers wrap like C, as
    64-bit integers always do). Float sums are deterministic; float16 and
    bfloat16 accumulate in float32 and round once to x's dtype. A numpy
    scalar for numpy input; a 0-d tensor / array of the input's kind
    otherwise (on the GPU: no synchronization). ``axis=-1``: the sum of
    every row (last axis), an array of shape x.shape[:-1] like
    ``x.sum(axis=-1)`` (an empty row sums to 0). ``out``: an array of the
    result's dtype and shape (0-d, or x.shape[:-1] with ``axis=-1``) and of
    x's kind and device to write the result into, returned (no allocation
    on the common path); min and max take it too.

    Example::

        >>> gpuprim.sum(np.arange(10, dtype=np.float32))
        np.float32(45.0)
    """
    if dtype is None:
        result = _fast_reduce(_OP_SUM, x, axis, out)
        if result is not None:
            return result
    context, array = _described(x)
    return context.sum(array, axis=axis, dtype=dtype, out=out)


def min(x: Array, /, *, axis: Optional[int] = None, out: Optional[Array] = None) -> Any:
    """Smallest element of x (IEEE 754-2019 minimum for floats: NaN wins,
    -0.0 < +0.0). The identity (the dtype's largest value, +inf) when empty.
    ``axis=-1``: every row's, as for sum()."""
    result = _fast_reduce(_OP_MIN, x, axis, out)
    if result is not None:
        return result
    context, array = _described(x)
    return context.min(array, axis=axis, out=out)


def max(x: Array, /, *, axis: Optional[int] = None, out: Optional[Array] = None) -> Any:
    """Largest element of x (IEEE 754-2019 maximum for floats: NaN wins,
    -0.0 < +0.0). The identity (the dtype's smallest value, -inf) when empty.
    ``axis=-1``: every row's, as for sum()."""
    result = _fast_reduce(_OP_MAX, x, axis, out)
    if result is not None:
        return result
    context, array = _described(x)
    return context.max(array, axis=axis, out=out)


def argmin(x: Array, *, axis: Optional[int] = None) -> int:
    """Position of the smallest element of x, flattened (any shape,
    C-contiguous), as numpy's ``np.argmin(x)``: the first of equal smallest
    elements; a NaN anywhere gives the first NaN's position (numpy
    propagates NaN); -0.0 equals +0.0; bool arrays as numpy's (False before
    True). Returns a Python int (for GPU arrays the call waits for it). An
    empty x raises InvalidArgumentError (a ValueError, as numpy raises).
    Only ``axis=None``: another axis raises ValueError."""
    context, array = _described(x)
    return context.argmin(array, axis=axis)


def argmax(x: Array, *, axis: Optional[int] = None) -> int:
    """Position of the largest element of x, flattened, as
    ``np.argmax(x)``: the first of equal largest; the first NaN if x holds
    one; -0.0 equals +0.0. As argmin() otherwise."""
    context, array = _described(x)
    return context.argmax(array, axis=axis)


def dot(a: Array, b: Array) -> Any:
    """Sum of a[i] * b[i] over two arrays of the same dtype and size (fused
    multiply-add for floats, deterministic)."""
    context, array = _described(a, "a")
    return context.dot(array, b)


# Segments (CSR): segment s of the 1-D x is x[offsets[s]:offsets[s+1]], for a
# 1-D offsets array of int32, int64, uint32 or uint64 of x's kind and device.
# Offsets must not decrease and lie in [0, len(x)]; segments may be empty. A
# bad offset raises InvalidArgumentError naming the first bad index (nothing
# is written). On CUDA the library checks the offsets on the device and
# waits for that check: calls with offsets synchronize with the stream
# (a Context's set_offsets_check("deferred") defers it instead, experimental).
# max_segment_length (experimental): None, or a promise that no segment is
# longer (a longer one is reported as a bad offset is); calls pick their path
# by it.

def segment_sort(x: Array, offsets: Array, *, descending: bool = False,
                 values: Optional[Values] = None, out: Optional[Array] = None,
                 values_out: Optional[Values] = None, begin_bit: Optional[int] = None,
                 end_bit: Optional[int] = None,
                 max_segment_length: Optional[int] = None) -> Union[Array, Tuple[Array, Values]]:
    """Sorts every segment of x on its own, stably (options as for sort()).
    Elements outside every segment (before offsets[0] or from offsets[-1]
    on) are copied from x / values into new outputs and left as they are in
    a given ``out`` / ``values_out``."""
    context, array = _described(x)
    return context.segment_sort(array, offsets, descending=descending, values=values, out=out,
                                values_out=values_out, begin_bit=begin_bit, end_bit=end_bit,
                                max_segment_length=max_segment_length)


def segment_argsort(x: Array, offsets: Array, *, descending: bool = False,
                    dtype: Any = "int64", begin_bit: Optional[int] = None,
                    end_bit: Optional[int] = None, max_segment_length: Optional[int] = None) -> Array:
    """Every segment's stable permutation, indices within the segment (0 at
    its first element); dtype and bits as for argsort(). Positions outside
    every segment are 0."""
    context, array = _described(x)
    return context.segment_argsort(array, offsets, descending=descending, dtype=dtype,
                                   begin_bit=begin_bit, end_bit=end_bit,
                                   max_segment_length=max_segment_length)


def segment_topk(x: Array, offsets: Array, k: int, *, largest: bool = True,
                 dtype: Any = "int64", max_segment_length: Optional[int] = None) -> Tuple[Array, Array]:
    """topk() of every segment: ``(values, indices)`` of shape
    ``(len(offsets) - 1, k)``, row s the top k of segment s (indices within
    the segment, 0 at its first element). A segment shorter than k (an empty
    one included) fills its first len(segment) slots, sorted; its other
    slots hold value 0 and index -1 (the largest value of uint32/uint64
    indices). k may exceed every segment (the outputs keep k columns); a
    segment count times k past 2^64 raises InvalidArgumentError before any
    output is allocated."""
    context, array = _described(x)
    return context.segment_topk(array, offsets, k, largest=largest, dtype=dtype,
                                max_segment_length=max_segment_length)


def segment_scan(x: Array, offsets: Array, op: str = "sum", *, exclusive: bool = False,
                 out: Optional[Array] = None, dtype: Any = None,
                 max_segment_length: Optional[int] = None) -> Array:
    """Prefix scan ("sum", "min", "max") of every segment on its own; an
    exclusive scan starts each segment at the identity. Elements outside
    every segment are copied from x into a new output (left as they are in a
    given ``out``, which may be x). dtype as for scan()."""
    context, array = _described(x)
    return context.segment_scan(array, offsets, op, exclusive=exclusive, out=out, dtype=dtype,
                                max_segment_length=max_segment_length)


def segment_cumsum(x: Array, offsets: Array, *, exclusive: bool = False,
                   out: Optional[Array] = None, dtype: Any = None,
                   max_segment_length: Optional[int] = None) -> Array:
    """Inclusive (or exclusive) prefix sum of every segment, in cumsum()'s
    dtype (integers narrower than 64 bits widened), ``dtype``, or out's."""
    context, array = _described(x)
    return context.segment_scan(array, offsets, "sum", exclusive=exclusive, out=out, dtype=dtype,
                                max_segment_length=max_segment_length)


def segment_sum(x: Array, offsets: Array, *, dtype: Any = None,
                max_segment_length: Optional[int] = None) -> Array:
    """The sum of every segment: a 1-D array of len(offsets) - 1 elements,
    of x's kind and device, in sum()'s dtype (integers narrower than 64 bits
    widened, x cast first) or ``dtype`` (0 for an empty segment; floats
    deterministic, float16/bfloat16 accumulate in float32)."""
    context, array = _described(x)
    return context.segment_sum(array, offsets, dtype=dtype, max_segment_length=max_segment_length)


def segment_min(x: Array, offsets: Array, *, max_segment_length: Optional[int] = None) -> Array:
    """The smallest element of every segment (NaN wins; the dtype's largest
    value, +inf for floats, for an empty segment)."""
    context, array = _described(x)
    return context.segment_min(array, offsets, max_segment_length=max_segment_length)


def segment_max(x: Array, offsets: Array, *, max_segment_length: Optional[int] = None) -> Array:
    """The largest element of every segment (NaN wins; the dtype's smallest
    value, -inf for floats, for an empty segment)."""
    context, array = _described(x)
    return context.segment_max(array, offsets, max_segment_length=max_segment_length)


# Search, histograms and merge (experimental; issue 38). Results are of the
# input's kind on its device.

def searchsorted(a: Array, v: Array, /, *, side: str = "left", descending: bool = False,
                 dtype: Any = "int64") -> Array:
    """np.searchsorted(a, v, side=side) for the sorted a (ascending, or
    descending=True); an N-D a searches row by row (last axis) with v of
    shape a.shape[:-1] + (m,), like torch.searchsorted. v: a's dtype, kind
    and device. Indices int64 by default (int32, uint32, uint64 accepted).
    Floats follow the library's sort order, not numpy's: -0.0 comes before
    +0.0 and NaNs of distinct payloads are distinct keys after +inf (numpy
    ties -0.0 with +0.0 and all NaNs).

    Example::

        >>> gpuprim.searchsorted(np.array([1, 2, 2, 3]), np.array([2, 5]), side="right")
        array([3, 4])
    """
    context, array = _described(a, "a")
    return context.searchsorted(array, v, side=side, descending=descending, dtype=dtype)


def histogram(x: Array, bins: Union[int, Array, Sequence[Any]] = 10, range: Optional[Tuple[Any, Any]] = None,
              *, axis: Optional[int] = None) -> Tuple[Array, Array]:
    """np.histogram(x, bins, range): (counts int64, edges), of x's kind and
    device. bins an int: edges as numpy makes them (x's float dtype, float64
    for integers); range defaults to (x.min(), x.max()); floats are binned
    in float64 by gpuprim_histogram_even's rule, so an element within a
    rounding of an inner edge may land in the bin next to numpy's. bins a
    1-D array of increasing edges: numpy's counts exactly
    (edges[b] <= x < edges[b + 1], x == edges[-1] in the last bin, compared
    in np.result_type(x, edges)); range is ignored. Either way elements
    equal to the upper bound count in the last bin (numpy's closed last
    bin), others outside and NaNs are ignored. axis=-1 (x of 2 or more
    dimensions): one histogram per row, counts of shape x.shape[:-1] +
    (bins,), the same edges for every row (returned once; an int bins'
    default range spans the whole array); the default axis=None counts x
    flattened, as numpy does.

    Example::

        >>> gpuprim.histogram(np.array([[0, 1, 1], [2, 2, 3]]), bins=[0, 1, 2, 3], axis=-1)[0]
        array([[1, 2, 0],
               [0, 0, 3]])
    """
    context, array = _described(x)
    return context.histogram(array, bins, range, axis=axis)


def bincount(x: Array, minlength: int = 0, *, axis: Optional[int] = None) -> Array:
    """np.bincount(x, minlength=minlength) of a non-negative integer array
    (int64 counts, length max(x.max() + 1, minlength)); a negative value
    raises ValueError naming x. axis=-1 (x of 2 or more dimensions): one
    bincount per row, counts of shape x.shape[:-1] + (bins,) with bins =
    max(x.max() + 1, minlength) over the whole array; the default counts x
    flattened."""
    context, array = _described(x)
    return context.bincount(array, minlength, axis=axis)


def merge(a: Array, b: Array, /, *, values_a: Optional[Values] = None, values_b: Optional[Values] = None,
          descending: bool = False) -> Union[Array, Tuple[Array, Values]]:
    """The stable merge of two sorted 1-D runs (both ascending, or both
    descending): keys, or (keys, values) with values_a and values_b; ties
    take a's elements first, so the result equals a stable sort of the
    concatenation. Floats in the library's sort order (-0.0 before +0.0,
    NaNs after +inf by bit pattern; numpy ties -0.0 with +0.0)."""
    context, array = _described(a, "a")
    return context.merge(array, b, values_a=values_a, values_b=values_b, descending=descending)


# Select, partition, unique, run-length encode (experimental; gpuprim.h's
# gpuprim_select, gpuprim_partition, gpuprim_unique,
# gpuprim_run_length_encode). The counts come back to the host (the call
# waits for them); results are views of arrays of the input's length.
def select(x: Array, mask: Optional[Array] = None, /, *, op: Optional[str] = None, value: Any = None,
           upper: Any = None, values: Optional[Values] = None, output: bool = True, positions: bool = False,
           positions_dtype: Any = "int64") -> Any:
    """The elements of the 1-D x the predicate keeps, in order: ``x[mask]``
    (mask: bool or integer, nonzero keeps) or ``x[x op value]`` with op one
    of "<", "<=", ">", ">=", "==", "!=", "in_range" (value <= x < upper),
    "isnan", "notnan" (by value as numpy compares: -0.0 == 0.0, NaN false
    but for "!="). Returns the kept elements, and as asked the values moved
    with them (values=) and their positions (positions=True), a tuple where
    more than one.

    Example::

        >>> gpuprim.select(np.array([3, 1, 4, 1, 5]), op=">", value=2)
        array([3, 4, 5])
    """
    context, array = _described(x)
    return context.select(array, mask, op=op, value=value, upper=upper, values=values, output=output,
                          positions=positions, positions_dtype=positions_dtype)


def compress(condition: Array, a: Array, /) -> Array:
    """np.compress(condition, a) of a 1-D a and a condition of its length
    (bool or integer: nonzero keeps)."""
    context, array = _described(a, "a")
    return context.select(array, condition)


def flatnonzero(x: Array, /, *, dtype: Any = "int64") -> Array:
    """np.flatnonzero(x) of a 1-D x: the positions of the nonzero elements
    (NaN is nonzero, -0.0 is zero), int64 by default."""
    context, array = _described(x)
    return context.select(array, op="!=", value=0, output=False, positions=True, positions_dtype=dtype)


def nonzero(x: Array, /) -> Tuple[Array]:
    """np.nonzero(x) of a 1-D x: a tuple of one array, the positions of the
    nonzero elements (int64)."""
    return (flatnonzero(x),)


def stable_partition(x: Array, mask: Optional[Array] = None, /, *, op: Optional[str] = None, value: Any = None,
                     upper: Any = None, values: Optional[Values] = None) -> Tuple[Any, ...]:
    """A stable two-way split of the 1-D x: the elements the predicate (as
    for select) keeps, in order, then the others, in order. Returns
    (result, count) or, with values, (result, values_result, count); count
    is how many were kept: result[:count] is select's result."""
    context, array = _described(x)
    return context.stable_partition(array, mask, op=op, value=value, upper=upper, values=values)


def unique(x: Array, /, *, return_inverse: bool = False, return_counts: bool = False) -> Any:
    """np.unique(x, return_inverse=..., return_counts=...): the sorted
    distinct values of x (flattened), numpy's way for floats (-0.0 and
    +0.0 one value, all NaNs one value, last); one library group-by call
    (keys, counts and inverse together). inverse has x's shape; inverse and
    counts int64."""
    context, array = _described(x)
    return context.unique(array, return_inverse=return_inverse, return_counts=return_counts)


def unique_consecutive(x: Array, /, *, return_counts: bool = False, values: Optional[Values] = None) -> Any:
    """torch.unique_consecutive(x, return_counts=...) of a 1-D x: the first
    element of each run of equal consecutive elements (and the runs'
    lengths, int64). Equal means equal bits: -0.0 and +0.0 are different
    runs, and a run of NaNs with the same bits is one run (torch compares
    values). values=: each run's first value too."""
    context, array = _described(x)
    return context.unique_consecutive(array, return_counts=return_counts, values=values)


def run_length_encode(x: Array, /, *, non_trivial: bool = False, dtype: Any = "int64") -> Tuple[Array, Array, Array]:
    """The runs of equal consecutive elements of the 1-D x (equal bits):
    (keys, starts, lengths), indices int64 by default; non_trivial=True:
    only the runs of 2 or more (cub::DeviceRunLengthEncode::NonTrivialRuns)."""
    context, array = _described(x)
    return context.run_length_encode(array, non_trivial=non_trivial, dtype=dtype)


# Reduce-by-key and group-by (experimental; gpuprim.h's
# gpuprim_reduce_by_key, gpuprim_group_by). The counts come back to the host
# (the call waits for them); results are views of arrays of keys' length.
def reduce_by_key(keys: Array, values: Values, /, op: str = "sum", *, return_counts: bool = False,
                  dtype: Any = None) -> Tuple[Any, ...]:
    """Each run of equal consecutive keys of the 1-D keys reduced with op
    ("sum", "min", "max") over its values in order
    (cub::DeviceReduce::ReduceByKey): (unique_keys, results) or with
    return_counts (unique_keys, results, lengths), lengths int64. Keys are
    equal when their bits are (as unique_consecutive). Sums as sum() makes
    them (integers narrower than 64 bits widened; dtype= to choose).

    Example::

        >>> gpuprim.reduce_by_key(np.array([1, 1, 2, 1]), np.array([1.0, 2.0, 3.0, 4.0]))
        (array([1, 2, 1]), array([3., 3., 4.]))
    """
    context, array = _described(keys, "keys")
    return context.reduce_by_key(array, values, op, return_counts=return_counts, dtype=dtype)


def groupby_sum(keys: Array, values: Values, /, *, return_counts: bool = False,
                dtype: Any = None) -> Tuple[Any, ...]:
    """The sum of values per distinct key of the 1-D keys (any order):
    (sorted distinct keys, sums) or with return_counts (keys, sums, counts),
    as ``pd.Series(values).groupby(keys, dropna=False).sum()`` (float keys
    grouped as np.unique groups them: -0.0 and +0.0 one key, every NaN one
    key, last) but NaN values propagate (numpy's sum, not pandas' skipna).
    Float sums deterministic; integers narrower than 64 bits summed widened
    (dtype= to choose); counts int64.

    Example::

        >>> gpuprim.groupby_sum(np.array([3, 1, 3]), np.array([1, 2, 4]))
        (array([1, 3]), array([2, 5]))
    """
    context, array = _described(keys, "keys")
    return context.groupby_sum(array, values, return_counts=return_counts, dtype=dtype)


def groupby_min(keys: Array, values: Values, /, *, return_counts: bool = False) -> Tuple[Any, ...]:
    """groupby_sum's groups with each group's smallest value (values'
    dtype; NaN wins, -0.0 < +0.0)."""
    context, array = _described(keys, "keys")
    return context.groupby_min(array, values, return_counts=return_counts)


def groupby_max(keys: Array, values: Values, /, *, return_counts: bool = False) -> Tuple[Any, ...]:
    """groupby_sum's groups with each group's largest value (values'
    dtype; NaN wins, -0.0 < +0.0)."""
    context, array = _described(keys, "keys")
    return context.groupby_max(array, values, return_counts=return_counts)


# Distributed calls (experimental; gpuprim.h's distributed section). The data
# are the concatenation of every rank's x in rank order (ranks may hold
# different sizes, zero too). Every rank of comm makes the same calls in the
# same order with the same options; each call returns when its results are
# complete. comm (keyword): an mpi4py communicator (MPI.COMM_WORLD, ...) for numpy
# arrays and CPU tensors, or for CUDA tensors and CuPy arrays an NCCL
# communicator on the array's device (an int ncclComm_t, CuPy's
# cupy.cuda.nccl.NcclCommunicator, nccl4py's nccl.core.Communicator); it is
# attached to the calling thread's context for x (Context.attach_communicator
# says more). A bad argument on any rank makes the call fail on every rank.

def has_distributed() -> bool:
    """Whether the loaded libgpuprim has the distributed calls (whether it
    was built with the MPI or NCCL engine shows when a communicator is
    attached: DeviceError, BACKEND_UNAVAILABLE, without it)."""
    return _HAS_DISTRIBUTED


def distributed_reduce(x: Array, op: str = "sum", *, comm: Any, dtype: Any = None) -> Any:
    """op ("sum", "min", "max") over every rank's x; every rank gets the
    result, of the kind and dtype sum() returns (integers narrower than 64
    bits summed in a 64-bit integer; ``dtype`` as for sum()). Float sums
    are deterministic for a given layout of the data over the ranks (each
    rank's sum, then the ranks' sums in rank order)."""
    return _distributed_context(x, comm).distributed_reduce(x, op, dtype=dtype)


def distributed_scan(x: Array, op: str = "sum", *, comm: Any, exclusive: bool = False,
                     out: Optional[Array] = None, dtype: Any = None) -> Array:
    """Prefix scan ("sum", "min", "max") of the global data: this rank's part
    (x's size) of the inclusive (or exclusive) scan of the concatenation of
    every rank's 1-D x. ``out`` may be x (in place); the dtype as for
    scan()."""
    return _distributed_context(x, comm).distributed_scan(x, op, exclusive=exclusive, out=out,
                                                          dtype=dtype)


def distributed_sort(x: Array, *, comm: Any, descending: bool = False,
                     values: Optional[Values] = None, out: Optional[Array] = None,
                     values_out: Optional[Values] = None, begin_bit: Optional[int] = None,
                     end_bit: Optional[int] = None) -> Union[Array, Tuple[Array, Values]]:
    """Stable sort of the global data: each rank gets as many elements as
    it gave, its part of the sorted concatenation of every rank's 1-D x
    (equal keys in global order: rank, then position). values, out,
    values_out, descending, begin_bit and end_bit as for sort()."""
    return _distributed_context(x, comm).distributed_sort(
        x, descending=descending, values=values, out=out, values_out=values_out,
        begin_bit=begin_bit, end_bit=end_bit)


def distributed_argsort(x: Array, *, comm: Any, descending: bool = False, dtype: Any = "int64",
                        begin_bit: Optional[int] = None, end_bit: Optional[int] = None) -> Array:
    """The global positions (offset of the rank + position in x) of the
    elements distributed_sort() puts on this rank's part, int64 (or
    uint64)."""
    return _distributed_context(x, comm).distributed_argsort(
        x, descending=descending, dtype=dtype, begin_bit=begin_bit, end_bit=end_bit)


def distributed_topk(x: Array, k: int, *, comm: Any, largest: bool = True,
                     dtype: Any = "int64") -> Tuple[Array, Array]:
    """topk() of the global data: every rank gets the same ``(values,
    indices)``, k elements, indices global positions, ties to the lower
    global position. k (the same on every rank) may be up to the global
    count; past it every rank raises InvalidArgumentError naming k, before
    any output is allocated (for k past 65536 the ranks first sum their
    counts: one more collective step)."""
    return _distributed_context(x, comm).distributed_topk(x, k, largest=largest, dtype=dtype)
