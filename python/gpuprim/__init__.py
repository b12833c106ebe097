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

Adjacent differences (experimental; 1-D): ``adjacent_difference`` (each
element minus the one before it, the first kept: ``np.diff(x, prepend=0)``,
the inverse of ``cumsum``).

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
import inspect as _inspect
from typing import Any, Callable, Concatenate, Optional, ParamSpec, Tuple, TypeVar, Union

import os as _os

# A CMake build's compiled layer (<build>/python_extension/_ext*.so; ctest's
# python_package sets it) for the package's source tree.
if _os.environ.get("GPUPRIM_EXTENSION_DIR"):
    __path__.insert(0, _os.environ["GPUPRIM_EXTENSION_DIR"])

from . import _arrays
# Array (Values): an array (values) of any framework the package takes; results are of its kind.
from ._core import Array, Context, Values, WorkspaceSizes, context_for, distributed_context as _distributed_context
from ._lib import (LIBRARY_PATH, DeviceError, DtypeError, GpuprimError, InvalidArgumentError,
                   NotCapturableError, OutOfMemoryError, HAS_DISTRIBUTED as _HAS_DISTRIBUTED,
                   LIB as _LIB)
from . import _core

# The common path of sort, argsort, topk, sum, min and max runs in the
# compiled layer (python/src/fast_calls.cpp): it returns None for anything
# off that path, which then takes the general one below.
_LIB.fast_init(_arrays._fast_dtype_code, _core._fast_index_code, _core._context_for_object,
               _core._raise_status)
_fast_sort, _fast_argsort, _fast_topk, _fast_reduce = (
    _LIB.fast_sort, _LIB.fast_argsort, _LIB.fast_topk, _LIB.fast_reduce)
_OP_SUM, _OP_MIN, _OP_MAX = _LIB.OP_SUM, _LIB.OP_MIN, _LIB.OP_MAX

__all__ = ["sort", "sort_by_key", "argsort", "topk", "cumsum", "scan", "adjacent_difference", "sum", "min", "max",
           "argmin", "argmax", "dot",
           "segment_sort", "segment_argsort", "segment_topk", "segment_cumsum", "segment_scan", "segment_sum",
           "segment_min", "segment_max", "searchsorted", "histogram", "bincount", "merge", "select", "compress", "flatnonzero", "nonzero",
           "stable_partition", "unique", "unique_consecutive", "run_length_encode", "reduce_by_key",
           "groupby_sum", "groupby_min", "groupby_max", "distributed_reduce", "distributed_scan",
           "distributed_sort", "distributed_argsort", "distributed_topk", "has_distributed", "Context",
           "WorkspaceSizes", "context_for", "GpuprimError", "InvalidArgumentError", "DtypeError", "OutOfMemoryError",
           "DeviceError", "NotCapturableError", "library_version", "__version__"]

__version__ = "0.4.0"


def library_version() -> str:
    """The version of the libgpuprim this package runs on ("0.4.0").

    Example::

        >>> gpuprim.library_version() == gpuprim.__version__
        True
    """
    return _LIB.gpuprim_version_string()


