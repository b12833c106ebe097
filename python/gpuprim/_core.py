# SPDX-License-Identifier: Apache-2.0
"""Contexts and the operations, over the C ABI."""
import atexit
import contextlib
import functools
import math
import operator
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Any, Optional, Sequence, Tuple, TypeVar, Union

from . import _arrays, _lib
from ._lib import LIB, error_for

# A numpy array, a PyTorch tensor or a CuPy array; results are of its kind.
Array = TypeVar("Array")
Values = TypeVar("Values")

_BACKENDS = {"auto": _lib.BACKEND_AUTO, "cpu": _lib.BACKEND_CPU, "cuda": _lib.BACKEND_CUDA}
_OPS = {"sum": _lib.OP_SUM, "min": _lib.OP_MIN, "max": _lib.OP_MAX}
_INDEX_DTYPES = ("int64", "int32", "uint32", "uint64")
_OFFSETS_CHECKS = {"wait": _lib.OFFSETS_CHECK_WAIT, "deferred": _lib.OFFSETS_CHECK_DEFERRED}
_INOUT = "inout"  # an operand the call writes, whose prior contents it may keep
_CUDA_STREAM_LEGACY = 1  # cudaStreamLegacy: what stream 0 means to a framework


class WorkspaceSizes:
    """(Experimental.) The workspace calls take, per block
    (gpuprim_workspace_sizes_t): ``main_bytes`` the block most calls use
    (what reserve_workspace(bytes) grows), ``side_bytes`` the second block
    (CUDA: argsort without the sorted keys, group-by, top-k past 8192 keys,
    segmented sorts; 0 on the CPU), ``bounded`` True when a size depends on
    the data and is the most it can take. Context.workspace_query() fills
    one; Context.reserve_workspace_sizes() takes one."""

    __slots__ = ("main_bytes", "side_bytes", "bounded")

    def __init__(self, main_bytes: int = 0, side_bytes: int = 0, bounded: bool = False):
        self.main_bytes = main_bytes
        self.side_bytes = side_bytes
        self.bounded = bounded

    def __repr__(self):
        return (f"gpuprim.WorkspaceSizes(main_bytes={self.main_bytes}, side_bytes={self.side_bytes}, "
                f"bounded={self.bounded})")


