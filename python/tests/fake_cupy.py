# SPDX-License-Identifier: Apache-2.0
"""A numpy stand-in for the little of CuPy that the compiled common path
(python/src/fast_calls.cpp) reads and calls, and that path's tests on it:
cupy.ndarray (its constructor, shape, strides, dtype, data.ptr and
data.device_id; no __cuda_array_interface__, which the path does not read);
cupy.empty, empty_like; cupy.cuda.runtime.getDevice and
cupy.cuda.get_current_stream. Its "device memory" is host memory, so the
path runs on the CPU backend (the fast path is given a CPU context) where
there is no GPU or no CuPy; the checks are test_extension.py's, which runs
them on real CuPy arrays on a GPU.

Not collected by the package's test run: test_extension.py runs this file
in an interpreter of its own (python -m pytest fake_cupy.py), since the
compiled layer keeps the first cupy module it sees for the process."""
import sys
import types

import numpy as np
import pytest

# What CuPy would report: the current device, and the current stream's
# pointer (0: the null stream).
state = types.SimpleNamespace(device=0, stream=0)


class ndarray:  # noqa: N801 (CuPy's name)
    """A "CUDA array" over a numpy array on a device. ndarray(shape, dtype)
    makes a new one on the current device, as CuPy's constructor does;
    _wrap(a, device) wraps a numpy array. strides_override: strides (bytes)
    to report instead of the numpy array's."""

    def __init__(self, shape, dtype=float):
        self._a = np.empty(shape, dtype)
        self._device = state.device
        self.strides_override = None

    dtype = property(lambda self: self._a.dtype)
    shape = property(lambda self: self._a.shape)
    strides = property(lambda self: self._a.strides if self.strides_override is None else self.strides_override)
    size = property(lambda self: self._a.size)
    data = property(lambda self: types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0],
                                                        device_id=self._device))
    device = property(lambda self: types.SimpleNamespace(id=self._device))

    def __getitem__(self, index):
        return _wrap(self._a[index], self._device)

    def reshape(self, *shape):
        return _wrap(self._a.reshape(*shape), self._device)

    def astype(self, dtype):
        return _wrap(self._a.astype(dtype), self._device)

    def view(self, dtype=None, type=None):  # noqa: A002 (CuPy's name)
        return _wrap(self._a if dtype is None else self._a.view(dtype), self._device, type or ndarray)


def _wrap(a, device=None, cls=ndarray):
    array = cls.__new__(cls)
    array._a = a
    array._device = state.device if device is None else device
    array.strides_override = None
    return array


def asarray(a):
    return _wrap(np.array(a))


def asnumpy(x):
    return x._a.copy() if isinstance(x, ndarray) else np.asarray(x)


def empty(shape, dtype=float):
    return ndarray(shape, dtype)


def empty_like(x):
    return ndarray(x.shape, x.dtype)


cupy = types.ModuleType("cupy")
cupy.__dict__.update(ndarray=ndarray, asarray=asarray, asnumpy=asnumpy, empty=empty, empty_like=empty_like,
                     float32=np.float32, complex64=np.complex64, int64=np.int64)
cupy.cuda = types.SimpleNamespace(
    runtime=types.SimpleNamespace(getDevice=lambda: state.device),
    get_current_stream=lambda: types.SimpleNamespace(ptr=state.stream))
assert "cupy" not in sys.modules, "fake_cupy runs in an interpreter of its own"
sys.modules["cupy"] = cupy

import gpuprim  # noqa: E402
from gpuprim import _arrays, _core, _ext  # noqa: E402
from test_extension import DTYPES, check_cupy_common_path, check_cupy_declines, sample  # noqa: E402


@pytest.fixture(autouse=True)
def cpu_context():
    """The common path's context for fake arrays, a CPU one (their memory is
    the host's); the current device and stream back to 0 afterwards."""
    with gpuprim.Context("cpu") as context:
        _ext.fast_init(_arrays._fast_dtype_code, _core._fast_index_code, lambda x: context,
                       _core._raise_status)
        try:
            yield context
        finally:
            _ext.fast_init(_arrays._fast_dtype_code, _core._fast_index_code, _core._context_for_object,
                           _core._raise_status)
            state.device = state.stream = 0


