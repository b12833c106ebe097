# SPDX-License-Identifier: Apache-2.0
"""What gpuprim needs to know of an array from numpy, PyTorch or CuPy, and how
to make new arrays of the same kind. Arrays are used in place (zero copy);
they must be C-contiguous, of a supported dtype, in native byte order.
Every array a call takes (x, out=, values=, offsets) is read here, by
describe(): what is refused here (masked arrays too) is refused by every
function.

bool arrays are read as the library's uint8 (their bytes are 0 or 1): an
Array of dtype_name "bool" has uint8's code, and new arrays made like it
are bool. Which calls take them, and how, is _core's choice."""
import atexit
import math
import sys
import threading

from . import _lib

_numpy_address = _lib.LIB.numpy_address

# The dtypes arrays may have, by name, with the library's code for each:
# bool as its bytes, uint8.
CODES = dict(_lib.DTYPE_CODES, bool=_lib.DTYPE_CODES["uint8"])
SUPPORTED = ", ".join(CODES)
NUMERIC = ", ".join(_lib.DTYPE_CODES)  # all but bool


class Array:
    """One operand: the object, its framework and where its data lives."""

    __slots__ = ("obj", "kind", "ptr", "dtype_name", "size", "on_device", "device", "ndim",
                 "writeable", "keep", "dims")

    def __init__(self, obj, kind, ptr, dtype_name, size, on_device, device, ndim, writeable=True):
        self.obj = obj
        self.kind = kind            # "numpy", "torch" or "cupy"
        self.ptr = ptr              # address of element 0 (0 when empty)
        self.dtype_name = dtype_name
        self.size = size            # elements
        self.on_device = on_device  # CUDA memory
        self.device = device        # CUDA ordinal, -1 for host
        self.ndim = ndim
        self.writeable = writeable  # False: never written (numpy's flags.writeable)
        self.keep = None            # what must stay alive while the library uses ptr (a DLPack capsule)
        self.dims = None            # the shape, where it is not obj's to read (a DLPack producer's capsule)

    @property
    def code(self):
        return CODES[self.dtype_name]

    @property
    def shape(self):
        dims = self.dims
        return tuple(self.obj.shape) if dims is None else dims


# Reading an array is on every call's path, so the lookups are cached:
# dtype objects to names, array types to the function that reads them.
_DTYPE_NAMES = {}


def numpy():
    """The numpy module (imported on first use)."""
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np
    return np


def numpy_dtype(name):
    """The numpy dtype of a name: bfloat16 is ml_dtypes.bfloat16 (an optional
    package: numpy has none of its own)."""
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError("gpuprim: bfloat16 numpy arrays need the ml_dtypes package "
                            "(pip install ml_dtypes); torch.bfloat16 tensors work without it")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _dtype_name(dtype, what):
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = str(dtype).replace("torch.", "")
        if name not in CODES:
            raise TypeError(f"gpuprim: {what} has dtype {dtype}; supported: {SUPPORTED}")
        _DTYPE_NAMES[dtype] = name
    return name


_DTYPE_SPELLINGS = {}


def dtype_name(dtype, what="dtype"):
    """The name ("int32", "float16", ...) of a dtype spelled any way numpy,
    PyTorch or CuPy spell one: the name ("int32"; numpy's other strings such
    as "i4" too), numpy's scalar type (np.int32), a numpy dtype
    (np.dtype("int32"), x.dtype of a numpy or CuPy array), a PyTorch dtype
    (torch.int32), ml_dtypes.bfloat16. Every dtype= argument goes through
    here; whether a call takes that dtype is the caller's check. TypeError
    for what is no dtype at all (None included: callers give it its meaning)."""
    try:
        return _DTYPE_SPELLINGS[dtype]
    except (KeyError, TypeError):  # TypeError: not hashable
        pass
    name = _spelled(dtype, what)
    try:
        _DTYPE_SPELLINGS[dtype] = name
    except TypeError:
        pass
    return name


def _spelled(dtype, what):
    if isinstance(dtype, str) and dtype in _lib.DTYPE_CODES:
        return dtype  # numpy may not know it ("bfloat16" without ml_dtypes)
    if type(dtype).__module__.split(".", 1)[0] == "torch":  # torch.dtype: "torch.int32"
        return str(dtype).replace("torch.", "")
    if dtype is not None:
        try:
            return numpy().dtype(dtype).name
        except (TypeError, ValueError):
            pass
    raise TypeError(f"gpuprim: {what}={dtype!r} is not a dtype (give it as numpy, PyTorch or "
                    "CuPy does: \"int32\", np.int32, np.dtype(\"int32\"), torch.int32)")