def _serialized(method):
    """Runs a Context method under the context's lock (Context._lock)."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class Context:
    """A libgpuprim context: a backend ("cpu" or "cuda"), a device and, on
    CUDA, the stream every call is ordered on.

    The module-level functions keep one context per thread, backend, device
    and stream and pick it from their arguments; make a Context yourself to
    choose, e.g. ``Context("cuda")`` to run numpy arrays on the GPU (their data
    is copied to the device and back). Use it as a context manager or call
    close(). Threads may share a context: its calls take turns (a lock per
    context; calls on different contexts run at the same time). cpu_threads:
    how many threads one call on the CPU backend may use (0: every core;
    results are the same for every count).

    allocator (experimental): where every block of the context's memory
    comes from (its workspace, the buffers it makes, on CUDA its own
    counters):

    - None (default): the library's own, cudaMalloc on CUDA, the C
      allocator on the CPU.
    - ``"torch"``: PyTorch's CUDA caching allocator
      (``torch.cuda.caching_allocator_alloc`` on the context's device and
      stream), so the memory shows in ``torch.cuda.memory_allocated()`` and
      is reused from torch's cache. CUDA contexts only.
    - ``"cupy"``: CuPy's current allocator (``cupy.cuda.alloc``, by default
      its memory pool) on the context's device and stream. CUDA only.
    - any object with ``allocate(bytes, stream) -> int`` and ``free(address,
      bytes, stream)``, on both backends: allocate returns the address of at
      least ``bytes`` bytes aligned to 256 (device memory on CUDA, host
      memory on the CPU), usable on ``stream`` (the context's
      cudaStream_t as an int; 0 on the CPU), or returns 0 / raises when it
      cannot (the call then raises OutOfMemoryError, the allocator's
      exception as its ``__cause__``, or a message saying that allocate
      returned 0; a block not aligned to 256 is given
      back to free and the call raises InvalidArgumentError). free gives
      back a block, with the bytes asked for, ordered on ``stream``: work
      the library enqueued before it may still use the block (a
      stream-ordered pool is fine; one that frees at once must synchronize
      the stream). An exception from free is reported through
      ``sys.unraisablehook`` and otherwise ignored. Both are called with
      the GIL held from inside the library's calls, on the calling thread,
      with the context's lock held: they must not call gpuprim on this
      context, and the context must not be shared between threads. The
      context keeps the object until close(), which gives back every block
      still held.

    The module-level functions' contexts for CUDA tensors use ``"torch"``,
    for CuPy arrays ``"cupy"``: the library's memory comes from the
    framework's allocator (gpuprim.context_for(x).allocator says which).
    """

    def __init__(self, backend: str = "auto", device: int = 0, stream: int = None,
                 cpu_threads: int = 0, allocator=None):
        if backend not in _BACKENDS:
            raise ValueError(f"gpuprim: backend must be one of {', '.join(_BACKENDS)}, not {backend!r}")
        for value, what in ((device, "device"), (cpu_threads, "cpu_threads")):
            if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**31:
                raise TypeError(f"gpuprim: {what} must be a 32-bit integer, not {value!r}")
        if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
            raise TypeError(f"gpuprim: stream must be None or a CUDA stream's address (an int), not {stream!r}")
        if stream is not None and not 0 <= stream < 2**64:
            raise ValueError(f"gpuprim: stream must be a CUDA stream's address, from 0 to 2**64 - 1, not {stream}")
        bridge = None if allocator is None else _Allocator(_allocator_object(allocator, backend, device))
        status, handle, message = LIB.gpuprim_context_create(_BACKENDS[backend], device, stream or 0,
                                                             cpu_threads, bridge)
        if status:
            _raise_with_cause(status, message, bridge)
        self._handle = handle
        # Serializes this object's calls: the wrap cache (whose evictions
        # destroy buffers), the wrap-to-call window, the status-to-message
        # read and close() are not safe to interleave across threads.
        self._lock = threading.RLock()
        self._offsets_check = "wait"  # set_offsets_check's mode (the library's default)
        # The allocator's object (the library holds only its address): kept
        # until the context is destroyed, which gives back its last blocks.
        self._bridge = bridge
        self._allocator = allocator
        self._wraps = _lib.LIB.WrapCache(handle)  # buffers over callers' memory (wrap_cache.h)
        self._communicator = None      # the attached communicator's object, kept alive
        self._communicator_key = None  # (kind code, address) given to the library
        status, code = LIB.gpuprim_context_get_backend(self._handle)
        self._check(status)
        status, ordinal, name = LIB.gpuprim_context_get_device(self._handle)
        self._check(status)
        self.backend = "cuda" if code == _lib.BACKEND_CUDA else "cpu"
        self.device = ordinal
        self.device_name = name
        self.stream = stream
        self._stream_owner = None  # the framework's stream object, kept alive while we use it
        if isinstance(allocator, str) and self.backend != "cuda":
            self.close()
            raise ValueError(_cpu_framework_allocator(allocator, backend))
        _open_contexts.add(self)
        if allocator is not None:
            # closed at exit before the framework (or the allocator's module)
            # that its last blocks go back to
            _close_before_the_frameworks()

    def __repr__(self):
        state = "closed" if self._handle is None else f"device {self.device} ({self.device_name})"
        return f"gpuprim.Context({self.backend!r}, {state})"

    def close(self) -> None:
        """Destroy the context: waits for its work and frees what it holds
        (giving every block back to its allocator). While its CUDA stream is
        capturing a graph, raises NotCapturableError and stays open (end the
        capture, then close)."""
        lock = getattr(self, "_lock", None)  # (absent when __init__ failed early)
        with lock if lock is not None else contextlib.nullcontext():
            handle = self._handle
            if handle is not None and LIB.gpuprim_context_destroy(handle) == _lib.STATUS_CODES["NOT_CAPTURABLE"]:
                self._check(_lib.STATUS_CODES["NOT_CAPTURABLE"])
            self._wraps.close()  # (their buffers went with the context)
            self._handle = None
            self._communicator = self._communicator_key = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    @_serialized
    def synchronize(self) -> None:
        """Wait until every call made on this context has finished. Then, as
        check_deferred() does, raise InvalidArgumentError for a bad offset a
        deferred offsets check found (the wait itself has completed)."""
        self._check(LIB.gpuprim_context_synchronize(self._live()))

    @_serialized
    def set_offsets_check(self, mode: str) -> None:
        """(Experimental.) How the segment_* calls check their CSR offsets
        (gpuprim_context_set_offsets_check), for later calls of this context:
        "wait" (the default): a bad offset, a segment longer than
        max_segment_length, or one whose last index the indices' dtype cannot
        hold raises InvalidArgumentError from the call itself (on CUDA the
        call waits for the check on the device). "deferred": the call does
        not wait for the check; one whose offsets fail it writes nothing into
        the library's outputs (the arrays it returns then hold unspecified
        values), and the first failure is raised by check_deferred() or
        synchronize(), naming the call. Deferred calls on CUDA can be
        captured into a CUDA graph (see the header for the exceptions)."""
        if mode not in _OFFSETS_CHECKS:
            raise ValueError(f"gpuprim: set_offsets_check: mode {mode!r} is not one of "
                             f"{', '.join(repr(m) for m in _OFFSETS_CHECKS)}")
        self._check(LIB.gpuprim_context_set_offsets_check(self._live(), _OFFSETS_CHECKS[mode]))
        self._offsets_check = mode

    @property
    def offsets_check(self) -> str:
        """(Experimental.) The mode set_offsets_check() set: "wait" (the
        default) or "deferred"."""
        return self._offsets_check

    @_serialized
    def check_deferred(self) -> None:
        """(Experimental.) Wait for the context's work, then raise
        InvalidArgumentError for the first failure a deferred offsets check
        found since the last report (and forget it): its message names the
        segment_* call's C entry point, the call's number among this
        context's calls on offsets, the fault, and how many more calls
        failed. Returns None when none failed. Raises NotCapturableError
        while the context's stream is capturing a CUDA graph."""
        self._check(LIB.gpuprim_context_check_deferred(self._live()))

    @property
    def allocator(self):
        """The allocator given: None (the library's own), "torch", "cupy" or
        the object."""
        return self._allocator

    @property
    @_serialized
    def cuda_stream(self) -> int:
        """(Experimental.) The cudaStream_t every call of this context is
        ordered on, as an int: the stream given (1 for the legacy default
        stream that a framework's stream 0 means) or the one the context
        made; 0 on the CPU (gpuprim_context_get_stream). Capture this stream
        into a CUDA graph to capture the context's calls."""
        status, stream = LIB.gpuprim_context_get_stream(self._live())
        self._check(status)
        return stream

    @property
    @_serialized
    def workspace_size(self) -> int:
        """Bytes of workspace the context holds for its calls' temporary
        storage (gpuprim_context_get_workspace_size): it grows to the
        largest need seen and is kept, so later calls allocate nothing."""
        status, size = LIB.gpuprim_context_get_workspace_size(self._live())
        self._check(status)
        return size

    @_serialized
    def reserve_workspace(self, bytes: int = 0, fix: bool = True) -> None:
        """(Experimental.) Grow the workspace to at least ``bytes`` in all
        (0: keep the size held now, e.g. after running the calls once to
        warm them up), then with fix=True hold it still: until
        release_workspace() (or reserve_workspace(fix=False)) it neither
        grows nor moves, and a call that would need more raises
        OutOfMemoryError naming the bytes it needs, with nothing changed.
        For CUDA graphs: a captured call keeps the workspace's address, so
        hold it before capture (the calls refuse to grow it during capture:
        NotCapturableError). A growth that fails raises OutOfMemoryError
        and keeps the old workspace."""
        size = _count(bytes, "bytes")
        self._check(LIB.gpuprim_context_reserve_workspace(self._live(), size, 1 if fix else 0))

    @contextlib.contextmanager
    def workspace_query(self):
        """(Experimental.) Measure the workspace of calls without running
        them (gpuprim_context_begin_workspace_query), e.g. to reserve it
        before capturing a CUDA graph. A context manager yielding a
        WorkspaceSizes that is filled when the block ends::

            with ctx.workspace_query() as sizes:
                ctx.sort(x)                      # checked and measured, not run
            ctx.reserve_workspace_sizes(sizes)   # then hold that much still

        Inside the block each call on this context checks its arguments and
        raises as it would, but runs nothing: it writes no output (arrays it
        returns hold no results, host results and counts are not computed),
        reads no data (CSR offsets included) and allocates no workspace.
        Staging host data for a CUDA context still copies it. The sizes are
        the largest over the block's calls; ``bounded`` says some size
        depends on the data (calls on CSR offsets; group-by on the CPU) and
        is the most it can take. Queries do not nest (InvalidArgumentError);
        distributed calls inside one raise InvalidArgumentError. The query
        ends when the block does, also when it raises. Other threads' calls
        on this context wait until the block ends."""
        # The query measures every call on the context, so the block holds
        # the context's lock: other threads' calls on it wait until the
        # block ends instead of being measured (and not run) in it.
        with self._lock:
            self._check(LIB.gpuprim_context_begin_workspace_query(self._live()))
            sizes = WorkspaceSizes()
            try:
                yield sizes
            except BaseException:
                LIB.gpuprim_context_end_workspace_query(self._handle)  # ends it; the block's error goes on
                raise
            status, sizes.main_bytes, sizes.side_bytes, sizes.bounded = \
                LIB.gpuprim_context_end_workspace_query(self._live())
            self._check(status)

    @_serialized
    def reserve_workspace_sizes(self, sizes, fix: bool = True) -> None:
        """(Experimental.) Grow each block of the workspace to at least its
        size in ``sizes`` (a WorkspaceSizes, from workspace_query(), or any
        object with ``main_bytes`` and ``side_bytes``; 0 keeps a block as it
        is), then with fix=True hold both still as reserve_workspace() does
        (fix=False lets them grow again). The calls the query measured then
        run, and capture into a CUDA graph, without growing the workspace.
        A growth that fails raises OutOfMemoryError with both blocks as they
        were (gpuprim_context_reserve_workspace_sizes)."""
        main_bytes = _count(sizes.main_bytes, "sizes.main_bytes")
        side_bytes = _count(sizes.side_bytes, "sizes.side_bytes")
        self._check(LIB.gpuprim_context_reserve_workspace_sizes(self._live(), main_bytes, side_bytes,
                                                                1 if fix else 0))

    @_serialized
    def release_workspace(self) -> None:
        """Wait for the context's work and give its workspace back (to its
        allocator); a workspace held still is let go too. Later calls grow
        it again as they need."""
        self._check(LIB.gpuprim_context_release_workspace(self._live()))

    # -- internals ---------------------------------------------------------
    def _live(self):
        if self._handle is None:
            raise ValueError("gpuprim: the context is closed")
        return self._handle

    def _check(self, status):
        if status:
            message = LIB.gpuprim_context_last_error(self._handle) if self._handle is not None else ""
            _raise_with_cause(status, message or "", self._bridge)

    def _wrap(self, array):
        """A buffer over the array's own memory, cached: a wrap holds only the
        address, dtype and count, so one made for the same three is the same."""
        status, buffer = self._wraps.wrap(array.code, array.ptr, array.size)
        self._check(status)
        return buffer

    def _bind(self, array, staged, upload):
        """The buffer for an operand: its own memory where the context can
        reach it, else (host data on a CUDA context) a device copy, recorded
        in `staged` to be freed (and, for outputs, downloaded) afterwards."""
        if not array.size:
            # Not cached: two empty operands must stay two buffers (one
            # handle for both would read as one buffer used twice).
            status, handle = LIB.gpuprim_buffer_wrap(self._handle, array.code, 0, 0)
            self._check(status)
            staged.append((handle, array, False))
            return handle
        if array.on_device:
            if self.backend != "cuda":
                raise TypeError("gpuprim: a CUDA array needs a CUDA context, this one is "
                                f"{self.backend}")
            if array.device != self.device:
                raise ValueError(f"gpuprim: the array is on CUDA device {array.device}, the "
                                 f"context on device {self.device}")
            return self._wrap(array)
        if self.backend == "cpu":
            return self._wrap(array)
        status, handle = LIB.gpuprim_buffer_create(self._handle, array.code, array.size)
        self._check(status)
        # upload: True an input, False an output, _INOUT an output whose
        # prior contents the call may keep (copied there and back).
        staged.append((handle, array, upload is not True))
        if upload and array.size:
            self._check(LIB.gpuprim_buffer_upload(self._handle, handle, 0, array.ptr,
                                                  array.size))
        return handle

    def _finish(self, staged, failed):
        """Download staged outputs (unless the call failed) and free the copies."""
        try:
            if not failed:
                for handle, array, is_output in staged:
                    if is_output and array.size:
                        self._check(LIB.gpuprim_buffer_download(self._handle, handle, 0, array.ptr,
                                                                array.size))
        finally:
            for handle, _, _ in staged:
                LIB.gpuprim_buffer_destroy(self._handle, handle)

    def _run(self, operands, call):
        """call(*buffers) with operands = [(Array, is_input)], staging as needed."""
        with self._lock:
            self._run_locked(operands, call)

    def _run_locked(self, operands, call):
        context = self._live()
        staged = []
        failed = True
        try:
            buffers = [self._bind(array, staged, is_input) if array is not None else 0
                       for array, is_input in operands]
            self._check(call(context, *buffers))
            failed = False
        finally:
            if staged:
                self._finish(staged, failed)

    def _run_segmented(self, layout, operands, call):
        """call(context, segments, *buffers) over layout's segments: uniform
        rows, or CSR offsets (bound as one more input, ahead of operands)."""
        # segments: (offsets buffer or 0, row count, row length), the
        # three values the _ext calls take for a gpuprim_segments_t; with
        # offsets the third is max_segment_length (0: no promise).
        if layout.offsets is None:
            segments = (0, layout.rows, layout.length)
            self._run(operands, lambda c, *b: call(c, segments, *b))
            return

        for array, is_input in operands:
            if not is_input and array is not None and _may_overlap(array, layout.offsets):
                raise ValueError("gpuprim: an output (out= or values_out=) shares memory with offsets, which "
                                 "the call reads while it writes: pass separate arrays")

        def with_offsets(c, offsets, *b):
            return call(c, (offsets, 0, layout.max_length), *b)
        self._run([(layout.offsets, True)] + operands, with_offsets)

    def _output(self, like, out, what, size=None, dtype_name=None, shape=None):
        """The output array: `out` checked against the input, or a new one
        (of `shape` when given, else like's shape, or 1-D of `size`)."""
        if out is None:
            return _arrays.describe(_arrays.empty_like(like, shape if shape is not None else size,
                                                       dtype_name), what)
        result = _arrays.describe(out, what)
        if not result.writeable:  # as numpy says it (np.sort(x, out=...) etc.)
            if result.kind in ("jax", "dlpack"):
                raise ValueError(f"gpuprim: {what}: an array taken through DLPack is read-only here (only "
                                 "read, never written: its framework may share or freeze it); pass a numpy, "
                                 "PyTorch or CuPy array, or no out=")
            raise ValueError(f"gpuprim: {what}: output array is read-only")
        if result.kind != like.kind:
            raise TypeError(f"gpuprim: {what} is a {result.kind} array, the input a {like.kind} one")
        if (result.on_device, result.device) != (like.on_device, like.device):
            raise ValueError(f"gpuprim: {what} is on {_place(result)}, the input on {_place(like)}")
        expected = dtype_name or like.dtype_name
        if result.dtype_name != expected:
            raise TypeError(f"gpuprim: {what} has dtype {result.dtype_name}, expected {expected}")
        if shape is not None:
            if result.shape != tuple(shape):
                raise ValueError(f"gpuprim: {what} has shape {result.shape}, expected {tuple(shape)}")
        elif result.size != (like.size if size is None else size):
            raise ValueError(f"gpuprim: {what} has {result.size} elements, expected "
                             f"{like.size if size is None else size}")
        elif size is None and tuple(result.shape) != tuple(like.shape):
            # an output of x's shape, as numpy asks of out= (the common
            # path takes only that shape too)
            raise ValueError(f"gpuprim: {what} has shape {tuple(result.shape)}, expected {tuple(like.shape)}")
        return result

    # -- operations --------------------------------------------------------
    def sort(self, x, *, axis=-1, descending=False, stable=True, values=None, out=None, values_out=None,
             begin_bit=None, end_bit=None):
        """Stable sort of x, ascending or descending. With values, they move
        with their keys and (keys, values) is returned. out / values_out may be
        x / values (in place). Floats order -inf < ... < -0.0 < +0.0 < ... <
        +inf < NaN. begin_bit / end_bit: sort by bits [begin_bit, end_bit) of
        each key's order-preserving unsigned form only (gpuprim_sort_options_t;
        end_bit None or 0: the key's width); keys equal in those bits keep
        their order. axis=-1 (the default, as gpuprim.sort's): every row
        (last axis) of a C-contiguous N-D array is sorted on its own (values,
        out and values_out of x's shape), a 1-D x as a whole; axis=None: x is
        1-D. Always stable (stable=False accepted, as the array API allows)."""
        keys = _arrays.describe(x, "x")
        layout = _row_layout(keys, axis)
        if layout is None:
            _one_dimensional(keys, "x")
        return self._sort(keys, layout, descending, values, out, values_out, begin_bit, end_bit)

    def segment_sort(self, x: Array, offsets: Array, *, descending: bool = False,
                     values: Optional[Values] = None, out: Optional[Array] = None,
                     values_out: Optional[Values] = None, begin_bit: Optional[int] = None,
                     end_bit: Optional[int] = None,
                     max_segment_length: Optional[int] = None) -> Union[Array, Tuple[Array, Values]]:
        """Sorts every segment [offsets[s], offsets[s+1]) of the 1-D x on its
        own, as sort() would (stable; values, out, values_out, descending and
        the bit range as for sort). Elements outside every segment (before
        offsets[0], from offsets[-1] on) are copied from x (and values) into
        new outputs, and left as they are in a given out / values_out.
        max_segment_length (experimental; every segment_* call takes it):
        None (or 0, as in C: no promise), or a promise that no segment is
        longer (a longer one fails the offsets check, as a bad offset does);
        calls pick their path by it (see set_offsets_check).

        Example::

            >>> gpuprim.segment_sort(np.array([3, 1, 2, 9, 8, 7]), np.array([0, 3, 3, 6]))
            array([1, 2, 3, 7, 8, 9])
        """
        keys = _one_dimensional(_arrays.describe(x, "x"), "x")
        layout = _offset_layout(keys, offsets, max_segment_length)
        _refuse_outside_writes(keys, layout, "segment_sort")
        result = self._sort(keys, layout, descending, values, out, values_out, begin_bit, end_bit)
        if out is None or (values is not None and values_out is None):
            first, last = _arrays.offset_ends(layout.offsets)
            if values is None:
                _arrays.copy_outside(_arrays.describe(result, "out"), keys, first, last)
            else:
                if out is None:
                    _arrays.copy_outside(_arrays.describe(result[0], "out"), keys, first, last)
                if values_out is None:
                    _arrays.copy_outside(_arrays.describe(result[1], "values_out"),
                                         _arrays.describe(values, "values"), first, last)
        return result

    def _sort(self, keys, layout, descending, values, out, values_out, begin_bit, end_bit, keys_name="x"):
        shape = keys.shape if layout is not None and layout.offsets is None else None
        keys_out, vals, vals_out = self._sort_operands(keys, shape, values, out, values_out, keys_name)
        operands = [(keys, True), (vals, True), (keys_out, False), (vals_out, False)]
        if layout is None:
            self._run(operands, _sort_call(keys, descending, begin_bit, end_bit))
        else:
            options = _sort_options(keys, descending, begin_bit, end_bit)
            self._run_segmented(
                layout, operands,
                lambda c, s, kin, vin, kout, vout: LIB.gpuprim_segmented_sort(
                    c, *s, kin, vin, kout, vout, *options))
        return keys_out.obj if vals is None else (keys_out.obj, vals_out.obj)

    def _sort_operands(self, keys, shape, values, out, values_out, keys_name="x"):
        """(keys_out, values, values_out) of a sort: out and values_out
        checked (or new), values described; values and values_out None
        without values. keys_name: what the caller calls the keys."""
        keys_out = self._output(keys, out, "out", shape=shape)
        _refuse_partial_overlap(keys_out, keys, "out", keys_name)
        vals = vals_out = None
        if values is None:
            if values_out is not None:
                raise ValueError("gpuprim: values_out given without values")
        else:
            vals = _arrays.describe(values, "values")
            if not _same_place(vals, keys):
                raise TypeError(f"gpuprim: values must be of the same kind and device as {keys_name}")
            # (the library's refusals name its own parameters: keys_in, values_in, ...)
            if _may_overlap(vals, keys):
                raise ValueError(f"gpuprim: values shares memory with {keys_name}; the sort moves both: pass a copy "
                                 "(values.copy())")
            if shape is not None and vals.shape != shape:
                raise ValueError(f"gpuprim: values has shape {vals.shape}, {keys_name} {shape}; "
                                 f"per-row sorts need values of {keys_name}'s shape")
            if vals.size != keys.size:
                raise ValueError(f"gpuprim: values has {vals.size} elements, {keys_name} {keys.size}; a sort by key "
                                 "needs one value per key")
            vals_out = self._output(vals, values_out, "values_out", shape=shape)
            _refuse_partial_overlap(vals_out, vals, "values_out", "values")
            for output, output_name, other, other_name in ((keys_out, "out", vals, "values"),
                                                           (vals_out, "values_out", keys, keys_name),
                                                           (vals_out, "values_out", keys_out, "out")):
                if _may_overlap(output, other):
                    raise ValueError(f"gpuprim: {output_name} shares memory with {other_name}; the sort writes "
                                     f"{output_name} while it reads {keys_name} and values: pass separate arrays")
        return keys_out, vals, vals_out

    def argsort(self, x, *, axis=-1, descending=False, stable=True, dtype="int64", begin_bit=None,
                end_bit=None):
        """The stable permutation that sorts x (indices of dtype int64 by
        default; int32, uint32, uint64 too); begin_bit / end_bit, axis and
        stable as for sort. axis=-1 (the default): the permutation of every
        row (last axis) of a C-contiguous N-D array, indices within the row
        (0 at its first element), like numpy's and torch's argsort along the
        last axis."""
        keys = _arrays.describe(x, "x")
        layout = _row_layout(keys, axis)
        if layout is None:
            _one_dimensional(keys, "x")
        return self._argsort(keys, layout, descending, dtype, begin_bit, end_bit)

    def segment_argsort(self, x: Array, offsets: Array, *, descending: bool = False,
                        dtype: Any = "int64", begin_bit: Optional[int] = None,
                        end_bit: Optional[int] = None, max_segment_length: Optional[int] = None) -> Array:
        """argsort() of every segment [offsets[s], offsets[s+1]) of the 1-D
        x: indices within the segment (0 at its first element). Positions
        outside every segment are 0. dtype and the bit range as for
        argsort(). max_segment_length: see segment_sort().

        Example::

            >>> gpuprim.segment_argsort(np.array([3.0, 1.0, 2.0, 9.0, 8.0]), np.array([0, 3, 5]))
            array([1, 2, 0, 1, 0])
        """
        keys = _one_dimensional(_arrays.describe(x, "x"), "x")
        layout = _offset_layout(keys, offsets, max_segment_length)
        _refuse_outside_writes(keys, layout, "segment_argsort")
        result = self._argsort(keys, layout, descending, dtype, begin_bit, end_bit)
        first, last = _arrays.offset_ends(layout.offsets)
        _arrays.copy_outside(_arrays.describe(result, "indices"), None, first, last)
        return result

    def _argsort(self, keys, layout, descending, dtype, begin_bit, end_bit):
        dtype = _index_dtype(dtype)
        indices = self._output(keys, None, "indices", dtype_name=dtype, shape=keys.shape)
        options = _sort_options(keys, descending, begin_bit, end_bit)
        operands = [(keys, True), (indices, False)]
        if layout is None:
            self._run(operands, lambda c, k, i: LIB.gpuprim_argsort(c, k, 0, i, *options))
        else:
            self._run_segmented(layout, operands,
                                lambda c, s, k, i: LIB.gpuprim_segmented_argsort(
                                    c, *s, k, 0, i, *options))
        return indices.obj

    def topk(self, x, k, *, largest=True, axis=-1, dtype="int64"):
        """The k largest (largest=True) or smallest elements of x with their
        indices, (values, indices), sorted (largest first, or smallest
        first); equal elements by lower index first; floats in the sort's
        order (NaN above +inf, so NaNs come first among the largest; -0.0
        below +0.0). Exactly the first k of a stable (descending) argsort.
        axis=-1 (the default, as gpuprim.topk's): every row (last axis) of a
        C-contiguous N-D array, results of shape x.shape[:-1] + (k,), indices
        within the row; a 1-D x as a whole (k elements); axis=None: x is
        1-D. k must not exceed the
        length (InvalidArgumentError, raised before any output is made)."""
        keys = _arrays.describe(x, "x")
        layout = _row_layout(keys, axis)
        if layout is None:
            _one_dimensional(keys, "x")
        k = _count(k, "k")
        # gpuprim_topk's own check (k <= n; per row k <= the rows' length),
        # made here before the outputs of k elements are allocated
        if layout is None and k > keys.size:
            raise _invalid(f"gpuprim: topk: k = {k} is more than the {keys.size} elements of x")
        if layout is not None and k > layout.length:
            raise _invalid(f"gpuprim: topk: k = {k} is more than the length of x's rows, "
                           f"{layout.length} (x has shape {keys.shape})")
        shape = (k,) if layout is None else tuple(keys.shape[:-1]) + (k,)
        values, indices = self._topk_outputs(keys, shape, dtype)
        order = _order(largest)
        operands = [(keys, True), (values, False), (indices, False)]
        if layout is None:
            self._run(operands, lambda c, kin, v, i: LIB.gpuprim_topk(c, kin, k, order, v, i))
        else:
            self._run_segmented(layout, operands,
                                lambda c, s, kin, v, i: LIB.gpuprim_segmented_topk(c, *s, kin, k, order, v, i))
        return values.obj, indices.obj

    def segment_topk(self, x: Array, offsets: Array, k: int, *, largest: bool = True,
                     dtype: Any = "int64", max_segment_length: Optional[int] = None) -> Tuple[Array, Array]:
        """topk() of every segment [offsets[s], offsets[s+1]) of the 1-D x:
        (values, indices) of shape (segments, k), indices within the segment.
        A segment shorter than k (an empty one too) fills its first
        len(segment) slots, sorted; the others hold value 0 and index -1 (the dtype's
        largest value for uint32/uint64 indices). k may exceed every
        segment's length (gpuprim_segmented_topk's contract): the outputs
        still have k columns. segments * k past 2^64 raises
        InvalidArgumentError before any output is made. max_segment_length:
        see segment_sort().

        Example::

            >>> values, indices = gpuprim.segment_topk(np.array([3.0, 1.0, 2.0, 9.0]), np.array([0, 3, 4]), 2)
            >>> values, indices
            (array([[3., 2.],
                   [9., 0.]]), array([[ 0,  2],
                   [ 0, -1]]))
        """
        keys = _one_dimensional(_arrays.describe(x, "x"), "x")
        layout = _offset_layout(keys, offsets, max_segment_length)
        k = _count(k, "k")
        dtype = _index_dtype(dtype)
        segments = layout.offsets.size - 1
        if segments * k >= 1 << 64:  # the library's check, before the outputs are made
            raise error_for(_SIZE_MISMATCH, f"gpuprim: segment_topk: {segments} segments of "
                                            f"k = {k} results overflow 64 bits")
        if keys.kind in ("jax", "dlpack"):
            # outputs exported after the call take no write: made holding the
            # fill (value 0: zero bytes; index -1 or the unsigned maximum: 0xFF)
            values = _arrays.describe(_arrays.Exported(keys, (segments, k), keys.dtype_name, 0), "values")
            indices = _arrays.describe(_arrays.Exported(keys, (segments, k), dtype, 0xFF), "indices")
        else:
            values, indices = self._topk_outputs(keys, (segments, k), dtype)
            _arrays.fill(values, 0)
            _arrays.fill(indices, -1 if dtype.startswith("int") else (1 << (8 * _arrays.itemsize(dtype))) - 1)
        order = _order(largest)
        self._run_segmented(layout, [(keys, True), (values, _INOUT), (indices, _INOUT)],
                            lambda c, s, kin, v, i: LIB.gpuprim_segmented_topk(c, *s, kin, k, order, v, i))
        return values.obj, indices.obj

    def _topk_outputs(self, keys, shape, dtype):
        dtype = _index_dtype(dtype)
        return (self._output(keys, None, "values", shape=shape),
                self._output(keys, None, "indices", dtype_name=dtype, shape=shape))

    def scan(self, x: Array, op: str = "sum", *, axis: Optional[int] = None, exclusive: bool = False,
             out: Optional[Array] = None, dtype: Any = None) -> Array:
        """Prefix scan with op ("sum", "min", "max"); out may be x (in place).
        Float sums are deterministic run to run; float16 and bfloat16 sums
        accumulate in float32 and round each output once (the header's rule),
        so they can differ from numpy's, which accumulates in float16 (its
        [2048, 1, 1, 1] gives 2048 at every step; ours 2048, 2048, 2050,
        2052). axis=-1: every row (last
        axis) of a C-contiguous N-D array scanned on its own. The dtype of
        the scan and its result: dtype if given, else out's dtype if out is
        given, else for "sum" that of sum() (integers narrower than 64 bits
        widened), for "min"/"max" x's; x is cast to it first (a copy).

        Example::

            >>> gpuprim.scan(np.array([3, 1, 4, 1, 5]), "max")
            array([3, 3, 4, 4, 5])
        """
        code = _op_code(op)
        source = _arrays.describe(x, "x")
        layout = _row_layout(source, axis)
        if layout is None:
            _one_dimensional(source, "x")
        source = _accumulated(source, op, dtype, out)
        return _bool_min_fixed(self._scan(source, layout, code, exclusive, out), source, op,
                               identity_written=exclusive)

    def cumsum(self, x, *, axis=None, exclusive=False, out=None, dtype=None):
        """Inclusive (or exclusive) prefix sum, in sum()'s dtype (integers
        narrower than 64 bits widened, as numpy's and torch's cumsum do),
        or in dtype, or in out's dtype when out is given (integers then wrap
        like C in that dtype); x is cast first where the dtype differs.
        float16 and bfloat16 accumulate in float32 (see scan())."""
        return self.scan(x, "sum", axis=axis, exclusive=exclusive, out=out, dtype=dtype)

    def segment_scan(self, x: Array, offsets: Array, op: str = "sum", *, exclusive: bool = False,
                     out: Optional[Array] = None, dtype: Any = None,
                     max_segment_length: Optional[int] = None) -> Array:
        """Prefix scan of every segment [offsets[s], offsets[s+1]) of the 1-D
        x on its own (an exclusive scan starts each segment at the identity).
        Elements outside every segment are copied from x into a new output,
        and left as they are in a given out (which may be x). dtype as for
        scan().
        max_segment_length: see segment_sort().

        Example::

            >>> gpuprim.segment_scan(np.array([3, 1, 4, 1, 5]), np.array([0, 2, 5]), "min")
            array([3, 1, 4, 1, 1])
        """
        code = _op_code(op)
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        layout = _offset_layout(source, offsets, max_segment_length)
        if out is None:
            _refuse_outside_writes(source, layout, "segment_scan")
        source = _accumulated(source, op, dtype, out)
        result = _bool_min_fixed(self._scan(source, layout, code, exclusive, out), source, op,
                                 identity_written=exclusive)
        if out is None:
            first, last = _arrays.offset_ends(layout.offsets)
            _arrays.copy_outside(_arrays.describe(result, "out"), source, first, last)
        return result

    def segment_cumsum(self, x, offsets, *, exclusive=False, out=None, dtype=None,
                       max_segment_length=None):
        """Inclusive (or exclusive) prefix sum of every segment (dtype as for
        cumsum())."""
        return self.segment_scan(x, offsets, "sum", exclusive=exclusive, out=out, dtype=dtype,
                                 max_segment_length=max_segment_length)

    def _scan(self, source, layout, code, exclusive, out):
        shape = source.shape if layout is not None and layout.offsets is None else None
        target = self._output(source, out, "out", shape=shape)
        if out is not None and _partly_overlap(target, source):
            # out partly over x (np.cumsum(a[:-1], out=a[1:])): numpy reads
            # x first; the library refuses the overlap. Scan into a copy of
            # out (elements outside every segment keep out's values), then
            # copy it back.
            staged = out.clone() if target.kind == "torch" else out.copy()
            self._scan(source, layout, code, exclusive, staged)
            out[...] = staged
            return out
        kind = _lib.SCAN_EXCLUSIVE if exclusive else _lib.SCAN_INCLUSIVE
        if layout is None:
            self._run([(source, True), (target, False)],
                      lambda c, i, o: LIB.gpuprim_scan(c, code, kind, i, o))
        else:
            self._run_segmented(layout, [(source, True), (target, False)],
                                lambda c, s, i, o: LIB.gpuprim_segmented_scan(c, code, kind, *s,
                                                                              i, o))
        return target.obj

    def _reduce(self, arrays, call_host, call_buffer, op=None):
        first = arrays[0]
        if first.on_device:
            result = _arrays.describe(_arrays.empty_scalar(first), "result")
            self._run([(a, True) for a in arrays] + [(result, False)], call_buffer)
            return _bool_min_fixed(result.obj, first, op, identity_written=first.size == 0)
        host = _arrays.host_scalar(first.dtype_name, first.kind)
        pointer = _arrays.address(host)
        self._run([(a, True) for a in arrays], lambda c, *b: call_host(c, *b, pointer))
        _bool_min_fixed(host, first, op, "numpy")
        return _arrays.scalar_result(first, host)

    def _reduction(self, op, x, axis=None, dtype=None, out=None):
        source = _arrays.describe(x, "x")
        code = _OPS[op]
        layout = _row_layout(source, axis)
        if op == "sum":
            source = _accumulated(source, op, dtype)
        if layout is not None:
            return _bool_min_fixed(self._segment_reduction(code, source, layout, source.shape[:-1], out),
                                   source, op, identity_written=source.shape[-1] == 0)
        target = None if out is None else self._output(source, out, "out", shape=())
        result = self._reduce([source],
                              lambda c, i, r: LIB.gpuprim_reduce(c, code, i, r),
                              lambda c, i, r: LIB.gpuprim_reduce_to_buffer(c, code, i, r), op)
        if target is None:
            return result
        out[...] = result  # the framework's own copy (on its stream for CUDA arrays)
        return out

    def _segment_reduction(self, code, source, layout, shape, out=None):
        result = self._output(source, out, "out" if out is not None else "result", shape=shape)
        if out is not None and _may_overlap(result, source):
            # out inside x (x.sum(axis=-1, out=x[:, 0])): numpy reads x
            # first; the library refuses the overlap. Reduce into a new
            # array, then copy it into out.
            fresh = self._segment_reduction(code, source, layout, shape)
            result.obj[...] = fresh
            return result.obj
        self._run_segmented(layout, [(source, True), (result, False)],
                            lambda c, s, i, o: LIB.gpuprim_segmented_reduce(c, code, *s, i, o))
        return result.obj

    def sum(self, x, *, axis=None, dtype=None, out=None):
        """Sum of all elements (floats deterministic; float16/bfloat16
        accumulate in float32 and round once, result of x's dtype). Integers
        narrower than 64 bits sum in a 64-bit integer, as the framework's
        own sum does: numpy and CuPy arrays signed in int64 and unsigned in
        uint64, torch tensors in int64 (torch.sum's rule); 64-bit integers
        wrap like C. x is cast first with its own library (x.astype(),
        tensor.to(): a copy of x in the wider dtype). dtype: the dtype to
        sum in and return instead (numpy's dtype=; x.dtype: no copy,
        wrapping in it). The result: a numpy scalar for numpy arrays (and
        for the host arrays of other DLPack producers); a 0-d tensor or
        array of x's kind for torch, CuPy and JAX input, on x's device (a
        GPU one without waiting for the call; a DLPack producer's GPU
        array through its framework's from_dlpack). axis=-1: the sum of
        every row (last axis) of a C-contiguous N-D array, an array of
        x.shape[:-1] (like numpy's x.sum(axis=-1)). out: an array of the
        result's dtype and shape (0-d, or x.shape[:-1] with axis=-1), of x's
        kind and device, to write the result into; it is returned."""
        return self._reduction("sum", x, axis, dtype, out)

    def min(self, x, *, axis=None, out=None):
        """Smallest element (IEEE 754-2019 minimum: NaN wins, -0.0 < +0.0);
        axis=-1 and out as for sum (an empty row gives the dtype's largest value)."""
        return self._reduction("min", x, axis, out=out)

    def max(self, x, *, axis=None, out=None):
        """Largest element (IEEE 754-2019 maximum: NaN wins, -0.0 < +0.0);
        axis=-1 and out as for sum (an empty row gives the dtype's smallest value)."""
        return self._reduction("max", x, axis, out=out)

    def argmin(self, x: Array, *, axis: Optional[int] = None) -> int:
        """Position of the smallest element of x, flattened (any shape,
        C-contiguous), like ``np.argmin(x)``: the first of equal smallest
        elements; if x holds a NaN, the position of the first NaN (numpy's
        rule, whatever its sign); -0.0 equals +0.0; bool arrays as numpy's
        (False before True). A Python int (on the GPU
        the call waits for the result). An empty x raises
        InvalidArgumentError (a ValueError, as numpy raises). axis: None only
        (ValueError otherwise).

        Example::

            >>> gpuprim.argmin(np.array([3.0, 1.0, 1.0, 2.0]))
            1
        """
        return self._argreduce("min", x, axis)

    def argmax(self, x: Array, *, axis: Optional[int] = None) -> int:
        """Position of the largest element of x, flattened, like
        ``np.argmax(x)``: the first of equal largest; the first NaN if there
        is one; -0.0 equals +0.0. As argmin() otherwise.

        Example::

            >>> gpuprim.argmax(np.array([[1, 9], [9, 4]]))
            1
        """
        return self._argreduce("max", x, axis)

    def _argreduce(self, op, x, axis):
        if axis is not None:
            raise ValueError(f"gpuprim: arg{op} takes axis=None only (the position in the flattened "
                             f"array, np.arg{op}(x)), not axis={axis!r}")
        source = _arrays.describe(x, "x")
        if source.size == 0:  # (the library's message names its own parameter, input)
            raise _invalid(f"gpuprim: arg{op}: x is empty; there is no arg{op} of an empty array")
        code = _OPS[op]
        index = []

        def call(c, i):
            status, position = LIB.gpuprim_argreduce(c, code, i)
            index.append(position)
            return status
        self._run([(source, True)], call)
        return int(index[0])

    def _segment_op(self, op, x, offsets, dtype=None, max_segment_length=None):
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        layout = _offset_layout(source, offsets, max_segment_length)
        if op == "sum":
            source = _accumulated(source, op, dtype)
        return _bool_min_fixed(
            self._segment_reduction(_OPS[op], source, layout, (layout.offsets.size - 1,)),
            source, op, identity_written=lambda: _some_segment_empty(layout))

    def segment_sum(self, x: Array, offsets: Array, *, dtype: Any = None,
                    max_segment_length: Optional[int] = None) -> Array:
        """The sum of every segment [offsets[s], offsets[s+1]) of the 1-D x:
        a 1-D array of len(offsets) - 1 elements (0 for an empty segment;
        floats deterministic), in sum()'s dtype (integers narrower than 64
        bits widened, x cast first; float16/bfloat16 accumulate in float32)
        or in dtype. max_segment_length: see segment_sort().

        Example::

            >>> gpuprim.segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1, 1, 4]))
            array([1., 0., 9.])
        """
        return self._segment_op("sum", x, offsets, dtype, max_segment_length)

    def segment_min(self, x: Array, offsets: Array, *, max_segment_length: Optional[int] = None) -> Array:
        """The smallest element of every segment (NaN wins; the dtype's largest
        value, +inf for floats, for an empty one).

        Example::

            >>> gpuprim.segment_min(np.array([3.0, 1.0, 2.0]), np.array([0, 2, 2, 3]))
            array([ 1., inf,  2.])
        """
        return self._segment_op("min", x, offsets, max_segment_length=max_segment_length)

    def segment_max(self, x: Array, offsets: Array, *, max_segment_length: Optional[int] = None) -> Array:
        """The largest element of every segment (NaN wins; the dtype's smallest
        value, -inf for floats, for an empty one).

        Example::

            >>> gpuprim.segment_max(np.array([3, 1, 2], np.int32), np.array([0, 2, 3]))
            array([3, 2], dtype=int32)
        """
        return self._segment_op("max", x, offsets, max_segment_length=max_segment_length)

    def dot(self, a: Array, b: Array) -> Any:
        """Sum of a[i] * b[i] (same dtype and size; fused multiply-add for
        floats, deterministic).

        Example::

            >>> print(gpuprim.dot(np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])))
            32.0
        """
        left, right = _arrays.describe(a, "a"), _arrays.describe(b, "b")
        if not _same_place(left, right):
            raise TypeError("gpuprim: a and b must be of the same kind and device")
        for array, what in ((left, "a"), (right, "b")):
            if array.dtype_name == "bool":
                raise TypeError(f"gpuprim: dot does not take bool arrays ({what} is bool); pass "
                                f"{what}.astype(...) of a number dtype")
        return self._reduce([left, right], LIB.gpuprim_dot, LIB.gpuprim_dot_to_buffer)


    # -- adjacent differences (experimental) ----------------------------------
    def adjacent_difference(self, x: Array, /, *, out: Optional[Array] = None) -> Array:
        """The difference of each element of the 1-D x and the one before
        it: result[0] = x[0], result[i] = x[i] - x[i - 1] (numpy's
        np.diff(x, prepend=0); np.diff(x) is the result's [1:]), in x's
        dtype, of x's kind and device; out may be x (in place). Integers
        wrap, as numpy's do; float16 and bfloat16 subtract in float32 and
        round once (numpy's rule); a NaN result is the canonical quiet NaN.
        It undoes cumsum: cumsum(result, dtype=x.dtype) gives x back
        (exactly for integers). bool arrays raise TypeError (numpy's diff of
        bools is x[1:] != x[:-1], not a subtraction).

        Example::

            >>> gpuprim.adjacent_difference(np.array([3, 1, 4, 1, 5]))
            array([ 3, -2,  3, -3,  4])
        """
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        if source.dtype_name == "bool":
            raise TypeError("gpuprim: adjacent_difference does not take bool arrays (numpy's diff of bools "
                            "is x[1:] != x[:-1]); pass x.astype(...) of a number dtype")
        target = self._output(source, out, "out")
        if out is not None and _partly_overlap(target, source):
            # out partly over x: the library refuses the overlap; numpy reads
            # x first. Into a copy of out, then copied back.
            staged = out.clone() if target.kind == "torch" else out.copy()
            self.adjacent_difference(x, out=staged)
            out[...] = staged
            return out
        self._run([(source, True), (target, False)], lambda c, i, o: LIB.gpuprim_adjacent_difference(c, i, o))
        return target.obj

    # -- search, histograms, merge (experimental: issue 38) -----------------
    def searchsorted(self, a: Array, v: Array, /, *, side: str = "left", descending: bool = False,
                     dtype: Any = "int64") -> Array:
        """Where each element of v would go in the sorted a to keep it
        sorted: np.searchsorted(a, v, side) (side="left": the first position
        whose key is not before the query; "right": past the equal keys),
        for a sorted ascending or (descending=True) descending. a 1-D: the
        result has v's shape (v any C-contiguous shape). a N-D: each row
        (last axis) of a with the row of v of the same leading index, v of
        shape a.shape[:-1] + (m,) (torch.searchsorted's batched rule),
        indices within the row. v must have a's dtype, kind and device.
        Floats follow the
        sort's order, which differs from numpy's: -0.0 comes before +0.0 and
        NaNs of distinct payloads (or signs) are distinct keys, after +inf
        (numpy ties -0.0 with +0.0, and all NaNs). Indices: int64 by default
        (int32, uint32, uint64 accepted; a's length must fit).

        Example::

            >>> gpuprim.searchsorted(np.array([1, 2, 2, 3]), np.array([2, 5]), side="right")
            array([3, 4])"""
        keys = _arrays.describe(a, "a")
        queries = _arrays.describe(v, "v")
        if side not in _SIDES:
            raise ValueError(f"gpuprim: searchsorted: side must be 'left' or 'right', not {side!r}")
        if not _same_place(queries, keys):
            raise TypeError("gpuprim: searchsorted: a and v must be of the same kind and device")
        if queries.dtype_name != keys.dtype_name:
            raise TypeError(f"gpuprim: searchsorted: v has dtype {queries.dtype_name}, a has "
                            f"{keys.dtype_name}; cast one (v.astype(a.dtype))")
        code, order = _SIDES[side], _order(descending)
        dtype = _index_dtype(dtype)
        indices = self._output(queries, None, "indices", dtype_name=dtype, shape=queries.shape)
        a_shape, v_shape = keys.shape, queries.shape
        if len(a_shape) == 0:
            raise ValueError("gpuprim: searchsorted: a must have at least one dimension")
        if len(a_shape) == 1:
            self._run([(keys, True), (queries, True), (indices, False)],
                      lambda c, k, q, i: LIB.gpuprim_searchsorted(c, k, q, code, order, i))
            return indices.obj
        if len(v_shape) != len(a_shape) or v_shape[:-1] != a_shape[:-1]:
            raise ValueError(f"gpuprim: searchsorted: a has shape {a_shape}, so v must have shape "
                             f"{a_shape[:-1]} + (m,), not {v_shape}")
        rows = math.prod(a_shape[:-1])
        if rows == 0 or queries.size == 0:
            return indices.obj
        self._run([(keys, True), (queries, True), (indices, False)],
                  lambda c, k, q, i: LIB.gpuprim_searchsorted_rows(c, k, q, rows, code, order, i))
        return indices.obj

    def histogram(self, x: Array, bins: Union[int, Array, Sequence[Any]] = 10,
                  range: Optional[Tuple[Any, Any]] = None, *, axis: Optional[int] = None) -> Tuple[Array, Array]:
        """np.histogram(x, bins, range) for x of any shape: (counts, edges),
        counts int64 of x's kind and device, edges of x's kind and device.

        bins: an int >= 1, or a 1-D array of edges (numpy, torch, CuPy or a
        sequence) in increasing order (equal neighbours allowed, NaN not).
        - int: edges np.linspace(lower, upper, bins + 1) in numpy's dtype for
          them (x's float dtype, float32 for bfloat16, float64 for integers).
          range: (lower, upper), lower < upper, finite; default (x.min(),
          x.max()) (widened by 0.5 each side where they are equal; (0, 1)
          for an empty x; NaN in x then raises ValueError, as numpy does).
          Elements in [lower, upper) count by the library's rule
          (gpuprim_histogram_even: integers exactly, floats in float64, so
          an element within a rounding of an inner edge may count in the bin
          next to numpy's). Python bounds of a float16 or float32 x are
          rounded to its dtype first, as numpy takes them (so an element
          equal to the rounded bound counts, as in numpy). Other bounds
          that are not values of x's dtype (typed float64 ones, and every
          bound of a bfloat16 x) bin x cast to float64 (a copy).
        - edges: numpy's rule exactly: counts[b] = the elements with
          edges[b] <= x < edges[b + 1], and the last bin closed (x ==
          edges[-1] counts in it); range is ignored, as numpy ignores it.
          x and the edges compare as numpy compares them, in
          np.result_type(x, edges) (x is copied to that dtype where its
          values would not compare alike in its own: e.g. int64 x with
          float edges, or edges that are not values of x's dtype). The
          edges come back as given (their dtype), of x's kind and device.
        In both, elements outside every bin and NaNs are ignored.

        axis: None (default) counts x flattened, as numpy does. axis=-1
        (the last axis of an x of 2 or more dimensions, C-contiguous) counts
        each row on its own (gpuprim_histogram_*_rows): counts of shape
        x.shape[:-1] + (bins,), row r's counts those of np.histogram(x[r],
        edges) with the one edges array returned, which are the same for
        every row (an int bins' default range: x.min() and x.max() over
        the whole array).

        Example::

            >>> gpuprim.histogram(np.array([[0, 1, 1], [2, 2, 3]]), bins=[0, 1, 2, 3], axis=-1)[0]
            array([[1, 2, 0],
                   [0, 0, 3]])"""
        source = _arrays.describe(x, "x")
        if source.dtype_name == "bool":
            raise TypeError("gpuprim: histogram does not take bool arrays; pass x.astype(...)")
        if source.kind in ("jax", "dlpack"):
            # Before any work: numpy's closed last bin is added to the counts
            # after the call, which an exported (immutable) output cannot take.
            _arrays._no_writes(source, "histogram")
        layout = _row_layout(source, axis)
        if isinstance(bins, str):
            raise ValueError(f"gpuprim: histogram: bins={bins!r}: numpy's estimators are not "
                             "supported; pass an int or an array of edges")
        if not isinstance(bins, bool) and _is_sequence(bins):
            return self._histogram_edges(source, _host_edges(bins), layout)
        return self._histogram_even(source, bins, range, layout)

    def _histogram_even(self, source, bins, range, layout):
        np = _arrays.numpy()
        if isinstance(bins, bool) or not isinstance(bins, int):
            bins = _integer(bins, "histogram: bins must be an integer or a 1-D array of edges")
        if bins < 1:
            raise ValueError(f"gpuprim: histogram: bins must be at least 1, not {bins}")
        if range is None:
            if source.size == 0:
                lower, upper = 0.0, 1.0
            else:
                lower, upper = _python_number(self.min(source)), _python_number(self.max(source))
                found_lower, found_upper = lower, upper
                if not (math.isfinite(lower) and math.isfinite(upper)):
                    raise ValueError(f"gpuprim: histogram: autodetected range of [{lower}, {upper}] "
                                     "is not finite")
                if lower == upper:
                    lower, upper = lower - 0.5, upper + 0.5
        else:
            ma = sys.modules.get("numpy.ma")  # no masked value exists before numpy.ma is imported
            if ma is not None:
                for masked in [range] + list(range):  # the pair, or a bound (np.ma.masked)
                    if isinstance(masked, ma.MaskedArray):
                        _arrays.masked_refusal(masked, "range")
            lower, upper = (_python_number(bound) for bound in range)
            if not (math.isfinite(lower) and math.isfinite(upper)):
                raise ValueError(f"gpuprim: histogram: range ({lower}, {upper}) is not finite")
            if not lower < upper:
                raise ValueError(f"gpuprim: histogram: range ({lower}, {upper}): lower must be "
                                 "below upper")
        # numpy's own edges (its dtype and arithmetic: x's float dtype, float32
        # for bfloat16, float64 for integers), from a stand-in holding x's
        # min and max (or nothing, with range given)
        probe_dtype = _arrays.numpy_dtype("float32" if source.dtype_name == "bfloat16"
                                          else source.dtype_name)
        if range is None and source.size:
            probe = np.array([found_lower, found_upper], probe_dtype)
            edges = np.histogram_bin_edges(probe, bins)
        else:
            edges = np.histogram_bin_edges(np.empty(0, probe_dtype), bins, range=range)
        counts_obj = _arrays.empty_like(source, _counts_shape(source, layout, bins), "int64")
        work = source
        bounds = _bounds_of(work.dtype_name, lower, upper)
        if bounds is None and range is not None and source.dtype_name in ("float16", "float32") and \
                all(type(bound) in (int, float) for bound in range):
            # numpy takes Python bounds in x's float dtype (NEP 50: its
            # edges, and the outer compares, are x's dtype), so an element
            # equal to the rounded bound is counted
            dtype = _arrays.numpy_dtype(source.dtype_name)
            rounded_lower, rounded_upper = float(dtype.type(lower)), float(dtype.type(upper))
            if rounded_lower < rounded_upper:
                bounds = _bounds_of(work.dtype_name, rounded_lower, rounded_upper)
        if bounds is None:
            work = _arrays.describe(_arrays.convert(source, "float64"), "x")
            bounds = _bounds_of("float64", lower, upper)
            if bounds is None:
                raise ValueError(f"gpuprim: histogram: range ({lower}, {upper}) is wider than "
                                 "float64 holds (upper - lower overflows)")
        low, high, above = bounds
        if layout is not None and layout.rows == 0:
            return counts_obj, _edges_like(source, edges)
        counts = _as_uint64(_arrays.describe(counts_obj, "counts"))
        rows = 1 if layout is None else layout.rows

        def even(c, i, o, first, last):
            if layout is None:
                return LIB.gpuprim_histogram_even(c, i, _arrays.address(first), _arrays.address(last), o)
            return LIB.gpuprim_histogram_even_rows(c, i, rows, _arrays.address(first),
                                                   _arrays.address(last), o)
        self._run([(work, True), (counts, False)], lambda c, i, o: even(c, i, o, low, high))
        # numpy's last bin is closed: the elements equal to upper, counted
        # over [upper, the next value up) in one bin (a row), added to the last bin.
        if work.size:
            if above is not None:
                extra_obj = _arrays.empty_like(source, (rows,), "int64")
                extra = _as_uint64(_arrays.describe(extra_obj, "counts"))
                self._run([(work, True), (extra, False)], lambda c, i, o: even(c, i, o, high, above))
            else:  # upper is the dtype's largest value: no value above it
                extra_obj = _equal_counts(work, rows, high[0].item())
            _add_to_last(counts_obj, extra_obj, layout)
        return counts_obj, _edges_like(source, edges)

    def _histogram_edges(self, source, edges, layout):
        """np.histogram(x, edges) (host numpy edges), per row with layout."""
        np = _arrays.numpy()
        if edges.ndim != 1 or edges.size == 0:
            raise ValueError(f"gpuprim: histogram: bins as an array must be 1-D with at least one "
                             f"edge, not of shape {edges.shape}")
        if edges.dtype.kind not in "iuf":
            raise TypeError(f"gpuprim: histogram: edges of dtype {edges.dtype} (integers or floats)")
        if edges.dtype.kind == "f" and np.isnan(edges).any():
            raise ValueError("gpuprim: histogram: the edges hold a NaN")
        if (edges[:-1] > edges[1:]).any():
            raise ValueError("gpuprim: histogram: bins must increase monotonically, when an array")
        bins = edges.size - 1
        rows = 1 if layout is None else layout.rows
        if bins == 0 or rows == 0 or source.size == 0:
            counts_obj = _arrays.empty_like(source, _counts_shape(source, layout, bins), "int64")
            if bins and rows:
                _arrays.fill(_arrays.describe(counts_obj, "counts"), 0)
            return counts_obj, _edges_like(source, edges)
        work, work_edges = _comparable(source, edges)
        # The library's bins are half-open; numpy's last one is closed: one
        # bin more, [edges[-1], the next value up), added to the last bin
        # (where there is no value up, the elements equal to edges[-1] are
        # counted apart).
        last = work_edges[-1:]
        above = _next_up(last)
        if above is not None:
            work_edges = np.concatenate((work_edges, above))
        ext = bins + 1 if above is not None else bins
        ext_obj = _arrays.empty_like(source, _counts_shape(source, layout, ext), "int64")
        ext_counts = _as_uint64(_arrays.describe(ext_obj, "counts"))
        edges_in = _arrays.describe(_edges_like(work, work_edges), "edges")

        def call(c, i, e, o):
            if layout is None:
                return LIB.gpuprim_histogram_range(c, i, e, o)
            return LIB.gpuprim_histogram_range_rows(c, i, rows, e, o)
        self._run([(work, True), (edges_in, True), (ext_counts, False)], call)
        if above is None:
            counts_obj = ext_obj
            _add_to_last(counts_obj, _equal_counts(work, rows, last[0].item()), layout)
        else:
            counts_obj = _arrays.empty_like(source, _counts_shape(source, layout, bins), "int64")
            counts_obj[...] = ext_obj[..., :bins]
            _add_to_last(counts_obj, ext_obj[..., bins], layout)
        return counts_obj, _edges_like(source, edges)

    def bincount(self, x: Array, minlength: int = 0, *, axis: Optional[int] = None) -> Array:
        """np.bincount(x, minlength=minlength): counts[v] = the number of
        elements of the non-negative integer array x (any shape, flattened)
        equal to v, for v = 0 .. max(x.max() + 1, minlength) - 1, int64 of x's
        kind and device. A negative element raises ValueError naming x (as
        numpy does); so does a non-integer dtype (TypeError). No weights.
        axis=-1 (an x of 2 or more dimensions, C-contiguous): each row on
        its own (gpuprim_bincount_rows), counts of shape x.shape[:-1] +
        (bins,) with bins = max(x.max() + 1, minlength) over the whole
        array, so every row has the same length (numpy has no axis here:
        row r is np.bincount(x[r], minlength=bins)).

        Example::

            >>> gpuprim.bincount(np.array([1, 1, 3], np.uint8), minlength=5)
            array([0, 2, 0, 1, 0])
        """
        source = _arrays.describe(x, "x")
        minlength = _count(minlength, "minlength")
        if source.dtype_name not in _INTEGER_DTYPES:
            raise TypeError(f"gpuprim: bincount: x must be of an integer dtype, not {source.dtype_name}")
        layout = _row_layout(source, axis)
        bins = minlength
        if source.size:
            if source.dtype_name.startswith("int") and _python_number(self.min(source)) < 0:
                raise ValueError("gpuprim: bincount: x must hold no negative values")
            bins = max(bins, int(_python_number(self.max(source))) + 1)
        counts_obj = _arrays.empty_like(source, _counts_shape(source, layout, bins), "int64")
        if bins == 0 or (layout is not None and layout.rows == 0):
            return _framework_array(counts_obj)
        counts = _as_uint64(_arrays.describe(counts_obj, "counts"))
        if layout is None:
            self._run([(source, True), (counts, False)], lambda c, i, o: LIB.gpuprim_bincount(c, i, o))
        else:
            rows = layout.rows
            self._run([(source, True), (counts, False)],
                      lambda c, i, o: LIB.gpuprim_bincount_rows(c, i, rows, o))
        return _framework_array(counts_obj)

    def merge(self, a: Array, b: Array, /, *, values_a: Optional[Values] = None, values_b: Optional[Values] = None,
              descending: bool = False) -> Union[Array, Tuple[Array, Values]]:
        """The stable merge of the sorted 1-D runs a and b (same dtype, both
        ascending, or descending=True both descending): the keys of a and b
        in order, equal keys from a first, so the same as a stable sort of
        the concatenation. With values_a and values_b (one dtype, each of its
        run's length) returns (keys, values), the values moving with their
        keys. Floats follow the sort's order (-0.0 before +0.0, NaNs last
        after +inf by bit pattern), where numpy ties -0.0 with +0.0. Runs
        out of order give unspecified output.

        Example::

            >>> gpuprim.merge(np.array([1, 4, 6]), np.array([2, 4, 5]))
            array([1, 2, 4, 4, 5, 6])
        """
        left = _one_dimensional(_arrays.describe(a, "a"), "a")
        right = _one_dimensional(_arrays.describe(b, "b"), "b")
        if not _same_place(right, left):
            raise TypeError("gpuprim: merge: a and b must be of the same kind and device")
        # The library tells dtypes by width and kind, so bool and uint8 (one
        # code) are told apart here, as searchsorted does.
        if right.dtype_name != left.dtype_name:
            raise TypeError(f"gpuprim: merge: b has dtype {right.dtype_name}, a has {left.dtype_name}; "
                            f"cast one (b.astype(a.dtype))")
        if (values_a is None) != (values_b is None):
            raise ValueError("gpuprim: merge: pass both values_a and values_b, or neither")
        total = left.size + right.size
        keys_out = self._output(left, None, "out", shape=(total,))
        order = _order(descending)
        if values_a is None:
            self._run([(left, True), (right, True), (keys_out, False)],
                      lambda c, ka, kb, ko: LIB.gpuprim_merge(c, ka, 0, kb, 0, ko, 0, order))
            return keys_out.obj
        va = _one_dimensional(_arrays.describe(values_a, "values_a"), "values_a")
        vb = _one_dimensional(_arrays.describe(values_b, "values_b"), "values_b")
        if vb.dtype_name != va.dtype_name:
            raise TypeError(f"gpuprim: merge: values_b has dtype {vb.dtype_name}, values_a has "
                            f"{va.dtype_name}; cast one (values_b.astype(values_a.dtype))")
        for values_array, keys_array, values_name, keys_name in ((va, left, "values_a", "a"),
                                                                 (vb, right, "values_b", "b")):
            if not _same_place(values_array, keys_array):
                raise TypeError(f"gpuprim: merge: {values_name} must be of the same kind and device as "
                                f"{keys_name}")
            if values_array.size != keys_array.size:
                raise ValueError(f"gpuprim: merge: {values_name} has {values_array.size} elements, {keys_name} "
                                 f"has {keys_array.size}; one value per key")
        values_out = self._output(va, None, "values_out", shape=(total,))
        self._run([(left, True), (va, True), (right, True), (vb, True), (keys_out, False),
                   (values_out, False)],
                  lambda c, ka, vA, kb, vB, ko, vo: LIB.gpuprim_merge(c, ka, vA, kb, vB, ko, vo, order))
        return keys_out.obj, values_out.obj

    # -- select, partition, unique, run-length encode (experimental: issue 37) --
    def select(self, x: Array, mask: Optional[Array] = None, /, *, op: Optional[str] = None, value: Any = None,
               upper: Any = None, values: Optional[Values] = None, output: bool = True, positions: bool = False,
               positions_dtype: Any = "int64") -> Any:
        """The elements of the 1-D x that the predicate keeps, in order
        (gpuprim_select; np.compress(mask, x), x[mask], x[x < value]).
        The predicate: mask (a bool or integer array of x's size, kind and
        device: nonzero keeps) or op with value (a value of x's dtype; a
        Python float or int is rounded to it, as numpy takes such scalars,
        and a typed scalar x's dtype cannot hold, np.float64(0.1) for a
        float32 x, raises ValueError): "<", "<=", ">", ">=", "==", "!=" (x op value, compared as numpy and C
        compare: -0.0 == 0.0, a NaN compares false, so only "!=" keeps NaNs),
        "in_range" (value <= x < upper), "isnan", "notnan". Returns
        [kept] + [values moved with them] + [their positions] as given
        (output, values=, positions=True), a tuple where more than one;
        each of its kind and device, views of arrays of x's length (the
        count comes back to the host: the call waits for it).

        Example::

            >>> gpuprim.select(np.array([3, 1, 4, 1, 5]), op=">", value=2)
            array([3, 4, 5])"""
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        predicate = _predicate(source, mask, op, value, upper, "select")
        return self._select(source, predicate, values, output, positions, positions_dtype)

    def _select(self, source, predicate, values=None, output=True, positions=False, positions_dtype="int64"):
        """select() on its described x and checked predicate (_predicate's
        fields), so that a caller with its own names for them (compress)
        checks them once."""
        vals = None if values is None else _same_length(source, values, "values")
        if not output and vals is None and not positions:
            raise ValueError("gpuprim: select: ask for at least one of output, values, positions")
        out = self._output(source, None, "out") if output else None
        values_out = None if vals is None else self._output(vals, None, "values_out")
        where = None
        if positions:
            where = self._output(source, None, "positions", dtype_name=_index_dtype(positions_dtype),
                                 shape=(source.size,))
        kind, flags, scalar, high = predicate
        kept = [0]

        def call(c, i, f, v, o, vo, p):
            status, kept[0] = LIB.gpuprim_select(c, i, v, kind, f, _address_or_0(scalar), _address_or_0(high),
                                                 o, vo, p, 0)
            return status
        self._run([(source, True), (flags, True), (vals, True), (out, False), (values_out, False),
                   (where, False)], call)
        count = kept[0]
        results = [_arrays.prefix(a, count) for a in (out, values_out, where) if a is not None]
        return results[0] if len(results) == 1 else tuple(results)

    def stable_partition(self, x: Array, mask: Optional[Array] = None, /, *, op: Optional[str] = None,
                         value: Any = None, upper: Any = None,
                         values: Optional[Values] = None) -> Tuple[Any, ...]:
        """The 1-D x split in two, stably (gpuprim_partition): the elements
        the predicate (as for select) keeps, in order, then the others, in
        order (not reversed as by cub::DevicePartition). Returns (result,
        count) or, with values, (result, values_result, count); count: how
        many were kept (the split point): result[:count] is select's result.

        Example::

            >>> gpuprim.stable_partition(np.array([5, 1, 7, 2, 8]), op=">", value=4)
            (array([5, 7, 8, 1, 2]), 3)
        """
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        kind, flags, scalar, high = _predicate(source, mask, op, value, upper, "stable_partition")
        vals = None if values is None else _same_length(source, values, "values")
        out = self._output(source, None, "out")
        values_out = None if vals is None else self._output(vals, None, "values_out")
        kept = [0]

        def call(c, i, f, v, o, vo):
            status, kept[0] = LIB.gpuprim_partition(c, i, v, kind, f, _address_or_0(scalar), _address_or_0(high),
                                                    o, vo, 0)
            return status
        self._run([(source, True), (flags, True), (vals, True), (out, False), (values_out, False)], call)
        if values_out is None:
            return out.obj, kept[0]
        return out.obj, values_out.obj, kept[0]

    def run_length_encode(self, x: Array, /, *, non_trivial: bool = False,
                          dtype: Any = "int64") -> Tuple[Array, Array, Array]:
        """The runs of equal consecutive elements of the 1-D x
        (gpuprim_run_length_encode): (keys, starts, lengths), each run's
        element, first position and length (indices of dtype, int64 by
        default); non_trivial=True: only runs of 2 or more. Elements are
        equal when their bits are (-0.0 and +0.0 differ, NaNs with the same
        bits are equal).

        Example::

            >>> gpuprim.run_length_encode(np.array([5, 5, 6, 7, 7, 7]))
            (array([5, 6, 7]), array([0, 2, 3]), array([2, 1, 3]))
        """
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        dtype = _index_dtype(dtype)
        keys = self._output(source, None, "keys")
        starts = self._output(source, None, "starts", dtype_name=dtype, shape=(source.size,))
        lengths = self._output(source, None, "lengths", dtype_name=dtype, shape=(source.size,))
        runs = _lib.RUNS_NON_TRIVIAL if non_trivial else _lib.RUNS_ALL
        found = [0]

        def call(c, i, k, s, n):
            status, found[0] = LIB.gpuprim_run_length_encode(c, i, runs, k, s, n, 0)
            return status
        self._run([(source, True), (keys, False), (starts, False), (lengths, False)], call)
        count = found[0]
        return tuple(_arrays.prefix(a, count) for a in (keys, starts, lengths))

    def unique_consecutive(self, x: Array, /, *, return_counts: bool = False, values: Optional[Values] = None) -> Any:
        """torch.unique_consecutive(x, return_counts=...) of the 1-D x: the
        first element of every run of equal consecutive elements
        (gpuprim_unique; std::unique), and with return_counts the runs'
        lengths (int64). With values (x's length), each run's first value
        comes back too: (keys, values[, counts]). Elements are equal when
        their bits are (torch compares values: there -0.0 joins a run of
        +0.0 and every NaN is a run of its own).

        Example::

            >>> gpuprim.unique_consecutive(np.array([1, 1, 2, 2, 2, 1]), return_counts=True)
            (array([1, 2, 1]), array([2, 3, 1]))
        """
        source = _one_dimensional(_arrays.describe(x, "x"), "x")
        results = []
        if values is not None or not return_counts:
            vals = None if values is None else _same_length(source, values, "values")
            keys = self._output(source, None, "keys")
            values_out = None if vals is None else self._output(vals, None, "values_out")
            found = [0]

            def call(c, i, v, k, vo):
                status, found[0] = LIB.gpuprim_unique(c, i, v, k, vo, 0)
                return status
            self._run([(source, True), (vals, True), (keys, False), (values_out, False)], call)
            results = [_arrays.prefix(a, found[0]) for a in (keys, values_out) if a is not None]
        if return_counts:
            keys, _, lengths = self.run_length_encode(source)
            if not results:
                results = [keys]
            results.append(lengths)
        return results[0] if len(results) == 1 else tuple(results)

    def unique(self, x: Array, /, *, return_inverse: bool = False, return_counts: bool = False) -> Any:
        """np.unique(x, return_inverse=..., return_counts=...): the sorted
        distinct values of x (flattened), by value as numpy has them
        (-0.0 and +0.0 are one value, every NaN one value, last): one
        gpuprim_group_by call giving the keys, and as asked the counts and
        the inverse. inverse: x's shape, int64, x == unique[inverse];
        counts: int64.

        Example::

            >>> gpuprim.unique(np.array([3, 1, 3, 2, 1]), return_counts=True)
            (array([1, 2, 3]), array([2, 1, 2]))
        """
        shape = tuple(_arrays.describe(x, "x").shape)
        source = _arrays.describe(x, "x")
        if source.ndim != 1:
            source = _arrays.describe(source.obj.reshape(-1), "x")
        keys, _, counts, inverse = self._group_by(source, None, None, keys=True, counts=return_counts,
                                                  inverse=return_inverse, function="unique")
        results = [keys]
        if return_inverse:
            results.append(inverse.reshape(shape))
        if return_counts:
            results.append(counts)
        return results[0] if len(results) == 1 else tuple(results)

    # -- reduce-by-key, group-by (experimental: issue 37) --------------------
    def reduce_by_key(self, keys: Array, values: Values, /, op: str = "sum", *, return_counts: bool = False,
                      dtype: Any = None) -> Tuple[Any, ...]:
        """Reduce every run of equal consecutive keys of the 1-D keys
        (gpuprim_reduce_by_key; cub::DeviceReduce::ReduceByKey): returns
        (unique_keys, results) or with return_counts (unique_keys, results,
        lengths): each run's key, op ("sum", "min" or "max") over its values
        in order, and its length (int64). Keys are equal when their bits are
        (-0.0 and +0.0 differ, NaNs with the same bits are equal), as
        unique_consecutive has them. values: 1-D, keys' length, kind and
        device, any dtype. A sum is made in sum()'s dtype (integers narrower
        than 64 bits widened; floats deterministic, float16/bfloat16 in
        float32 rounded once) or in dtype; min/max in values' dtype (NaN
        wins). Results are views of arrays of keys' length (the count comes
        back to the host: the call waits for it).

        Example::

            >>> gpuprim.reduce_by_key(np.array([1, 1, 2, 1]), np.array([1.0, 2.0, 3.0, 4.0]))
            (array([1, 2, 1]), array([3., 3., 4.]))"""
        code = _op_code(op)
        source = _one_dimensional(_arrays.describe(keys, "keys"), "keys")
        vals = _keyed_values(source, values, "reduce_by_key")
        vals = _reduced_values(vals, op, dtype, "reduce_by_key")
        keys_out = self._output(source, None, "keys_out")
        results = self._output(vals, None, "results", shape=(source.size,))
        lengths = None
        if return_counts:
            lengths = self._output(source, None, "lengths", dtype_name="int64", shape=(source.size,))
        found = [0]

        def call(c, k, v, ko, r, n):
            status, found[0] = LIB.gpuprim_reduce_by_key(c, k, v, code, ko, r, n, 0)
            return status
        self._run([(source, True), (vals, True), (keys_out, False), (results, False), (lengths, False)], call)
        count = found[0]
        return tuple(_arrays.prefix(a, count) for a in (keys_out, results, lengths) if a is not None)

    def groupby_sum(self, keys: Array, values: Values, /, *, return_counts: bool = False,
                    dtype: Any = None) -> Tuple[Any, ...]:
        """pandas' Series(values).groupby(keys, sort=True, dropna=False).sum()
        in one gpuprim_group_by call: (keys, sums) or with return_counts
        (keys, sums, counts): the distinct keys of the 1-D keys, sorted
        (np.unique's keys: -0.0 and +0.0 one key, every NaN one key, last),
        each group's sum of its values taken in input order (floats
        deterministic; a NaN value makes its group's sum NaN: pandas skips
        them), and its count (int64). The sum's dtype as for reduce_by_key
        (integers narrower than 64 bits widened, or dtype).

        Example::

            >>> gpuprim.groupby_sum(np.array([3, 1, 3]), np.array([1, 2, 4]))
            (array([1, 3]), array([2, 5]))"""
        return self._groupby("sum", keys, values, return_counts, dtype)

    def groupby_min(self, keys: Array, values: Values, /, *, return_counts: bool = False) -> Tuple[Any, ...]:
        """groupby_sum's groups, each group's smallest value (values' dtype;
        NaN wins, -0.0 < +0.0).

        Example::

            >>> gpuprim.groupby_min(np.array([3, 1, 3]), np.array([1.0, 2.0, -4.0]))
            (array([1, 3]), array([ 2., -4.]))
        """
        return self._groupby("min", keys, values, return_counts, None)

    def groupby_max(self, keys: Array, values: Values, /, *, return_counts: bool = False) -> Tuple[Any, ...]:
        """groupby_sum's groups, each group's largest value (values' dtype;
        NaN wins, -0.0 < +0.0).

        Example::

            >>> gpuprim.groupby_max(np.array([3, 1, 3]), np.array([1.0, 2.0, -4.0]))
            (array([1, 3]), array([2., 1.]))
        """
        return self._groupby("max", keys, values, return_counts, None)

    def _groupby(self, op, keys, values, return_counts, dtype):
        function = f"groupby_{op}"
        source = _one_dimensional(_arrays.describe(keys, "keys"), "keys")
        vals = _reduced_values(_keyed_values(source, values, function), op, dtype, function)
        out_keys, results, counts, _ = self._group_by(source, vals, _OPS[op], keys=True, counts=return_counts,
                                                      inverse=False, function=function)
        return (out_keys, results, counts) if return_counts else (out_keys, results)

    def _group_by(self, source, vals, code, *, keys, counts, inverse, function):
        """gpuprim_group_by of the 1-D source (float keys made canonical
        first: -0.0 as +0.0, every NaN the one quiet NaN) with vals (an Array
        or None) reduced by code: (keys, results, counts, inverse), each None
        where not asked; counts and inverse int64."""
        if source.dtype_name in ("float16", "bfloat16", "float32", "float64"):
            source = _arrays.describe(_canonical_floats(source, function), "keys")
        n = source.size
        keys_out = self._output(source, None, "keys_out") if keys else None
        results = None if vals is None else self._output(vals, None, "results", shape=(n,))
        counts_out = self._output(source, None, "counts", dtype_name="int64", shape=(n,)) if counts else None
        inverse_out = self._output(source, None, "inverse", dtype_name="int64", shape=(n,)) if inverse else None
        op = _lib.OP_SUM if code is None else code
        found = [0]

        def call(c, k, v, ko, co, r, inv):
            status, found[0] = LIB.gpuprim_group_by(c, k, v, op, ko, co, r, inv, 0)
            return status
        self._run([(source, True), (vals, True), (keys_out, False), (counts_out, False), (results, False),
                   (inverse_out, False)], call)
        count = found[0]
        return (None if keys_out is None else _arrays.prefix(keys_out, count),
                None if results is None else _arrays.prefix(results, count),
                None if counts_out is None else _arrays.prefix(counts_out, count),
                None if inverse_out is None else inverse_out.obj)

    # -- distributed calls (experimental: gpuprim.h's GPUPRIM_EXPERIMENTAL_API) --
    @_serialized
    def attach_communicator(self, comm, kind=None) -> None:
        """Borrow a communicator for this context's distributed_*() calls.
        One context is one rank: every rank of the communicator makes each
        distributed call, in the same order, with its own arrays. The
        library never creates, initializes or frees a communicator (the
        launcher starts the processes; mpi4py or NCCL bootstraps it); it
        must stay valid while attached, and the context keeps a reference
        to the object given here. Attaching replaces the communicator
        attached before; it is local (no communication).

        - CPU context (numpy arrays, CPU tensors): an mpi4py communicator,
          e.g. ``MPI.COMM_WORLD`` (its MPI_Comm is passed by address,
          ``MPI._addressof(comm)``). mpi4py must use the libmpi that
          libgpuprim was built with (``MPI.Get_library_version()``).
        - CUDA context: an NCCL communicator on the context's device: an
          int holding the ncclComm_t, CuPy's
          ``cupy.cuda.nccl.NcclCommunicator`` (or its ``.comm``), or
          nccl4py's ``nccl.core.Communicator`` (or its ``.ptr``).

        kind: None (from comm), "mpi" or "nccl"; an int with kind="mpi" is
        the address of an MPI_Comm. Raises DeviceError when this libgpuprim
        has no distributed calls or was built without that engine
        (BACKEND_UNAVAILABLE)."""
        code, address = _communicator_handle(comm, kind)
        handle = self._live()
        _require_distributed()
        if code == _lib.COMM_NCCL and self.backend != "cuda":
            raise ValueError("gpuprim: an NCCL communicator needs a CUDA context "
                             "(Context(\"cuda\", device=...)); this context is on the CPU: "
                             "attach an mpi4py communicator to it")
        if code == _lib.COMM_MPI and self.backend != "cpu":
            raise ValueError("gpuprim: an MPI communicator needs a CPU context (Context(\"cpu\")); "
                             "a CUDA context takes an NCCL communicator")
        self._check(LIB.gpuprim_context_attach_communicator(handle, code, address))
        self._communicator, self._communicator_key = comm, (code, address)

    @_serialized
    def detach_communicator(self) -> None:
        """Forget the attached communicator (none attached: nothing to do).
        The communicator itself is left as it is."""
        handle = self._live()
        if self._communicator_key is not None:
            self._check(LIB.gpuprim_context_detach_communicator(handle))
        self._communicator = self._communicator_key = None

    @property
    def communicator(self):
        """The object given to attach_communicator(), or None."""
        return self._communicator

    @property
    def rank(self) -> int:
        """This context's rank in its communicator (InvalidArgumentError
        when none is attached)."""
        return self._rank()[0]

    @property
    def rank_count(self) -> int:
        """The number of ranks of the attached communicator."""
        return self._rank()[1]

    @_serialized
    def _rank(self):
        handle = self._distributed()
        status, rank, count = LIB.gpuprim_context_get_rank(handle)
        self._check(status)
        return rank, count

    def _use_communicator(self, comm):
        """Attach comm unless it is the one attached (module-level calls)."""
        if comm is self._communicator:
            return
        code, address = _communicator_handle(comm, None)
        if (code, address) != self._communicator_key:
            self.attach_communicator(comm)
        self._communicator = comm

    def _distributed(self):
        """The live handle, for a call that needs an attached communicator."""
        handle = self._live()
        _require_distributed()
        if self._communicator_key is None:
            raise error_for(_INVALID_ARGUMENT,
                            "gpuprim: no communicator is attached to this context: call "
                            "attach_communicator(comm) first (an mpi4py communicator for a CPU "
                            "context, an NCCL communicator for a CUDA context)")
        return handle

    @_serialized
    def _collective(self, prepare, refuse):
        """A distributed call: prepare(run) checks the arguments, makes the
        outputs and calls run(operands, function) (self._run) once. Every
        rank must reach the library's call, whose agreement step makes all
        ranks fail when one refuses: when this rank fails before it (an
        argument the package refuses, a staging copy), it still joins
        through refuse(handle), a call the library refuses locally (NULL
        operands), so the other ranks raise an error naming this rank
        instead of waiting for it; this rank raises its own error.

        A collective step before the call itself (distributed_topk's global
        count) is run(operands, function, step=True): once it returned,
        every rank took part in it, and a failure after it still joins the
        call through refuse()."""
        handle = self._distributed()
        entered = []

        def run(operands, function, step=False):
            def call(context, *buffers):
                entered.append(True)
                return function(context, *buffers)
            self._run(operands, call)
            if step:
                entered.clear()  # done on every rank; the call itself is still to join

        try:
            return prepare(run)
        except Exception:
            if not entered:
                refuse(handle)
            raise

    def _global_count(self, run, keys):
        """The sum of every rank's element count (a distributed_reduce of
        one uint64 per rank: a collective step of `run`)."""
        np = _arrays.numpy()
        count = _arrays.describe(np.array([keys.size], np.uint64), "count")
        total = np.empty(1, np.uint64)
        pointer = _arrays.address(total)
        run([(count, True)],
            lambda c, i: LIB.gpuprim_distributed_reduce(c, _lib.OP_SUM, i, pointer), step=True)
        return int(total[0])

    def distributed_reduce(self, x, op="sum", *, dtype=None):
        """op ("sum", "min", "max") over the elements of every rank's x (any
        shape, C-contiguous; ranks may hold different counts, zero too):
        every rank gets the result, as sum()/min()/max() give it (a numpy
        scalar for numpy input; a 0-d tensor / array of x's kind and device
        otherwise). Each rank reduces its own elements, then the ranks'
        results combine in rank order: float sums are deterministic for a
        given layout of the data over the ranks. A sum's dtype is sum()'s
        (integers narrower than 64 bits widened, x cast first on each
        rank), or dtype. Collective."""
        def prepare(run):
            code = _op_code(op)
            source = _accumulated(_arrays.describe(x, "x"), op, dtype)
            host = _arrays.host_scalar(source.dtype_name, source.kind)
            pointer = _arrays.address(host)
            run([(source, True)], lambda c, i: LIB.gpuprim_distributed_reduce(c, code, i, pointer))
            _bool_min_fixed(host, source, op, "numpy")
            return _arrays.scalar_result(source, host)
        return self._collective(prepare, lambda c: LIB.gpuprim_distributed_reduce(c, 0, 0, 0))

    def distributed_scan(self, x, op="sum", *, exclusive=False, out=None, dtype=None):
        """Prefix scan ("sum", "min", "max") of the concatenation of every
        rank's 1-D x in rank order: each rank gets its part (x's size) of
        that scan. An exclusive scan's first element on rank r is op over
        every element of the ranks before r (the identity on rank 0). out
        may be x (in place). dtype as for scan() (a sum's integers narrower
        than 64 bits widened, unless out or dtype says otherwise).
        Collective."""
        def prepare(run):
            code = _op_code(op)
            source = _one_dimensional(_arrays.describe(x, "x"), "x")
            source = _accumulated(source, op, dtype, out)
            target = self._output(source, out, "out")
            kind = _lib.SCAN_EXCLUSIVE if exclusive else _lib.SCAN_INCLUSIVE
            run([(source, True), (target, False)],
                lambda c, i, o: LIB.gpuprim_distributed_scan(c, code, kind, i, o))
            return _bool_min_fixed(target.obj, source, op, identity_written=exclusive)
        return self._collective(prepare,
                                lambda c: LIB.gpuprim_distributed_scan(c, 0, 0, 0, 0))

    def distributed_sort(self, x, *, descending=False, values=None, out=None, values_out=None,
                         begin_bit=None, end_bit=None):
        """Stable sort of the concatenation of every rank's 1-D x in rank
        order: afterwards the ranks' results, concatenated in rank order,
        are that sort, and every rank holds as many elements as it gave
        (equal keys keep their global order: rank, then position). values,
        out, values_out (in place too), descending and the bit range as for
        sort(). Collective."""
        def prepare(run):
            keys = _one_dimensional(_arrays.describe(x, "x"), "x")
            keys_out, vals, vals_out = self._sort_operands(keys, None, values, out, values_out)
            options = _sort_options(None, descending, begin_bit, end_bit)  # checked by the agreement
            run([(keys, True), (vals, True), (keys_out, False), (vals_out, False)],
                lambda c, kin, vin, kout, vout: LIB.gpuprim_distributed_sort(
                    c, kin, vin, kout, vout, *options))
            return keys_out.obj if vals is None else (keys_out.obj, vals_out.obj)
        return self._collective(
            prepare, lambda c: LIB.gpuprim_distributed_sort(c, 0, 0, 0, 0, None))

    def distributed_argsort(self, x, *, descending=False, dtype="int64", begin_bit=None,
                            end_bit=None):
        """The global permutation of distributed_sort(): rank r gets x's
        size indices, the global positions (rank, then position: offset_r +
        j, offset_r the sum of the sizes of the ranks before r) of the
        elements that land on its part of the sorted data. dtype int64
        (default) or uint64. Collective."""
        def prepare(run):
            keys = _one_dimensional(_arrays.describe(x, "x"), "x")
            name = _index_dtype(dtype, _GLOBAL_INDEX_DTYPES,
                                "distributed_argsort's indices are global positions: dtype")
            indices = self._output(keys, None, "indices", dtype_name=name)
            options = _sort_options(None, descending, begin_bit, end_bit)  # checked by the agreement
            run([(keys, True), (indices, False)],
                lambda c, k, i: LIB.gpuprim_distributed_argsort(c, k, 0, i, *options))
            return indices.obj
        return self._collective(
            prepare, lambda c: LIB.gpuprim_distributed_argsort(c, 0, 0, 0, None))

    def distributed_topk(self, x, k, *, largest=True, dtype="int64"):
        """topk() of the concatenation of every rank's 1-D x: every rank
        gets the same (values, indices) of k elements, indices global
        positions (ties to the lower global position). k: 0 to the global
        count (InvalidArgumentError past it, on every rank, before any
        output is made); the same on every rank. Collective."""
        def prepare(run):
            keys = _one_dimensional(_arrays.describe(x, "x"), "x")
            count = _count(k, "k")
            dtype_name = _index_dtype(dtype)
            if count > _TOPK_COUNT_FIRST:
                # The library checks k against the global count only inside
                # the call, which takes outputs of k elements: for a k that
                # large the ranks first sum their counts (one collective
                # call more, made on every rank alike: k must be the same on
                # every rank), so that a k past the global count fails on
                # every rank before anything of k elements is allocated.
                total = self._global_count(run, keys)
                if count > total:
                    raise _invalid(f"gpuprim: distributed_topk: k = {count} is more than the "
                                   f"{total} elements of every rank's x together")
            values, indices = self._topk_outputs(keys, (count,), dtype_name)
            order = _order(largest)
            run([(keys, True), (values, False), (indices, False)],
                lambda c, kin, v, i: LIB.gpuprim_distributed_topk(c, kin, count, order, v, i))
            return values.obj, indices.obj
        return self._collective(
            prepare, lambda c: LIB.gpuprim_distributed_topk(c, 0, 0, 0, 0, 0))


