# SPDX-License-Identifier: Apache-2.0
"""What gpuprim needs to know of an array from numpy, PyTorch or CuPy, and how
to make new arrays of the same kind. Arrays are used in place (zero copy);
they must be C-contiguous, of a supported dtype, in native byte order."""
import sys

from . import _lib

SUPPORTED = ", ".join(_lib.DTYPE_CODES)


class Array:
    """One operand: the object, its framework and where its data lives."""

    __slots__ = ("obj", "kind", "ptr", "dtype_name", "size", "on_device", "device", "shape")

    def __init__(self, obj, kind, ptr, dtype_name, size, on_device, device, shape):
        self.obj = obj
        self.kind = kind            # "numpy", "torch" or "cupy"
        self.ptr = ptr              # address of element 0 (0 when empty)
        self.dtype_name = dtype_name
        self.size = size            # elements
        self.on_device = on_device  # CUDA memory
        self.device = device        # CUDA ordinal, -1 for host
        self.shape = shape

    @property
    def code(self):
        return _lib.DTYPE_CODES[self.dtype_name]


def _dtype_name(name, what):
    if name not in _lib.DTYPE_CODES:
        raise TypeError(f"gpuprim: {what} has dtype {name}; supported: {SUPPORTED}")
    return name


_TORCH_DTYPES = None


def _torch_dtype_name(torch, dtype, what):
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        names = {}
        for name in _lib.DTYPE_CODES:
            if hasattr(torch, name):
                names[getattr(torch, name)] = name
        _TORCH_DTYPES = names
    name = _TORCH_DTYPES.get(dtype)
    if name is None:
        raise TypeError(f"gpuprim: {what} has dtype {dtype}; supported: {SUPPORTED}")
    return name


def describe(obj, what):
    """An Array for obj, or TypeError/ValueError saying why it cannot be used."""
    if type(obj) is Array:
        return obj
    module = type(obj).__module__.split(".", 1)[0]
    if module == "numpy":
        np = sys.modules["numpy"]
        if not isinstance(obj, np.ndarray):
            raise TypeError(f"gpuprim: {what} is a {type(obj).__name__}, not an array")
        if not obj.flags.c_contiguous:
            raise ValueError(f"gpuprim: {what} is not C-contiguous; pass np.ascontiguousarray(...)")
        if not obj.dtype.isnative:
            raise TypeError(f"gpuprim: {what} is not in native byte order")
        return Array(obj, "numpy", obj.__array_interface__["data"][0] if obj.size else 0,
                     _dtype_name(obj.dtype.name, what), obj.size, False, -1, obj.shape)
    if module == "torch":
        torch = sys.modules["torch"]
        if not isinstance(obj, torch.Tensor):
            raise TypeError(f"gpuprim: {what} is a {type(obj).__name__}, not a tensor")
        if not obj.is_contiguous():
            raise ValueError(f"gpuprim: {what} is not contiguous; pass tensor.contiguous()")
        name = _torch_dtype_name(torch, obj.dtype, what)
        on_device = obj.is_cuda
        if not on_device and obj.device.type != "cpu":
            raise TypeError(f"gpuprim: {what} is on device {obj.device}; only CPU and CUDA "
                            "tensors are supported")
        size = obj.numel()
        return Array(obj, "torch", obj.data_ptr() if size else 0, name, size, on_device,
                     obj.device.index if on_device else -1, tuple(obj.shape))
    if module == "cupy":
        cupy = sys.modules["cupy"]
        if not isinstance(obj, cupy.ndarray):
            raise TypeError(f"gpuprim: {what} is a {type(obj).__name__}, not an array")
        if not obj.flags.c_contiguous:
            raise ValueError(f"gpuprim: {what} is not C-contiguous; pass cupy.ascontiguousarray(...)")
        return Array(obj, "cupy", obj.data.ptr if obj.size else 0,
                     _dtype_name(obj.dtype.name, what), obj.size, True, obj.device.id, obj.shape)
    raise TypeError(f"gpuprim: {what} is a {type(obj).__module__}.{type(obj).__name__}; "
                    "pass a numpy array, a PyTorch tensor or a CuPy array")


def current_stream(array):
    """The framework's current CUDA stream on the array's device, as an integer."""
    if array.kind == "torch":
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return raw(array.device)
        return torch.cuda.current_stream(array.device).cuda_stream
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        return cupy.cuda.get_current_stream().ptr


def empty_like(array, size=None, dtype_name=None):
    """A new array of the operand's kind and device (1-D when size is given)."""
    dtype_name = dtype_name or array.dtype_name
    if array.kind == "numpy":
        np = sys.modules["numpy"]
        if size is None and dtype_name == array.dtype_name:
            return np.empty_like(array.obj)
        return np.empty(array.shape if size is None else size, dtype=dtype_name)
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
        return sys.modules["numpy"].arange(count, dtype=dtype_name)
    if array.kind == "torch":
        torch = sys.modules["torch"]
        return torch.arange(count, dtype=getattr(torch, dtype_name), device=array.obj.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(array.device):
        return cupy.arange(count, dtype=dtype_name)


def host_scalar(dtype_name):
    """A one-element numpy array to receive a reduction's result."""
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np
    return np.empty(1, dtype=dtype_name)