def _numpy(obj, what):
    if not obj.flags.c_contiguous:
        raise ValueError(f"gpuprim: {what} is not C-contiguous; pass np.ascontiguousarray(...)")
    if not obj.flags.aligned:
        raise ValueError(f"gpuprim: {what} is not aligned to its {obj.dtype} elements (e.g. np.frombuffer "
                         "at an odd offset); pass an aligned copy (np.require(a, requirements='A'))")
    dtype = obj.dtype
    if not dtype.isnative:
        raise TypeError(f"gpuprim: {what} is not in native byte order")
    size = obj.size
    return Array(obj, "numpy", address(obj) if size else 0, _dtype_name(dtype, what), size,
                 False, -1, obj.ndim, obj.flags.writeable)


def _torch(obj, what):
    # torch has no read-only tensors (torch.from_numpy of a read-only array
    # warns that writing to it is undefined behaviour): always writeable.
    if not obj.is_contiguous():
        raise ValueError(f"gpuprim: {what} is not contiguous; pass tensor.contiguous()")
    name = _dtype_name(obj.dtype, what)
    on_device = obj.is_cuda
    if not on_device and not obj.is_cpu:
        raise TypeError(f"gpuprim: {what} is on device {obj.device}; only CPU and CUDA "
                        "tensors are supported")
    size = obj.numel()
    return Array(obj, "torch", obj.data_ptr() if size else 0, name, size, on_device,
                 obj.get_device() if on_device else -1, obj.dim())


def _cupy(obj, what):
    # CuPy arrays have no read-only flag: always writeable.
    if not obj.flags.c_contiguous:
        raise ValueError(f"gpuprim: {what} is not C-contiguous; pass cupy.ascontiguousarray(...)")
    size = obj.size
    return Array(obj, "cupy", obj.data.ptr if size else 0, _dtype_name(obj.dtype, what), size,
                 True, obj.device.id, obj.ndim)


def masked_refusal(obj, what):
    # A masked array's data without its mask: the results would be of the
    # masked values too, and come back with the input's mask or none.
    raise TypeError(f"gpuprim: masked arrays are not supported; pass {what}.filled(...) or "
                    f"{what}.compressed() ({what} is a {type(obj).__module__}."
                    f"{type(obj).__name__})")


def _fast_dtype_code(dtype):
    """(library code, is bool) of a numpy or torch dtype object (CuPy's
    dtypes are numpy's) an array may have on the compiled common path
    (_ext.fast_*), or None: not supported, or not in native byte order."""
    if not getattr(dtype, "isnative", True):
        return None
    try:
        name = _dtype_name(dtype, "x")
    except TypeError:
        return None
    return CODES[name], name == "bool"


def address(array):
    """The address of a numpy array's first element (the compiled layer reads
    numpy's data pointer: __array_interface__ builds a dictionary each time)."""
    return _numpy_address(array)


# -- arrays of other frameworks, through DLPack (JAX, or any producer) ----------
_DLPACK_CPU, _DLPACK_CUDA = 1, 2  # DLPack device types
_CUDA_STREAM_LEGACY = 1  # what a DLPack consumer names the legacy default stream
_CODE_NAMES = {code: name for name, code in _lib.DTYPE_CODES.items()}


def _dlpack_kind(obj):
    module = type(obj).__module__.split(".", 1)[0]
    return "jax" if module in ("jax", "jaxlib") else "dlpack"