_SIDES = {"left": _lib.SIDE_LEFT, "right": _lib.SIDE_RIGHT}
_INTEGER_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def _python_number(value):
    """A reduction's result (numpy scalar, 0-d tensor or array) as a Python number."""
    return value.item() if hasattr(value, "item") else value


def _as_uint64(array):
    """An int64 output seen by the library as uint64 (counts; the same bytes).
    An exported output stays one: reading its obj would make the framework's
    array now, before the call writes it (JAX without x64 copies int64 into
    int32 then)."""
    kind = _arrays._ExportedArray if type(array) is _arrays._ExportedArray else _arrays.Array
    source = array.exported if kind is _arrays._ExportedArray else array.obj
    return kind(source, array.kind, array.ptr, "uint64", array.size, array.on_device, array.device, array.ndim,
                array.writeable)


def _bounds_of(dtype_name, lower, upper):
    """(lower, upper, the value after upper or None) as one-element numpy
    arrays of dtype_name, where lower and upper are exactly values of it
    (upper - lower finite in float64); None where they are not (bfloat16:
    always None)."""
    np = _arrays.numpy()
    if dtype_name == "bfloat16":
        return None
    dtype = _arrays.numpy_dtype(dtype_name)
    if dtype_name in _INTEGER_DTYPES:
        info = np.iinfo(dtype)
        result = []
        for value in (lower, upper):
            if isinstance(value, float):
                if not value.is_integer():
                    return None
                value = int(value)
            if not info.min <= value <= info.max:
                return None
            result.append(np.array([value], dtype))
        above = int(upper) + 1
        result.append(np.array([above], dtype) if above <= info.max else None)
        return tuple(result)
    low, high = np.array([lower], dtype), np.array([upper], dtype)
    if float(low[0]) != float(lower) or float(high[0]) != float(upper):
        return None
    if not math.isfinite(float(high[0]) - float(low[0])):
        return None
    with np.errstate(over="ignore"):
        above = np.nextafter(high, np.array([np.inf], dtype))
    return low, high, (above if np.isfinite(above[0]) else None)