def _described(x: Any, what: str = "x") -> Tuple[Context, Any]:
    array = _arrays.describe(x, what)
    return context_for(array), array


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _module_function(method: Callable[Concatenate[Context, _P], _R]) -> Callable[_P, _R]:
    """The module-level form of a Context method: the same parameters and
    docstring without self, run on the context its first argument picks
    (context_for: the array's framework, device and stream). So an entry
    point is written once, as the method. The function is compiled from the
    signature (as dataclasses makes its methods): a call costs what a
    written-out one does, with no *args/**kwargs repacking."""
    signature = _inspect.signature(method)
    parameters = list(signature.parameters.values())[1:]
    defaults = {}
    declared, passed = [], []
    kind = _inspect.Parameter
    for number, parameter in enumerate(parameters):
        if parameter.kind in (kind.VAR_POSITIONAL, kind.VAR_KEYWORD):
            raise TypeError(f"gpuprim: {method.__name__}: *args and **kwargs are not forwarded")
        if parameter.kind is kind.KEYWORD_ONLY and "*" not in declared:
            declared.append("*")
        text = parameter.name
        if parameter.default is not kind.empty:
            defaults[f"_default{number}"] = parameter.default
            text += f"=_default{number}"
        declared.append(text)
        if parameter.kind is kind.POSITIONAL_ONLY and (
                number + 1 == len(parameters) or parameters[number + 1].kind is not kind.POSITIONAL_ONLY):
            declared.append("/")
        passed.append(parameter.name if parameter.kind is not kind.KEYWORD_ONLY
                      else f"{parameter.name}={parameter.name}")
    first = parameters[0].name
    passed[0] = "array"
    source = (f"def {method.__name__}({', '.join(declared)}):\n"
              f"    context, array = _described({first}, {first!r})\n"
              f"    return _method(context, {', '.join(passed)})\n")
    scope = dict(defaults, _described=_described, _method=method)
    exec(source, scope)  # noqa: S102 (source built above from the method's own signature)
    function = scope[method.__name__]
    function.__qualname__ = method.__name__
    function.__doc__ = method.__doc__
    function.__module__ = __name__
    function.__signature__ = signature.replace(parameters=parameters)
    function.__wrapped__ = method
    return function


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
    """Sort (keys, values) pairs by key, stably; returns new (keys, values).

    Example::

        >>> gpuprim.sort_by_key(np.array([2, 1, 2, 0]), np.array([10., 20., 30., 40.]))
        (array([0, 1, 2, 2]), array([40., 20., 10., 30.]))
    """
    context, array = _described(keys, "keys")
    layout = _core._row_layout(array, -1)
    return context._sort(array, layout, descending, values, None, None, None, None, keys_name="keys")


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

        >>> gpuprim.argsort(np.array([2, 1, 2, 0]))
        array([3, 1, 0, 2])
        >>> gpuprim.argsort(torch.tensor([2, 1, 2, 0], device="cuda"))
        tensor([3, 1, 0, 2], device='cuda:0')
    """
    if begin_bit is None and end_bit is None:
        result = _fast_argsort(x, axis, descending, dtype)
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
    result = _fast_topk(x, k, largest, axis, dtype)
    if result is not None:
        return result
    context, array = _described(x)
    return context.topk(array, k, largest=largest, axis=axis, dtype=dtype)


scan = _module_function(Context.scan)
adjacent_difference = _module_function(Context.adjacent_difference)


def cumsum(x: Array, *, axis: Optional[int] = None, exclusive: bool = False,
           out: Optional[Array] = None, dtype: Any = None) -> Array:
    """Inclusive (or exclusive) prefix sum, like numpy.cumsum / torch.cumsum
    on a 1-D array (or along the last axis with ``axis=-1``). Integers
    narrower than 64 bits accumulate and return in a 64-bit integer as
    sum() does (numpy/CuPy: int64, or uint64 for unsigned; torch: int64),
    x cast first (a copy); ``dtype`` chooses the dtype instead (``x.dtype``:
    no copy, integers wrap like C), and a given ``out`` is summed in its own
    dtype (numpy's rule; ``out=x`` scans in place, wrapping).

    Example::

        >>> gpuprim.cumsum(np.array([1, 2, 3, 4], np.int32))
        array([ 1,  3,  6, 10])
        >>> gpuprim.cumsum(np.array([1, 2, 3, 4]), exclusive=True)
        array([0, 1, 3, 6])
    """
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
    ``axis=-1``: every row's, as for sum().

    Example::

        >>> print(gpuprim.min(np.array([2.0, -1.0, 3.0])))
        -1.0
        >>> gpuprim.min(np.array([[2, 5], [7, 1]]), axis=-1)
        array([2, 1])
    """
    result = _fast_reduce(_OP_MIN, x, axis, out)
    if result is not None:
        return result
    context, array = _described(x)
    return context.min(array, axis=axis, out=out)


def max(x: Array, /, *, axis: Optional[int] = None, out: Optional[Array] = None) -> Any:
    """Largest element of x (IEEE 754-2019 maximum for floats: NaN wins,
    -0.0 < +0.0). The identity (the dtype's smallest value, -inf) when empty.
    ``axis=-1``: every row's, as for sum().

    Example::

        >>> print(gpuprim.max(np.array([2.0, np.nan, 3.0])))
        nan
    """
    result = _fast_reduce(_OP_MAX, x, axis, out)
    if result is not None:
        return result
    context, array = _described(x)
    return context.max(array, axis=axis, out=out)


argmin = _module_function(Context.argmin)
argmax = _module_function(Context.argmax)
dot = _module_function(Context.dot)


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

segment_sort = _module_function(Context.segment_sort)
segment_argsort = _module_function(Context.segment_argsort)
segment_topk = _module_function(Context.segment_topk)
segment_scan = _module_function(Context.segment_scan)


def segment_cumsum(x: Array, offsets: Array, *, exclusive: bool = False,
                   out: Optional[Array] = None, dtype: Any = None,
                   max_segment_length: Optional[int] = None) -> Array:
    """Inclusive (or exclusive) prefix sum of every segment, in cumsum()'s
    dtype (integers narrower than 64 bits widened), ``dtype``, or out's.

    Example::

        >>> gpuprim.segment_cumsum(np.array([1, 2, 3, 4, 5]), np.array([0, 2, 5]))
        array([ 1,  3,  3,  7, 12])
    """
    context, array = _described(x)
    return context.segment_scan(array, offsets, "sum", exclusive=exclusive, out=out, dtype=dtype,
                                max_segment_length=max_segment_length)


segment_sum = _module_function(Context.segment_sum)
segment_min = _module_function(Context.segment_min)
segment_max = _module_function(Context.segment_max)


# Search, histograms and merge (experimental; issue 38). Results are of the
# input's kind on its device.

searchsorted = _module_function(Context.searchsorted)
histogram = _module_function(Context.histogram)
bincount = _module_function(Context.bincount)
merge = _module_function(Context.merge)


# Select, partition, unique, run-length encode (experimental; gpuprim.h's
# gpuprim_select, gpuprim_partition, gpuprim_unique,
# gpuprim_run_length_encode). The counts come back to the host (the call
# waits for them); results are views of arrays of the input's length.
select = _module_function(Context.select)


def compress(condition: Array, a: Array, /) -> Array:
    """np.compress(condition, a) of a 1-D a and a condition of its length
    (bool or integer: nonzero keeps).

    Example::

        >>> gpuprim.compress(np.array([True, False, True]), np.array([7, 8, 9]))
        array([7, 9])
    """
    context, array = _described(a, "a")
    source = _core._one_dimensional(array, "a")
    # a refusal names compress's own arguments
    return context._select(source, _core._predicate(source, condition, None, None, None, "compress",
                                                    "condition", "a"))


def flatnonzero(x: Array, /, *, dtype: Any = "int64") -> Array:
    """np.flatnonzero(x) of a 1-D x: the positions of the nonzero elements
    (NaN is nonzero, -0.0 is zero), int64 by default.

    Example::

        >>> gpuprim.flatnonzero(np.array([0.0, 2.0, -0.0, np.nan]))
        array([1, 3])
    """
    context, array = _described(x)
    return context.select(array, op="!=", value=0, output=False, positions=True, positions_dtype=dtype)


def nonzero(x: Array, /) -> Tuple[Array]:
    """np.nonzero(x) of a 1-D x: a tuple of one array, the positions of the
    nonzero elements (int64).

    Example::

        >>> gpuprim.nonzero(np.array([0, 5, 0, 7]))
        (array([1, 3]),)
    """
    return (flatnonzero(x),)


stable_partition = _module_function(Context.stable_partition)
unique = _module_function(Context.unique)
unique_consecutive = _module_function(Context.unique_consecutive)
run_length_encode = _module_function(Context.run_length_encode)


# Reduce-by-key and group-by (experimental; gpuprim.h's
# gpuprim_reduce_by_key, gpuprim_group_by). The counts come back to the host
# (the call waits for them); results are views of arrays of keys' length.
reduce_by_key = _module_function(Context.reduce_by_key)
groupby_sum = _module_function(Context.groupby_sum)
groupby_min = _module_function(Context.groupby_min)
groupby_max = _module_function(Context.groupby_max)


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
    attached: DeviceError, BACKEND_UNAVAILABLE, without it).

    Example::

        >>> gpuprim.has_distributed()  # a library built with MPI or NCCL
        True
    """
    return _HAS_DISTRIBUTED


def distributed_reduce(x: Array, op: str = "sum", *, comm: Any, dtype: Any = None) -> Any:
    """op ("sum", "min", "max") over every rank's x; every rank gets the
    result, of the kind and dtype sum() returns (integers narrower than 64
    bits summed in a 64-bit integer; ``dtype`` as for sum()). Float sums
    are deterministic for a given layout of the data over the ranks (each
    rank's sum, then the ranks' sums in rank order).

    On one rank (``python script.py``; under ``mpirun -n N`` every rank
    gets the sum of all ranks' elements):

        >>> from mpi4py import MPI
        >>> print(gpuprim.distributed_reduce(np.array([1.0, 2.0]), comm=MPI.COMM_WORLD))
        3.0
    """
    return _distributed_context(x, comm).distributed_reduce(x, op, dtype=dtype)


def distributed_scan(x: Array, op: str = "sum", *, comm: Any, exclusive: bool = False,
                     out: Optional[Array] = None, dtype: Any = None) -> Array:
    """Prefix scan ("sum", "min", "max") of the global data: this rank's part
    (x's size) of the inclusive (or exclusive) scan of the concatenation of
    every rank's 1-D x. ``out`` may be x (in place); the dtype as for
    scan().

    On one rank (with more, each rank gets its part of the scan):

        >>> from mpi4py import MPI
        >>> gpuprim.distributed_scan(np.array([1, 2, 3]), comm=MPI.COMM_WORLD)
        array([1, 3, 6])
    """
    return _distributed_context(x, comm).distributed_scan(x, op, exclusive=exclusive, out=out,
                                                          dtype=dtype)


def distributed_sort(x: Array, *, comm: Any, descending: bool = False,
                     values: Optional[Values] = None, out: Optional[Array] = None,
                     values_out: Optional[Values] = None, begin_bit: Optional[int] = None,
                     end_bit: Optional[int] = None) -> Union[Array, Tuple[Array, Values]]:
    """Stable sort of the global data: each rank gets as many elements as
    it gave, its part of the sorted concatenation of every rank's 1-D x
    (equal keys in global order: rank, then position). values, out,
    values_out, descending, begin_bit and end_bit as for sort().

    On one rank (with more, each rank gets its share of the sorted data):

        >>> from mpi4py import MPI
        >>> gpuprim.distributed_sort(np.array([3, 1, 2]), comm=MPI.COMM_WORLD)
        array([1, 2, 3])
    """
    return _distributed_context(x, comm).distributed_sort(
        x, descending=descending, values=values, out=out, values_out=values_out,
        begin_bit=begin_bit, end_bit=end_bit)


def distributed_argsort(x: Array, *, comm: Any, descending: bool = False, dtype: Any = "int64",
                        begin_bit: Optional[int] = None, end_bit: Optional[int] = None) -> Array:
    """The global positions (offset of the rank + position in x) of the
    elements distributed_sort() puts on this rank's part, int64 (or
    uint64).

    On one rank (with more, positions count from rank 0's first element):

        >>> from mpi4py import MPI
        >>> gpuprim.distributed_argsort(np.array([3, 1, 2]), comm=MPI.COMM_WORLD)
        array([1, 2, 0])
    """
    return _distributed_context(x, comm).distributed_argsort(
        x, descending=descending, dtype=dtype, begin_bit=begin_bit, end_bit=end_bit)


def distributed_topk(x: Array, k: int, *, comm: Any, largest: bool = True,
                     dtype: Any = "int64") -> Tuple[Array, Array]:
    """topk() of the global data: every rank gets the same ``(values,
    indices)``, k elements, indices global positions, ties to the lower
    global position. k (the same on every rank) may be up to the global
    count; past it every rank raises InvalidArgumentError naming k, before
    any output is allocated (for k past 65536 the ranks first sum their
    counts: one more collective step).

    On one rank (with more, every rank gets the k of all ranks' data):

        >>> from mpi4py import MPI
        >>> gpuprim.distributed_topk(np.array([3.0, 1.0, 2.0]), 2, comm=MPI.COMM_WORLD)
        (array([3., 2.]), array([0, 2]))
    """
    return _distributed_context(x, comm).distributed_topk(x, k, largest=largest, dtype=dtype)