def _dlpack(obj, what):
    """An array of another framework, through the DLPack protocol: its data
    read in place (never written: the producer's arrays may be immutable, as
    JAX's are). On CUDA the call runs on the legacy default stream, and the
    producer is asked (``__dlpack__(stream=1)``) to order its pending work
    on the array before it."""
    try:
        device_type, device_id = (int(value) for value in tuple(obj.__dlpack_device__())[:2])
    except (TypeError, ValueError) as error:
        raise TypeError(f"gpuprim: {what}.__dlpack_device__() did not give (device type, device id): "
                        f"{error}") from None
    if device_type == _DLPACK_CUDA:
        capsule = _dlpack_capsule(obj, stream=_CUDA_STREAM_LEGACY)
    elif device_type == _DLPACK_CPU:
        capsule = _dlpack_capsule(obj)
    else:
        raise TypeError(f"gpuprim: {what} is on DLPack device type {device_type}; only CPU (1) and "
                        "CUDA (2) memory is supported")
    try:
        (address, shape, code, is_bool, _read_only, contiguous, capsule_type,
         capsule_id) = _lib.LIB.dlpack_view(capsule)
    except (TypeError, ValueError) as error:
        raise type(error)(f"gpuprim: {what}.__dlpack__() gave {error}") from None
    if (capsule_type, capsule_id if device_type == _DLPACK_CUDA else 0) != (
            device_type, device_id if device_type == _DLPACK_CUDA else 0):
        # the memory is where the capsule says; read as the other would be a wild read
        raise ValueError(f"gpuprim: {what}.__dlpack__() gave a tensor on DLPack device ({capsule_type}, "
                         f"{capsule_id}), its __dlpack_device__() says ({device_type}, {device_id})")
    if code < 0:
        raise TypeError(f"gpuprim: {what} has a dtype gpuprim does not support; supported: {SUPPORTED}")
    if not contiguous:
        raise ValueError(f"gpuprim: {what} is not C-contiguous")
    size = 1
    for length in shape:
        size *= length
    on_device = device_type == _DLPACK_CUDA
    array = Array(obj, _dlpack_kind(obj), address if size else 0, "bool" if is_bool else _CODE_NAMES[code],
                  size, on_device, device_id if on_device else -1, len(shape), writeable=False)
    array.keep = capsule
    array.dims = tuple(shape)
    return array


def _dlpack_capsule(obj, **stream):
    """obj.__dlpack__(), asking for a versioned capsule (DLPack 1.x carries
    a read-only flag, so producers such as numpy export their read-only
    arrays; the package only reads them) and, on CUDA, that the producer
    order its pending work before the stream. Producers from before either
    keyword get the call they know."""
    try:
        return obj.__dlpack__(max_version=(1, 0), **stream)
    except TypeError:  # before max_version
        pass
    if not stream:
        return obj.__dlpack__()
    try:
        return obj.__dlpack__(**stream)
    except TypeError:  # before the stream keyword
        return obj.__dlpack__()


def _framework_from_dlpack(obj):
    """The from_dlpack of the top-level module of obj's framework (numpy's
    and PyTorch's spelling: np.from_dlpack, torch.from_dlpack), or None
    when that module has no callable one."""
    module = sys.modules.get(type(obj).__module__.split(".", 1)[0])
    from_dlpack = getattr(module, "from_dlpack", None)
    return from_dlpack if callable(from_dlpack) else None


class Exported:
    """A new output for a DLPack framework's call: a buffer of an export
    context (one per device, _export_context) shared out through DLPack, so
    that JAX (or any consumer) takes it in without a copy once the call has
    written it. result() is the framework's array: JAX's for JAX input; for
    another producer, what its framework's from_dlpack makes of the buffer,
    or (a framework without one) the DLPack array itself."""

    __slots__ = ("array", "address", "shape", "dtype_name", "kind", "device", "from_dlpack",
                 "_result")

    def __init__(self, like, shape, dtype_name, fill_byte=-1):
        """fill_byte 0..255: every byte of the output set so before the call
        (for what the call leaves unwritten)."""
        context = _export_context(like.device)
        status, made = _lib.LIB.export_empty(context, CODES[dtype_name], dtype_name == "bool", tuple(shape),
                                             _DLPACK_CUDA if like.on_device else _DLPACK_CPU,
                                             max(like.device, 0), fill_byte)
        if status == _lib.STATUS_CODES["OVERFLOW"] and math.prod(shape) >= 1 << 64:  # the layer's count, no message
            raise _lib.error_for(status, f"gpuprim: an output of shape {tuple(shape)} has 2^64 elements or more")
        if status:
            raise _lib.error_for(status, _lib.LIB.gpuprim_context_last_error(context) or "")
        self.array, self.address = made
        self.shape, self.dtype_name, self.kind, self.device = tuple(shape), dtype_name, like.kind, like.device
        # like may be an earlier output not yet made (its obj would make it)
        self.from_dlpack = like.exported.from_dlpack if type(like) is _ExportedArray else \
            _framework_from_dlpack(like.obj) if like.kind == "dlpack" else None
        self._result = None

    def result(self):
        """The output as the framework's array: made once, after the work
        writing it has finished (the export does not carry a stream)."""
        if self._result is None:
            _lib.LIB.gpuprim_context_synchronize(_export_context(self.device))
            if self.kind == "jax":
                import jax.dlpack
                self._result = jax.dlpack.from_dlpack(self.array)
            elif self.from_dlpack is not None:
                self._result = self.from_dlpack(self.array)
            else:
                self._result = self.array
        return self._result