def _counts_shape(array, layout, bins):
    """The counts' shape: (bins,) for the flat call, else a row of bins for
    each row (x.shape[:-1] + (bins,))."""
    if layout is None:
        return (bins,)
    return tuple(array.shape[:-1]) + (bins,)


def _is_sequence(bins):
    """bins given as edges: an array (numpy, torch, CuPy, 0-d excluded) or a list/tuple."""
    if isinstance(bins, (list, tuple)):
        return True
    shape = getattr(bins, "shape", None)
    return shape is not None and len(shape) > 0


def _host_edges(bins):
    """The edges as a host numpy array (torch and CuPy arrays copied to the host)."""
    np = _arrays.numpy()
    module = type(bins).__module__.split(".", 1)[0]
    if module == "torch":
        torch = sys.modules["torch"]
        tensor = bins.detach().cpu()
        if tensor.dtype == torch.bfloat16:
            tensor = tensor.to(torch.float32)
        return tensor.numpy()
    if module == "cupy":
        return bins.get()
    if isinstance(bins, np.ma.MaskedArray):
        _arrays.masked_refusal(bins, "bins")
    return np.asarray(bins)


def _comparable(source, edges):
    """(x, edges) as the library compares them, as numpy would: in
    np.result_type(x, edges), x in its own dtype where the edges are values
    of it and x's values compare alike there (no copy), else x copied."""
    np = _arrays.numpy()
    x_name = "float64" if source.dtype_name == "bfloat16" else source.dtype_name
    x_dtype = _arrays.numpy_dtype(x_name)
    common = np.result_type(x_dtype, edges.dtype)
    if common.kind not in "iuf" or common.itemsize > 8:
        raise TypeError(f"gpuprim: histogram: x of {source.dtype_name} and edges of {edges.dtype} "
                        f"compare in {common}, which the library does not take")
    # x's values keep their order and equalities in common: an integer x in a
    # wider integer, a float x in a float, an integer x of at most 32 bits in float64
    widens = (x_dtype.kind == common.kind or (x_dtype.kind in "iu" and common.kind in "iu")
              or (common.kind == "f" and common.itemsize >= 8 and x_dtype.itemsize <= 4)
              or (common.kind == "f" and x_dtype.kind == "f"))
    if source.dtype_name != "bfloat16" and widens:
        with np.errstate(all="ignore"):
            cast = edges.astype(x_dtype)
            if np.array_equal(cast.astype(common), edges.astype(common)):
                return source, cast
    work = _arrays.describe(_arrays.convert(source, common.name), "x")
    return work, edges.astype(common)