def numpy_results(result):
    return tuple(map(asnumpy, result)) if isinstance(result, tuple) else asnumpy(result)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (1000,), (7, 33)])
def test_common_path_matches_the_general_path(cpu_context, dtype, shape):
    x = sample(dtype, shape)
    state.stream = 0x5000  # a side stream, CuPy's current one
    def general(name, *args, **options):  # the general path on x's numpy original
        return numpy_results(getattr(cpu_context, name)(x, *args, **options))
    check_cupy_common_path(cupy, asarray(x), general)


def test_declines():
    check_cupy_declines(cupy)


def test_each_current_stream_has_its_context():
    """The call takes CuPy's current stream (the general path's): the
    thread's contexts are kept by stream, so a new current stream looks its
    context up (here: a CPU one for every stream) and the same stream finds
    it again."""
    x = np.arange(10, 0, -1, dtype=np.int32)
    a = asarray(x)
    looked_up = []
    with gpuprim.Context("cpu") as context:
        _ext.fast_init(_arrays._fast_dtype_code, _core._fast_index_code,
                       lambda array: looked_up.append(state.stream) or context, _core._raise_status)
        for stream in (0x5000, 0x5000, 0x6000, 0, 0x5000, 0):
            state.stream = stream
            np.testing.assert_array_equal(asnumpy(_ext.fast_sort(a, -1, False, None)), np.sort(x))
    assert looked_up == [0x5000, 0x6000, 0]


def test_arrays_off_the_current_device_decline():
    a = asarray(np.arange(4, dtype=np.float32))
    state.device = 1  # the general path makes its outputs on a's device (0): no shortcut here
    assert _ext.fast_sort(a, -1, False, None) is None
    assert _ext.fast_reduce(_ext.OP_MAX, a, None) is None
    state.device = 0
    assert _ext.fast_sort(a, -1, False, None) is not None
    # out= on another device than x (read without the device lookup: x's is compared)
    assert _ext.fast_sort(a, -1, False, _wrap(np.empty(4, np.float32), device=1)) is None
    assert _ext.fast_reduce(_ext.OP_MAX, a, None, _wrap(np.empty((), np.float32), device=1)) is None
    assert _ext.fast_reduce(_ext.OP_MAX, a.reshape(2, 2), -1, _wrap(np.empty(2, np.float32), device=1)) is None
    out = _wrap(np.empty(4, np.float32), device=0)
    assert _ext.fast_sort(a, -1, False, out) is out


def test_strides_that_are_c_contiguous_are_taken():
    x = np.arange(12, dtype=np.float32)[::-1].reshape(3, 1, 4).copy()
    a = asarray(x)
    a.strides_override = (16, 999, 4)  # bytes; any stride on the length-1 axis
    np.testing.assert_array_equal(asnumpy(_ext.fast_sort(a, -1, False, None)), np.sort(x, axis=-1))
    a.strides_override = (16, 16, 8)  # not C-contiguous
    assert _ext.fast_sort(a, -1, False, None) is None


def test_bfloat16_is_read_by_its_dtype(cpu_context):
    """x.dtype names bfloat16 (CuPy's arrays of ml_dtypes.bfloat16); a
    2-byte void of the same bits is not a dtype of ours."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 numpy arrays need ml_dtypes")
    x = sample(np.float32, (5, 40)).astype(ml_dtypes.bfloat16)
    a = asarray(x)

    def bits(array):  # numpy's testing takes bfloat16 NaNs as unequal
        return asnumpy(array).view(np.uint16)
    for fast, general in ((_ext.fast_sort(a, -1, True, None), cpu_context.sort(x, axis=-1, descending=True)),
                          (_ext.fast_reduce(_ext.OP_SUM, a, -1), cpu_context.sum(x, axis=-1)),
                          (_ext.fast_reduce(_ext.OP_MAX, a, None), cpu_context.max(x))):
        assert type(fast) is ndarray and fast.dtype == x.dtype
        np.testing.assert_array_equal(bits(fast), bits(general))
    assert _ext.fast_sort(a.view(np.dtype("V2")), -1, False, None) is None  # the same typestr, no dtype of ours