def prefix(array, count):
    """The first count elements of an output Array as its framework's array
    (the count-sized results of select and friends): a slice, or for a
    DLPack producer whose framework has no from_dlpack a DLPack array of
    those elements sharing the output's buffer."""
    if type(array) is _ExportedArray:
        exported = array.exported
        if exported.kind != "jax" and exported.from_dlpack is None:
            exported.result()  # waits for the call's work once, as result() does
            return _lib.LIB.export_prefix(exported.array, count)
    return array.obj[:count]


class _ExportedArray(Array):
    """The Array of an Exported output: `obj` is the framework's array, made
    on first use (after the call)."""

    __slots__ = ("exported",)

    @property
    def obj(self):
        return self.exported.result()

    @obj.setter
    def obj(self, value):
        self.exported = value

    @property
    def shape(self):
        return self.exported.shape


def _exported(obj, what):
    size = 1
    for length in obj.shape:
        size *= length
    return _ExportedArray(obj, obj.kind, obj.address if size else 0, obj.dtype_name, size,
                          obj.device >= 0, obj.device, len(obj.shape))


# One context per device (-1: the CPU) for the buffers of exported outputs:
# never one a module-level call may close (the thread's contexts are), closed
# at exit. On CUDA on the legacy default stream, so its synchronize also waits
# for the call that wrote the output (run on that stream: _dlpack).
_EXPORT_CONTEXTS = {}
_EXPORT_LOCK = threading.Lock()


def _export_context(device):
    with _EXPORT_LOCK:
        handle = _EXPORT_CONTEXTS.get(device)
        if handle is None:
            backend = _lib.BACKEND_CPU if device < 0 else _lib.BACKEND_CUDA
            status, handle, message = _lib.LIB.gpuprim_context_create(
                backend, max(device, 0), _CUDA_STREAM_LEGACY if device >= 0 else 0, 0)
            if status:
                raise _lib.error_for(status, message)
            _EXPORT_CONTEXTS[device] = handle
        return handle


@atexit.register
def _close_export_contexts():
    with _EXPORT_LOCK:
        for handle in _EXPORT_CONTEXTS.values():
            _lib.LIB.gpuprim_context_destroy(handle)
        _EXPORT_CONTEXTS.clear()


def _no_writes(array, what):
    raise TypeError(f"gpuprim: {what} on {array.kind} arrays is not supported (it writes into an "
                    "array after the call); pass numpy, PyTorch or CuPy arrays")


_READERS = {}


def describe(obj, what):
    """An Array for obj, or TypeError/ValueError saying why it cannot be used."""
    reader = _READERS.get(type(obj))
    if reader is None:
        if type(obj) is Array:
            return obj
        module = type(obj).__module__.split(".", 1)[0]
        framework = sys.modules.get(module)
        np = sys.modules.get("numpy")  # no numpy array exists before numpy is imported
        ma = sys.modules.get("numpy.ma")
        if ma is not None and isinstance(obj, ma.MaskedArray):
            reader = masked_refusal
        elif np is not None and isinstance(obj, np.ndarray):  # subclasses too, wherever defined
            reader = _numpy
        elif module == "torch" and isinstance(obj, framework.Tensor):
            reader = _torch
        elif module == "cupy" and isinstance(obj, framework.ndarray):
            reader = _cupy
        elif type(obj) is Exported:
            reader = _exported
        elif hasattr(type(obj), "__dlpack__") and hasattr(type(obj), "__dlpack_device__"):
            reader = _dlpack
        else:
            raise TypeError(f"gpuprim: {what} is a {type(obj).__module__}.{type(obj).__name__}; "
                            "pass a numpy array, a PyTorch tensor, a CuPy array, a JAX array or "
                            "another array with the DLPack protocol (__dlpack__)")
        _READERS[type(obj)] = reader
    return reader(obj, what)