def _next_up(last):
    """The next value of last's dtype above last[0], as a one-element array, or None."""
    np = _arrays.numpy()
    if last.dtype.kind in "iu":
        return None if last[0] == np.iinfo(last.dtype).max else last + 1
    if not np.isfinite(last[0]):
        return None
    with np.errstate(over="ignore"):
        return np.nextafter(last, np.array([np.inf], last.dtype))


def _same_place(array, other):
    """Whether two described arrays come from one array library and lie on
    one device (the host is device -1)."""
    return array.kind == other.kind and array.device == other.device


def _may_overlap(a, b):
    """Whether two described arrays of one device may share a byte (their
    address ranges meet)."""
    if not a.size or not b.size or a.device != b.device:
        return False
    a_end = a.ptr + a.size * _arrays.itemsize(a.dtype_name)
    b_end = b.ptr + b.size * _arrays.itemsize(b.dtype_name)
    return a.ptr < b_end and b.ptr < a_end


def _partly_overlap(a, b):
    """Whether two described arrays share memory without being the same
    memory (one start, one byte length: an in-place call)."""
    same = (a.ptr == b.ptr and a.size * _arrays.itemsize(a.dtype_name) == b.size * _arrays.itemsize(b.dtype_name)
            and (a.on_device, a.device) == (b.on_device, b.device))
    return not same and _may_overlap(a, b)