def current_stream(array):
    """The framework's current CUDA stream on the array's device, as an integer."""
    if array.kind in ("jax", "dlpack"):
        return _CUDA_STREAM_LEGACY  # what _dlpack asked the producer to order its work before
    if array.kind == "torch":
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return raw(array.device)
        return torch.cuda.current_stream(array.device).cuda_stream
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        return cupy.cuda.get_current_stream().ptr


def current_stream_object(array):
    """The framework's object for its current stream on the array's device."""
    if array.kind in ("jax", "dlpack"):
        return None  # the legacy default stream lives as long as the device
    if array.kind == "torch":
        return sys.modules["torch"].cuda.current_stream(array.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        return cupy.cuda.get_current_stream()


def empty_like(array, size=None, dtype_name=None):
    """A new array of the operand's kind and device (1-D when size is given)."""
    dtype_name = dtype_name or array.dtype_name
    if array.kind in ("jax", "dlpack"):
        return Exported(array, array.shape if size is None else (
            (size,) if isinstance(size, int) else tuple(size)), dtype_name)
    if array.kind == "numpy":
        np = sys.modules["numpy"]
        if size is None and dtype_name == array.dtype_name:
            return np.empty_like(array.obj)
        return np.empty(array.shape if size is None else size, dtype=numpy_dtype(dtype_name))
    if array.kind == "torch":
        torch = sys.modules["torch"]
        if size is None and dtype_name == array.dtype_name:
            return torch.empty_like(array.obj)
        return torch.empty(array.shape if size is None else size,
                           dtype=getattr(torch, dtype_name), device=array.obj.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        if size is None and dtype_name == array.dtype_name:
            return cupy.empty_like(array.obj)
        return cupy.empty(array.shape if size is None else size, dtype=dtype_name)


def arange_like(array, count, dtype_name):
    """0, 1, ..., count-1 as an array of the operand's kind and device."""
    if array.kind == "numpy":
        return sys.modules["numpy"].arange(count, dtype=numpy_dtype(dtype_name))
    if array.kind == "torch":
        torch = sys.modules["torch"]
        return torch.arange(count, dtype=getattr(torch, dtype_name), device=array.obj.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        return cupy.arange(count, dtype=dtype_name)


# The dtype of a sum (and cumsum) when none is given, as the framework's own
# sum gives it: numpy (numpy 2, or 64-bit Linux) and CuPy widen integers
# narrower than 64 bits to int64, unsigned ones to uint64; torch.sum gives
# int64 for every integer dtype narrower than 64 bits.
# A sum of bools counts the True elements, in int64 for every framework.
_NUMPY_SUM = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
              "uint8": "uint64", "uint16": "uint64", "uint32": "uint64"}
_TORCH_SUM = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
              "uint8": "int64", "uint16": "int64", "uint32": "int64"}


def sum_dtype_name(array):
    """The dtype name a sum of the array accumulates and returns in by default."""
    return (_TORCH_SUM if array.kind == "torch" else _NUMPY_SUM).get(array.dtype_name,
                                                                     array.dtype_name)


def convert(array, dtype_name):
    """The operand's values as a new array of dtype_name (same kind, device, stream)."""
    if array.kind == "jax":
        return array.obj.astype(dtype_name)
    if array.kind == "dlpack":
        raise TypeError(f"gpuprim: a {dtype_name} copy of a {type(array.obj).__name__} is not made "
                        "here; cast it first, or pass dtype= of its own dtype")
    if array.kind == "torch":
        torch = sys.modules["torch"]
        return array.obj.to(getattr(torch, dtype_name))
    if array.kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(array.device):
            return array.obj.astype(dtype_name)
    return array.obj.astype(numpy_dtype(dtype_name))


def clamp_bool(obj, kind):
    """Bytes past 1 in a bool array (or in a one-element numpy array: a
    reduction's host result) made 1 (True): a min over bools written as
    uint8 holds uint8's identity, 255, where it had no element (an empty
    row or segment, an exclusive scan's start)."""
    if kind in ("jax", "dlpack"):
        raise TypeError(f"gpuprim: a min over bools of {kind} arrays is not supported (its result "
                        "needs a write after the call); pass x.astype(uint8)")
    if kind == "torch":
        obj.view(sys.modules["torch"].uint8).clamp_(max=1)
    elif kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(obj.device.id):
            bytes_ = obj.view(cupy.uint8)
            cupy.minimum(bytes_, 1, out=bytes_)
    else:
        np = numpy()
        bytes_ = obj.view(np.uint8)
        np.minimum(bytes_, 1, out=bytes_)


def offset_ends(offsets):
    """offsets[0] and offsets[-1] as Python integers (one small copy from a
    device; ordered after the work queued on the framework's current stream)."""
    obj = offsets.obj
    if offsets.kind in ("numpy", "jax", "dlpack"):
        if offsets.kind == "dlpack":
            obj = numpy().from_dlpack(obj) if not offsets.on_device else obj
        return int(obj[0]), int(obj[-1])
    if offsets.kind == "torch":
        torch = sys.modules["torch"]
        # unsigned tensors as their signed twins (tolist() of uint32/uint64 is
        # not in every torch version); valid offsets are far below the sign bit
        signed = {torch.uint32: torch.int32, torch.uint64: torch.int64} \
            if hasattr(torch, "uint64") else {}
        if obj.dtype in signed:
            obj = obj.view(signed[obj.dtype])
        first, last = torch.stack((obj[0], obj[-1])).tolist()
    else:
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(offsets.device):
            first, last = (int(v) for v in cupy.asnumpy(obj[[0, -1]]))
    mask = (1 << (8 * _ITEM_SIZES[offsets.dtype_name])) - 1
    return first & mask, last & mask


# Bytes of one element of each dtype name the package takes.
_ITEM_SIZES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
               "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}


def copy_outside(out, source, first, last):
    """out[:first] = source[:first] and out[last:] = source[last:] of 1-D
    arrays (source None: zeros there): a segmented call's elements outside
    every segment [first, last)."""
    if first <= 0 and last >= out.size:
        return  # every element inside a segment: nothing to write
    if out.kind in ("jax", "dlpack"):
        _no_writes(out, "segment_*")
    target = out.obj
    if first > 0:
        target[:first] = 0 if source is None else source.obj[:first]
    if last < out.size:
        target[last:] = 0 if source is None else source.obj[last:]


def fill(array, value):
    """Every element of the described array set to value (an Exported
    output takes none: make it with fill_byte instead)."""
    if array.kind in ("jax", "dlpack"):
        _no_writes(array, "segment_topk")
    array.obj[...] = value


def itemsize(dtype_name):
    """Bytes of one element of a dtype name."""
    return _ITEM_SIZES[dtype_name]


def empty_scalar(array):
    """A 0-d array of the operand's kind, dtype and device (a reduction's result)."""
    if array.kind in ("jax", "dlpack"):
        return Exported(array, (), array.dtype_name)
    if array.kind == "torch":
        return array.obj.new_empty(())
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        return cupy.empty((), dtype=array.dtype_name)


def scalar_result(array, host):
    """A reduction's result from the one-element numpy array `host`: a numpy
    scalar for numpy input, a 0-d tensor / array of the input's kind (on the
    input's device for CUDA input) otherwise."""
    if array.kind == "torch":
        torch = sys.modules["torch"]
        if array.dtype_name == "bfloat16":  # numpy has no bfloat16: the bits as uint16
            result = torch.from_numpy(host.view(numpy_dtype("uint16"))).view(
                torch.bfloat16).reshape(())
        else:
            result = torch.from_numpy(host).reshape(())
        return result.to(array.obj.device) if array.on_device else result
    if array.kind == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(array.device):
            return cupy.asarray(host.reshape(()))
    if array.kind == "jax":  # (bfloat16 too: JAX brings ml_dtypes, whose bfloat16 host holds)
        import jax.numpy
        return jax.numpy.asarray(host.reshape(()))
    return host[0]


def host_scalar(dtype_name, kind="numpy"):
    """A one-element numpy array to receive a reduction's result (for a
    torch bfloat16 result, without ml_dtypes: its bits as uint16)."""
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np
    if dtype_name == "bfloat16" and kind == "torch":
        return np.empty(1, dtype=np.uint16)
    return np.empty(1, dtype=numpy_dtype(dtype_name))