def _refuse_partial_overlap(output, source, output_name, source_name):
    """ValueError when output shares memory with source without being it
    (the library refuses that too, naming its own parameters)."""
    if _partly_overlap(output, source):
        raise ValueError(f"gpuprim: {output_name} shares memory with {source_name} without being it; pass "
                         f"{source_name} itself (in place) or a separate array")


def _refuse_outside_writes(array, layout, function):
    """Before a segmented call on a JAX (or other DLPack producer's) array,
    whose outputs are exported and cannot be written after the call: a
    TypeError when elements lie outside every segment (they are copied in
    after the call), so that nothing runs first."""
    if array.kind not in ("jax", "dlpack"):
        return
    first, last = _arrays.offset_ends(layout.offsets)
    if first > 0 or last < array.size:
        _arrays._no_writes(array, f"{function} with elements outside every segment")


def _framework_array(obj):
    """A new output as the caller's framework's array: an export (JAX or
    another DLPack producer's input) becomes that framework's array."""
    return obj.result() if isinstance(obj, _arrays.Exported) else obj


def _equal_counts(work, rows, value):
    """The number of elements equal to value in each row of work (1-D, int64, of its kind)."""
    equal = work.obj.reshape(rows, -1) == value
    if work.kind == "torch":
        return equal.sum(dim=-1)
    return equal.sum(axis=-1).astype("int64")


def _add_to_last(counts_obj, extra_obj, layout):
    """counts[..., -1] += extra (one count a row)."""
    if layout is None:
        counts_obj[-1:] += extra_obj.reshape(1)
    else:
        counts_obj[..., -1] += extra_obj.reshape(tuple(counts_obj.shape[:-1]))


def _edges_like(array, edges):
    """The float64 numpy edges as an array of the operand's kind and device."""
    if array.kind == "torch":
        torch = sys.modules["torch"]
        return torch.from_numpy(edges).to(array.obj.device)
    if array.kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(array.device):
            return cupy.asarray(edges)
    return edges


class _Layout:
    """How a call's data divides into segments: `rows` rows of `length`
    elements (offsets None), or the CSR `offsets` (an Array) with the
    promise `max_length` (max_segment_length; 0: none)."""

    __slots__ = ("rows", "length", "offsets", "max_length")

    def __init__(self, rows=0, length=0, offsets=None, max_length=0):
        self.rows, self.length, self.offsets, self.max_length = rows, length, offsets, max_length


def _row_layout(array, axis):
    """The rows of a per-row call along the last axis; None for the call on
    the whole array (axis None, or a 1-D array: one row)."""
    if axis is None:
        return None
    axis = _integer(axis, "axis must be an integer or None")
    shape = array.shape
    if not shape:
        raise ValueError(f"gpuprim: a 0-d array has no axis {axis} to work along: pass an array of one "
                         "dimension or more")
    if axis not in (-1, len(shape) - 1):
        raise ValueError(
            f"gpuprim: axis={axis} for an array of shape {shape}: only the last axis "
            "(axis=-1) is supported; move the axis last and make the array contiguous "
            "(np.ascontiguousarray(np.moveaxis(x, axis, -1)), x.movedim(axis, -1).contiguous())")
    if len(shape) == 1:
        return None
    return _Layout(math.prod(shape[:-1]), shape[-1])


def _offset_layout(x, offsets, max_segment_length=None):
    """CSR offsets for x: a 1-D index array of x's kind and device (the
    library checks their values), and max_segment_length (None or 0: no
    promise; the library's gpuprim_segments_t field)."""
    # 0, as in the C struct, promises nothing (not "every segment empty")
    max_length = 0 if max_segment_length is None else _count(max_segment_length, "max_segment_length")
    array = _arrays.describe(offsets, "offsets")
    if not _same_place(array, x):
        raise TypeError("gpuprim: offsets must be of the same kind and device as x")
    if array.dtype_name not in _INDEX_DTYPES:
        raise TypeError(f"gpuprim: offsets has dtype {array.dtype_name}; offsets are "
                        f"{', '.join(_INDEX_DTYPES)}")
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"gpuprim: offsets has shape {array.shape}; it must be 1-D with segment "
                         "count + 1 elements (at least 1)")
    return _Layout(offsets=array, max_length=max_length)


def _index_dtype(dtype, allowed=_INDEX_DTYPES, what="index dtype"):
    """The name of an index dtype= argument, spelled as numpy, PyTorch or
    CuPy spell dtypes (_arrays.dtype_name); None is int64. TypeError
    naming the allowed ones otherwise."""
    if dtype is None:
        return "int64"
    name = _arrays.dtype_name(dtype)
    if name not in allowed:
        raise TypeError(f"gpuprim: {what} must be one of {', '.join(allowed)}, not {name}")
    return name


def _fast_index_code(dtype):
    """The library code of an index dtype= argument (argsort's, topk's) for
    the compiled common path, by _index_dtype's rules; None where those
    raise (the general path then says why)."""
    try:
        return _arrays.CODES[_index_dtype(dtype)]
    except TypeError:
        return None


def _invalid(message):
    """The library's INVALID_ARGUMENT error (InvalidArgumentError, a
    ValueError) for a check the package makes before the library's call."""
    return error_for(_INVALID_ARGUMENT, message)


def _integer(value, must):
    """operator.index(value), refusing bools: otherwise a TypeError
    "gpuprim: {must}, not {value!r}"."""
    if isinstance(value, bool):
        raise TypeError(f"gpuprim: {must}, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"gpuprim: {must}, not {value!r}") from None


def _count(value, what):
    """A count argument (k): a non-negative integer below 2^64."""
    value = _integer(value, f"{what} must be an integer")
    if not 0 <= value < (1 << 64):
        raise ValueError(f"gpuprim: {what} must be in [0, 2^64), not {value}")
    return value


def _order(descending):
    return _lib.DESCENDING if descending else _lib.ASCENDING


def _bit(value, what):
    """A bit position (numpy integers too, as k and axis take them); else
    ValueError naming it."""
    if value is None:
        return 0
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = None
    if number is None or not 0 <= number < (1 << 32):
        raise ValueError(f"gpuprim: {what} must be an integer in [0, 2^32), not {value!r}")
    return number


def _sort_options(keys, descending, begin_bit, end_bit):
    """(order, begin_bit, end_bit): the gpuprim_sort_options_t fields the
    _ext calls take (the rest at gpuprim_sort_options_init's defaults). A
    given bit range is checked here against the keys' width, as the library
    checks it (begin_bit < end_bit <= the key's bits, end_bit 0 the width),
    so that the refusal names begin_bit and end_bit as the caller wrote them.
    keys None: not checked here (the distributed calls: the library checks
    the range in its agreement step, so every rank fails with the reason)."""
    begin, end = _bit(begin_bit, "begin_bit"), _bit(end_bit, "end_bit")
    if keys is not None and (begin_bit is not None or end_bit is not None):
        name = keys.dtype_name
        bits = 8 if name == "bool" else int(name.lstrip("abcdefghijklmnopqrstuvwxyz"))
        if not begin < (end or bits) <= bits:
            raise _lib.InvalidArgumentError(
                _lib.STATUS_CODES["INVALID_ARGUMENT"],
                f"gpuprim: begin_bit={begin_bit} and end_bit={end_bit}: the bit range must satisfy "
                f"begin_bit < end_bit <= {bits}, the bits of a {name} key (end_bit None or 0 means {bits})")
    return _order(descending), begin, end


def _sort_call(keys, descending, begin_bit, end_bit):
    """call(context, keys_in, values_in, keys_out, values_out): gpuprim_sort,
    or gpuprim_sort_with_options when a bit range is given (_sort_options
    checks it)."""
    order = _order(descending)
    if begin_bit is None and end_bit is None:
        return lambda c, kin, vin, kout, vout: LIB.gpuprim_sort(c, kin, vin, kout, vout, order)
    options = _sort_options(keys, descending, begin_bit, end_bit)
    return lambda c, kin, vin, kout, vout: LIB.gpuprim_sort_with_options(c, kin, vin, kout, vout,
                                                                         *options)


def _accumulated(source, op, dtype, out=None):
    """The operand of a sum or scan: source, or source cast with its own
    library (_arrays.convert: a copy) to the dtype the call works and
    returns in: dtype if given (any spelling _arrays.dtype_name takes),
    else out's dtype when out is given (numpy's rule), else for a sum the
    framework's own sum dtype (_arrays.sum_dtype_name: integers narrower
    than 64 bits widened), else source's."""
    if dtype is not None:
        name = _arrays.dtype_name(dtype)
        if name not in (_lib.DTYPE_CODES if op == "sum" else _arrays.CODES):
            raise TypeError(f"gpuprim: dtype must be one of "
                            f"{_arrays.NUMERIC if op == 'sum' else _arrays.SUPPORTED}, not {name}")
    elif out is not None:
        name = _arrays.describe(out, "out").dtype_name
        if op == "sum" and name == "bool":
            raise TypeError("gpuprim: out has dtype bool: sums are not made in bool (a cumsum "
                            "of bools counts them, in int64 unless dtype= says otherwise)")
    elif op == "sum":
        name = _arrays.sum_dtype_name(source)
    else:
        name = source.dtype_name
    if name == source.dtype_name:
        return source
    return _arrays.describe(_arrays.convert(source, name), "x")


def _bool_min_fixed(result, source, op, kind=None, identity_written=True):
    """result, made valid bools where a min over bools (computed as uint8)
    wrote uint8's identity, 255, for no element (_arrays.clamp_bool): True,
    the identity of a min over bools. Any other result as it is.
    identity_written: False (or a callable returning False) where every
    result element covers at least one element (an inclusive scan, rows
    that are not empty, no empty segment): then a JAX result, which takes
    no write after the call, needs no fixing either."""
    if op != "min" or source.dtype_name != "bool":
        return result
    if (kind or source.kind) in ("jax", "dlpack") and not (identity_written() if callable(identity_written)
                                                           else identity_written):
        return result
    _arrays.clamp_bool(result, kind or source.kind)
    return result


def _some_segment_empty(layout):
    """Whether a segment of the CSR layout is empty (True where the offsets
    cannot be read on the host here: a device array of another DLPack
    producer)."""
    offsets = layout.offsets
    np = _arrays.numpy()
    if offsets.kind == "jax":
        host = np.asarray(offsets.obj)
    elif offsets.kind == "dlpack" and not offsets.on_device:
        host = np.from_dlpack(offsets.obj)
    else:
        return True
    return bool((host[1:] == host[:-1]).any())


def _op_code(op):
    if op not in _OPS:
        raise ValueError(f"gpuprim: op must be one of {', '.join(_OPS)}, not {op!r}")
    return _OPS[op]


# -- distributed calls: communicators --------------------------------------
_GLOBAL_INDEX_DTYPES = ("int64", "uint64")
_SIZE_MISMATCH, _INVALID_ARGUMENT, _BACKEND_UNAVAILABLE = 6, 9, 11
# distributed_topk: past this k the ranks sum their counts before the call
# (its outputs of k elements are allocated only for a k the data can give).
_TOPK_COUNT_FIRST = 1 << 16
_COMM_KINDS = {"nccl": _lib.COMM_NCCL, "mpi": _lib.COMM_MPI}


def _require_distributed():
    if not _lib.HAS_DISTRIBUTED:
        raise error_for(_BACKEND_UNAVAILABLE,
                        f"gpuprim: this libgpuprim ({_lib.LIBRARY_PATH}) has no distributed calls "
                        "(gpuprim_distributed_*, gpuprim_context_attach_communicator): it predates "
                        "them; install the package again from a newer source tree")


def _communicator_handle(comm, kind):
    """(gpuprim_comm_kind_t, address) for a communicator object: the
    address of an mpi4py communicator's MPI_Comm, or the ncclComm_t of an
    NCCL communicator (an int, CuPy's NcclCommunicator, nccl4py's
    Communicator)."""
    if kind is not None and kind not in _COMM_KINDS:
        raise ValueError(f"gpuprim: kind must be None, 'mpi' or 'nccl', not {kind!r}")
    module = type(comm).__module__.split(".", 1)[0]
    if module == "mpi4py":
        MPI = sys.modules["mpi4py.MPI"]
        if not isinstance(comm, MPI.Comm):
            raise TypeError(f"gpuprim: comm is an mpi4py {type(comm).__name__}, not a "
                            "communicator (MPI.Comm)")
        if kind == "nccl":
            raise ValueError("gpuprim: an mpi4py communicator is an MPI communicator, not kind='nccl'")
        if comm == MPI.COMM_NULL:
            raise ValueError("gpuprim: comm is MPI.COMM_NULL")
        if comm.Is_inter():
            raise ValueError("gpuprim: comm is an intercommunicator; the distributed calls take "
                             "an intracommunicator (e.g. MPI.COMM_WORLD or one from comm.Split())")
        return _lib.COMM_MPI, MPI._addressof(comm)
    # cupy.cuda.nccl.NcclCommunicator (its class lives in cupy_backends.cuda.libs.nccl)
    if module in ("cupy", "cupy_backends") and hasattr(comm, "comm"):
        handle, what = comm.comm, "the CuPy NcclCommunicator"
    elif module == "nccl" and hasattr(comm, "ptr"):  # nccl4py: nccl.core.Communicator
        handle, what = comm.ptr, "the nccl4py Communicator"
    else:
        handle, what = comm, "comm"
    if kind == "mpi" and handle is comm:
        code = _lib.COMM_MPI
    elif kind in (None, "nccl"):
        code = _lib.COMM_NCCL
    else:
        raise ValueError(f"gpuprim: {what} is an NCCL communicator, not kind={kind!r}")
    handle = _integer(handle, "comm must be an mpi4py communicator, an NCCL communicator "
                              "(an int ncclComm_t, CuPy's NcclCommunicator, nccl4py's "
                              "Communicator) or, with kind='mpi', the address of an MPI_Comm")
    if handle == 0:
        raise ValueError(f"gpuprim: {what} is null (0): not initialized, or destroyed")
    if not 0 < handle < (1 << 64):
        raise ValueError(f"gpuprim: {what} must be an address in (0, 2^64), not {handle}")
    return code, handle


# gpuprim_keep_t: the comparisons select and stable_partition take by name.
_KEEP_FLAGGED = 0
_KEEP_OPS = {"<": 1, "<=": 2, ">": 3, ">=": 4, "==": 5, "!=": 6, "in_range": 7, "isnan": 8, "notnan": 9}


def _address_or_0(host):
    return 0 if host is None else _arrays.address(host)


def _same_length(source, values, what):
    """values= of select and friends: 1-D, x's length, kind and device."""
    array = _one_dimensional(_arrays.describe(values, what), what)
    if not _same_place(array, source):
        raise TypeError(f"gpuprim: {what} must be of x's kind and device")
    if array.size != source.size:
        raise ValueError(f"gpuprim: {what} has {array.size} elements, x has {source.size}")
    return array


def _scalar_of(source, value, what, function):
    """value as a one-element host numpy array of x's dtype; ValueError where
    it is not a value of that dtype (an integer x compared with 0.5 or
    with 300 for uint8, a float32 x with np.float64(0.1): numpy would
    compare in another dtype). A Python float or int for a float x is
    rounded to x's dtype, as numpy takes such weakly typed scalars (NEP 50).
    A value that is no number at all: TypeError or ValueError naming it."""
    np = _arrays.numpy()
    name = source.dtype_name
    if isinstance(value, np.ma.MaskedArray):
        _arrays.masked_refusal(value, what)
    try:
        return _scalar_of_dtype(np, source, name, value, what, function)
    except (TypeError, ValueError, OverflowError) as error:
        if str(error).startswith("gpuprim:"):
            raise
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(f"gpuprim: {function}: {what}={value!r:.40} is not a value of x's dtype {name} "
                   f"({error})") from None


def _scalar_of_dtype(np, source, name, value, what, function):
    if name in _INTEGER_DTYPES or name == "bool":
        number = _python_number(value)
        if isinstance(number, float):
            if not number.is_integer():
                raise ValueError(f"gpuprim: {function}: {what}={number!r} is not a value of x's dtype {name}")
            number = int(number)
        if name == "bool":
            if number not in (0, 1):
                raise ValueError(f"gpuprim: {function}: {what}={number!r} is not a bool")
            return np.array([number], dtype=np.uint8)
        info = np.iinfo(_arrays.numpy_dtype(name))
        if not info.min <= number <= info.max:
            raise ValueError(f"gpuprim: {function}: {what}={number!r} is outside {name}'s range")
        return np.array([number], dtype=_arrays.numpy_dtype(name))
    if name == "bfloat16" and source.kind == "torch":
        host = _arrays.host_scalar(name, source.kind)
        if host.dtype == np.uint16:  # no ml_dtypes: the value rounded to bfloat16 by torch, as its bits
            torch = sys.modules["torch"]
            host[0] = torch.tensor([float(_python_number(value))], dtype=torch.bfloat16).view(torch.int16).item() & 0xFFFF
            return host
    number = _python_number(value)
    if isinstance(number, complex) or not isinstance(number, (int, float)):
        raise TypeError(f"not a real number: {type(number).__name__}")
    host = np.array([number], dtype=_arrays.numpy_dtype(name))
    weak = type(value) in (int, float, bool)  # not np.float64, a float subclass
    if not weak and float(host[0]) != float(number) and not math.isnan(number):
        # a typed scalar (np.float64(0.1), a 0-d float64 array or tensor):
        # numpy compares in its dtype, which x's cannot hold it in
        raise ValueError(f"gpuprim: {function}: {what}={number!r} ({type(value).__name__}) is not a value of "
                         f"x's dtype {name}; round it first (np.{name}(value)) or compare in a wider dtype")
    return host


def _predicate(source, mask, op, value, upper, function, mask_name="mask", source_name="x"):
    """(kind, flags Array or None, scalar, upper scalar): gpuprim_predicate_t's fields."""
    if mask is not None:
        if op is not None:
            raise ValueError(f"gpuprim: {function}: pass {mask_name} or op, not both")
        flags = _one_dimensional(_arrays.describe(mask, mask_name), mask_name)
        if flags.dtype_name not in _INTEGER_DTYPES + ("bool",):
            raise TypeError(f"gpuprim: {function}: {mask_name} must be of bool or an integer dtype, not "
                            f"{flags.dtype_name}")
        if not _same_place(flags, source):
            raise TypeError(f"gpuprim: {function}: {mask_name} must be of {source_name}'s kind and device")
        if flags.size != source.size:
            raise ValueError(f"gpuprim: {function}: {mask_name} has {flags.size} elements, {source_name} has "
                             f"{source.size}")
        return _KEEP_FLAGGED, flags, None, None
    if op not in _KEEP_OPS:
        raise ValueError(f"gpuprim: {function}: pass mask, or op as one of {', '.join(_KEEP_OPS)}; "
                         f"not {op!r}")
    kind = _KEEP_OPS[op]
    scalar = high = None
    if kind <= _KEEP_OPS["in_range"]:
        if value is None:
            raise ValueError(f"gpuprim: {function}: op {op!r} compares with value=")
        scalar = _scalar_of(source, value, "value", function)
    if op == "in_range":
        if upper is None:
            raise ValueError(f"gpuprim: {function}: op 'in_range' needs upper= (value <= x < upper)")
        high = _scalar_of(source, upper, "upper", function)
    return kind, None, scalar, high


def _module_of(array):
    return sys.modules[{"numpy": "numpy", "torch": "torch", "cupy": "cupy"}[array.kind]] \
        if array.kind in ("numpy", "torch", "cupy") else None


def _canonical_floats(array, function):
    """A float array with -0.0 made +0.0 and every NaN the one quiet NaN,
    by the array's own library: numpy's unique treats them as one value."""
    obj = array.obj
    if array.kind == "jax":
        import jax.numpy as jnp  # (no `+ 0`: a compiler may drop it, and it is -0.0's fix)
        return jnp.where(jnp.isnan(obj), jnp.nan, jnp.where(obj == 0, jnp.zeros_like(obj), obj))
    module = _module_of(array)
    if module is None:
        raise TypeError(f"gpuprim: {function} of float keys of {array.kind} arrays is not supported (their "
                        "-0.0 and NaNs are made one value first, by the array's own library); pass "
                        "numpy, PyTorch, CuPy or JAX arrays")
    if array.kind == "numpy":
        with module.errstate(invalid="ignore"):  # signaling NaNs: replaced below anyway
            # astype: numpy promotes ml_dtypes' bfloat16 with a Python float to float64
            return module.where(module.isnan(obj), float("nan"), obj + 0).astype(obj.dtype, copy=False)
    return module.where(module.isnan(obj), float("nan"), obj + 0)


def _keyed_values(source, values, function):
    """values= of reduce_by_key and the groupby functions: 1-D, keys' length,
    kind and device."""
    if values is None:
        raise TypeError(f"gpuprim: {function}: values is required (an array of keys' length)")
    array = _one_dimensional(_arrays.describe(values, "values"), "values")
    if not _same_place(array, source):
        raise TypeError(f"gpuprim: {function}: values must be of keys' kind and device")
    if array.size != source.size:
        raise ValueError(f"gpuprim: {function}: values has {array.size} elements, keys has {source.size}")
    return array


def _reduced_values(vals, op, dtype, function):
    """The values a keyed reduction reads: a sum's in _accumulated's dtype
    (integers widened, or dtype), min/max's as they are (no dtype=)."""
    if op == "sum":
        return _accumulated(vals, "sum", dtype)
    if dtype is not None:
        raise ValueError(f"gpuprim: {function}: dtype= is for sums only (min and max keep values' dtype)")
    return vals


def _one_dimensional(array, what):
    if array.ndim != 1:
        raise ValueError(f"gpuprim: {what} has shape {tuple(array.shape)}; this function takes "
                         "1-D arrays (pass axis=-1 to work on every row of a C-contiguous "
                         "array, or flatten it)")
    return array


# ---------------------------------------------------------------------------
# A context's allocator (gpuprim_context_options_t.allocate, experimental).
# ---------------------------------------------------------------------------
_FRAMEWORK_ALLOCATORS = ("torch", "cupy")
_OUT_OF_MEMORY = _lib.STATUS_CODES["OUT_OF_MEMORY"]


class _Allocator:
    """What the library calls (python/src/raw_calls.cpp: allocate(bytes,
    stream) -> address, 0 when it cannot; free(address, bytes, stream)):
    the given allocator, its failure kept as `error` for the error the call
    then raises (the library knows only that it failed)."""

    __slots__ = ("target", "error", "refused")

    def __init__(self, target):
        self.target = target
        self.error = None  # the last allocate's exception, until taken or a later allocate succeeds
        self.refused = None  # the last allocate's answer when it was 0 (no block, no exception)

    def allocate(self, size, stream):
        try:
            answer = self.target.allocate(size, stream)
            if answer is None:
                raise TypeError("gpuprim: the allocator's allocate returned None, not an address")
            address = operator.index(answer)
            if not 0 <= address < (1 << 64):
                raise ValueError(f"gpuprim: the allocator's allocate returned {address}, not an "
                                 "address in [0, 2^64)")
        except Exception as error:  # noqa: BLE001 (the library must see a status, not an exception)
            self.error, self.refused = error, None
            return 0
        self.error, self.refused = None, answer if address == 0 else None
        return address

    def free(self, address, size, stream):
        self.target.free(address, size, stream)  # an exception: sys.unraisablehook (raw_calls.cpp)


class _TorchAllocator:
    """PyTorch's CUDA caching allocator on `device`: the blocks are taken on
    the context's stream (torch reuses a freed block on that stream only, so
    frees are stream-ordered) and counted by torch.cuda.memory_allocated()."""

    def __init__(self, device):
        self.device = device
        self._cuda = None  # torch.cuda, imported by load()

    def load(self):
        if self._cuda is None:
            self._cuda = _framework("torch").cuda
        return self._cuda

    def allocate(self, size, stream):
        _device_stream(stream, "torch")
        # cudaStreamLegacy (1) is the default stream, which torch calls 0
        return self.load().caching_allocator_alloc(size, self.device,
                                                   0 if stream == _CUDA_STREAM_LEGACY else stream)

    def free(self, address, size, stream):
        self._cuda.caching_allocator_delete(address)


class _CupyAllocator:
    """CuPy's current allocator (cupy.cuda.alloc: its memory pool unless
    the program set another) on `device`, with the context's stream as
    CuPy's current stream so that the pool orders the block on it; the
    MemoryPointer is held until the library frees the block."""

    def __init__(self, device):
        self.device = device
        self._cupy = None  # imported by load()
        self._blocks = {}  # address -> cupy.cuda.MemoryPointer

    def load(self):
        if self._cupy is None:
            self._cupy = _framework("cupy")
        return self._cupy

    def allocate(self, size, stream):
        _device_stream(stream, "cupy")
        cupy = self.load()
        target = 0 if stream == _CUDA_STREAM_LEGACY else stream  # CuPy's null stream is 0
        with cupy.cuda.Device(self.device):
            if cupy.cuda.get_current_stream().ptr == target:
                memory = cupy.cuda.alloc(size)
            else:
                with cupy.cuda.Stream.null if target == 0 else cupy.cuda.ExternalStream(target):
                    memory = cupy.cuda.alloc(size)
        self._blocks[memory.ptr] = memory
        return memory.ptr

    def free(self, address, size, stream):
        self._blocks.pop(address, None)  # back to CuPy's pool, on the stream it was taken on


def _device_stream(stream, name):
    """A framework's allocator gives device memory: never to a CPU context
    (whose stream is 0; a CUDA context's never is)."""
    if not stream:
        raise ValueError(f"gpuprim: {name}'s allocator gives device memory, not host memory for a "
                         "CPU context")


def _framework(name):
    try:
        return __import__(name)
    except ImportError as error:
        raise ImportError(f"gpuprim: allocator={name!r} needs {name} ({error})") from error


def _cpu_framework_allocator(allocator, backend):
    found = "" if backend == "cpu" else f" (backend={backend!r} chose the CPU)"
    return (f"gpuprim: allocator={allocator!r} is for CUDA contexts: {allocator}'s allocator gives "
            f"device memory; this context is on the CPU{found}. Pass allocator=None, or an object "
            "with allocate(bytes, stream) and free(address, bytes, stream) giving host memory")


def _allocator_object(allocator, backend, device):
    """The object whose allocate and free the context's memory comes from."""
    if isinstance(allocator, str):
        if allocator not in _FRAMEWORK_ALLOCATORS:
            raise ValueError(f"gpuprim: allocator must be None, 'torch', 'cupy' or an object with "
                             f"allocate and free methods, not {allocator!r}")
        if backend == "cpu":
            raise ValueError(_cpu_framework_allocator(allocator, backend))
        adapter = _TorchAllocator(device) if allocator == "torch" else _CupyAllocator(device)
        if backend == "cuda":
            adapter.load()  # ImportError now; for "auto", once the context is known to be on CUDA
        return adapter
    if not (callable(getattr(allocator, "allocate", None)) and callable(getattr(allocator, "free", None))):
        raise TypeError("gpuprim: allocator must be None, 'torch', 'cupy' or an object with "
                        "allocate(bytes, stream) -> int and free(address, bytes, stream) methods, not "
                        f"{type(allocator).__module__}.{type(allocator).__qualname__}")
    return allocator


# What the library's message says of an allocate that gave no block: the
# status of the C function the package hands the library (1), which a
# Python allocator returning 0 never saw.
_C_REFUSAL = "(it returned 1, no block)"


def _raise_with_cause(status, message, bridge):
    """Raises the error of status with the library's message; an
    OUT_OF_MEMORY one from the allocator's exception that caused it (when
    it raised), or saying that its allocate returned 0."""
    cause = refused = None
    if bridge is not None:
        cause, bridge.error = bridge.error, None
        refused, bridge.refused = bridge.refused, None
    if status == _OUT_OF_MEMORY and cause is None and refused is not None:
        message = message.replace(_C_REFUSAL, f"(its allocate returned {refused!r})")
    error = error_for(status, message)
    if cause is not None and status == _OUT_OF_MEMORY:
        raise error from cause
    raise error


# ---------------------------------------------------------------------------
# Default contexts: one per thread, backend, device, stream and, on CUDA,
# the framework whose allocator the context's memory comes from.
# ---------------------------------------------------------------------------
_local = threading.local()
_MAX_CONTEXTS_PER_THREAD = 16


# Contexts still open when the interpreter exits are closed first, while the
# frameworks whose streams they use are still there: atexit runs handlers
# last-registered first, so the handler is registered again after every new
# CUDA context, i.e. after the framework (imported before its arrays existed)
# registered its own.
_open_contexts = weakref.WeakSet()


def _close_open_contexts():
    for context in list(_open_contexts):
        _close_or_keep(context)
    _close_kept()


# Contexts the package closes on its own (evicted from a thread's cache, or
# at exit) whose stream was capturing a CUDA graph then, which refuses the
# close: kept, and closed at the next eviction or at exit.
_closing_later = []
_closing_lock = threading.Lock()


def _close_or_keep(context):
    try:
        context.close()
    except _lib.NotCapturableError:
        with _closing_lock:
            _closing_later.append(context)


def _close_kept():
    with _closing_lock:
        kept = _closing_later[:]
        del _closing_later[:]
    for context in kept:
        _close_or_keep(context)


def _close_before_the_frameworks():
    atexit.unregister(_close_open_contexts)
    atexit.register(_close_open_contexts)


atexit.register(_close_open_contexts)


def context_for(array) -> Context:
    """The calling thread's context for an operand (an array, or None): the
    one the module-level functions use for it. The CPU backend for host
    arrays (and for None); for CUDA arrays the array's device and its
    framework's current stream, so work is ordered with the framework's own
    (inside ``torch.cuda.graph`` / ``torch.cuda.stream(s)``: that stream),
    and the framework's allocator: ``"torch"`` for CUDA tensors (PyTorch's
    caching allocator), ``"cupy"`` for CuPy arrays (CuPy's memory pool),
    the library's own for other CUDA arrays (DLPack, JAX).

    Example::

        >>> gpuprim.context_for(np.zeros(3)).backend
        'cpu'
    """
    if array is not None and not isinstance(array, _arrays.Array):
        array = _arrays.describe(array, "array")
    contexts = getattr(_local, "contexts", None)
    if contexts is None:
        contexts = _local.contexts = OrderedDict()
    if array is not None and array.on_device:
        stream = _arrays.current_stream(array) or _CUDA_STREAM_LEGACY
        allocator = array.kind if array.kind in _FRAMEWORK_ALLOCATORS else None
        key = (array.device, stream, allocator)
    else:
        key = None
    context = contexts.get(key)
    if context is None or context._handle is None:  # none yet, or closed (e.g. by a with block)
        if key is None:
            context = Context("cpu")
        else:
            context = Context("cuda", device=array.device, stream=key[1], allocator=key[2])
            # A framework may destroy a stream its user dropped (CuPy does);
            # holding its object keeps the stream alive while we use it.
            context._stream_owner = _arrays.current_stream_object(array)
            _close_before_the_frameworks()
        contexts[key] = context
        if len(contexts) > _MAX_CONTEXTS_PER_THREAD:
            _close_kept()
            _close_or_keep(contexts.popitem(last=False)[1])
    return context


def _place(array):
    """Where an operand's memory is, in words."""
    return f"CUDA device {array.device}" if array.on_device else "the CPU"


def _context_for_object(x):
    """context_for() of an array object (the compiled common path's way in)."""
    return context_for(_arrays.describe(x, "x"))


def _raise_status(context, status):
    """Raises the error of a failed library call on context."""
    context._check(status)
    raise AssertionError(f"gpuprim: status {status} is not an error")


def distributed_context(x, comm) -> Context:
    """The calling thread's context for a module-level distributed call on
    x (context_for()), with comm attached. When x cannot be used, the CPU
    context for an mpi4py comm (so the call still joins the other ranks
    and raises there); x's own error otherwise."""
    try:
        array = _arrays.describe(x, "x")
    except (TypeError, ValueError):
        if type(comm).__module__.split(".", 1)[0] != "mpi4py":
            raise
        array = None
    context = context_for(array)
    context._use_communicator(comm)
    return context
