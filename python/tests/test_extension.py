# SPDX-License-Identifier: Apache-2.0
"""The compiled layer (gpuprim._ext): its constants match gpuprim.h, the
package has no ctypes left, and the common path (fast_*) gives exactly what
the general path gives, declining what it does not handle: on numpy arrays,
on CuPy arrays on a GPU (skipped without CuPy or a CUDA device), and on
fake_cupy.py's numpy-backed stand-in for CuPy everywhere."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gpuprim
from gpuprim import _arrays, _ext, _lib

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "..", "include", "gpuprim", "gpuprim.h")
PACKAGE = os.path.join(HERE, "..", "gpuprim")


def header_enum(prefix):
    """{NAME: value} of gpuprim.h's enumerators starting with prefix."""
    text = open(HEADER).read()
    return {name: int(value) for name, value in
            re.findall(r"\b" + prefix + r"(\w+)\s*=\s*(\d+)", text)}


def test_constants_match_the_header():
    statuses = header_enum("GPUPRIM_ERROR_")
    assert statuses and _lib.STATUS_CODES == statuses
    dtypes = header_enum("GPUPRIM_DTYPE_")
    short = {"I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F32": "float32",
             "F64": "float64", "F16": "float16", "BF16": "bfloat16", "I8": "int8", "U8": "uint8",
             "I16": "int16", "U16": "uint16"}
    assert {short[name]: code for name, code in dtypes.items()} == _lib.DTYPE_CODES
    assert header_enum("GPUPRIM_OP_") == {"SUM": _ext.OP_SUM, "MIN": _ext.OP_MIN, "MAX": _ext.OP_MAX}
    assert header_enum("GPUPRIM_COMM_") == {"NCCL": _ext.COMM_NCCL, "MPI": _ext.COMM_MPI}


def test_raw_enum_arguments_are_never_cut_to_another_value():
    # An int the C ABI carries reaches the library (INVALID_ENUM for one that
    # names no value); one past an int is refused (it was cut: 2**32 ran as
    # SUM, 0).
    with gpuprim.Context("cpu") as ctx:
        status, buffer = _lib.LIB.gpuprim_buffer_create(ctx._handle, _lib.DTYPE_CODES["int32"], 4)
        assert status == 0
        invalid_enum = _lib.STATUS_CODES["INVALID_ENUM"]
        for op in (99, -1, 2**31 - 1):
            assert _lib.LIB.gpuprim_scan(ctx._handle, op, 0, buffer, buffer) == invalid_enum
        for op in (2**31, 2**32, -2**31 - 1, 2**40):
            with pytest.raises(ValueError, match="does not fit a C int"):
                _lib.LIB.gpuprim_scan(ctx._handle, op, 0, buffer, buffer)
        assert _lib.LIB.gpuprim_buffer_destroy(ctx._handle, buffer) == 0


def test_no_ctypes_in_the_package():
    for name in os.listdir(PACKAGE):
        if name.endswith(".py"):
            source = open(os.path.join(PACKAGE, name)).read()
            assert not re.search(r"^\s*(import ctypes|from ctypes)", source, re.M), name
            assert ".ctypes" not in source, name


def test_numpy_address_is_the_data_pointer():
    """_ext.numpy_address (what _arrays.address reads) gives numpy's own
    data pointer for arrays, views at an offset, subclasses and empty arrays,
    and refuses anything that is not a numpy array."""
    base = np.arange(64, dtype=np.float32)
    for array in (base, base[5:], base[::-1], base.reshape(8, 8)[2], np.matrix([[1, 2]]),
                  np.empty(0, np.int8), np.zeros((), np.uint16)):
        assert _ext.numpy_address(array) == array.__array_interface__["data"][0]
        assert _arrays.address(array) == _ext.numpy_address(array)
    for other in ([1, 2], np.float32(1.0), memoryview(b"ab")):
        with pytest.raises(TypeError, match="not a numpy array"):
            _ext.numpy_address(other)
    with pytest.raises(TypeError):  # refused by the binding itself
        _ext.numpy_address(None)


def test_library_path_is_the_loaded_one():
    assert _ext.library_path() == gpuprim.LIBRARY_PATH


DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.bool_]


def sample(dtype, shape, seed=3):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.floating):
        x = rng.standard_normal(shape).astype(dtype)
        flat = x.reshape(-1)
        special = np.array([np.nan, -0.0, 0.0, np.inf], dtype)  # the sort's float rules
        flat[:special.size] = special[:flat.size]
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (1000,), (7, 33)])
def test_common_path_matches_the_general_path(dtype, shape):
    x = sample(dtype, shape)
    general = gpuprim.Context("cpu")
    axis = -1
    for descending in (False, True):
        fast = _ext.fast_sort(x, axis, descending, None)
        assert fast is not None  # taken
        np.testing.assert_array_equal(fast, general.sort(x, axis=-1, descending=descending))
        assert fast.dtype == x.dtype
        indices = _ext.fast_argsort(x, axis, descending, None)
        assert indices is not None and indices.dtype == np.int64
        np.testing.assert_array_equal(indices, general.argsort(x, axis=-1, descending=descending))
    k = min(3, shape[-1])
    values, indices = _ext.fast_topk(x, k, True, axis, None)
    expected = general.topk(x, k, axis=-1)
    np.testing.assert_array_equal(values, expected[0])
    np.testing.assert_array_equal(indices, expected[1])
    # dtype= of the indices, in each spelling the general path takes
    for index in ("int32", np.uint32, np.dtype("int64"), "uint64"):
        name = np.dtype(index).name
        indices = _ext.fast_argsort(x, axis, False, index)
        assert indices is not None and indices.dtype == np.dtype(index)
        np.testing.assert_array_equal(indices, general.argsort(x, axis=-1, dtype=name))
        values, indices = _ext.fast_topk(x, k, False, axis, index)
        assert indices.dtype == np.dtype(index)
        expected = general.topk(x, k, largest=False, axis=-1, dtype=name)
        np.testing.assert_array_equal(values, expected[0])
        np.testing.assert_array_equal(indices, expected[1])
    for op, name in ((_ext.OP_MIN, "min"), (_ext.OP_MAX, "max"), (_ext.OP_SUM, "sum")):
        for reduce_axis in (None, -1):
            fast = _ext.fast_reduce(op, x, reduce_axis)
            if dtype == np.bool_ or (op == _ext.OP_SUM and dtype not in
                                     (np.float32, np.float64, np.float16, np.int64, np.uint64)):
                assert fast is None  # bools, and sums that widen: the general path
                continue
            expected = getattr(general, name)(x, axis=reduce_axis)
            np.testing.assert_array_equal(fast, expected)
            assert type(fast) is type(expected)
    general.close()


def test_common_path_declines_what_it_does_not_handle():
    x = np.arange(12, dtype=np.float32)
    assert _ext.fast_sort(x[::2], -1, False, None) is None           # not contiguous
    assert _ext.fast_sort(x.reshape(3, 4), None, False, None) is None  # axis=None of 2-D
    assert _ext.fast_sort(x.reshape(3, 4), 0, False, None) is None     # another axis
    assert _ext.fast_sort(x[:0], -1, False, None) is None             # empty
    assert _ext.fast_sort(np.float32(1), -1, False, None) is None     # not an array
    assert _ext.fast_sort(x, -1, 1, None) is None                     # descending not a bool
    assert _ext.fast_sort(x.view(np.matrix), -1, False, None) is None  # a subclass
    assert _ext.fast_sort(x.astype(">f4"), -1, False, None) is None   # byte order
    assert _ext.fast_sort(x.astype(np.complex64), -1, False, None) is None
    assert _ext.fast_sort(x, -1, False, np.empty(12, np.float64)) is None    # out's dtype
    assert _ext.fast_sort(x.reshape(3, 4), -1, False, np.empty((4, 3), np.float32)) is None
    frozen = np.empty(12, np.float32)
    frozen.flags.writeable = False
    assert _ext.fast_sort(x, -1, False, frozen) is None                # read-only out
    assert _ext.fast_topk(x, 13, True, -1, None) is None               # k past the length
    assert _ext.fast_topk(x, 0, True, -1, None) is None
    for index in ("float32", np.int16, "bool", "not a dtype"):            # not an index dtype
        assert _ext.fast_argsort(x, -1, False, index) is None
        assert _ext.fast_topk(x, 3, True, -1, index) is None
    # and the general path then says why, as before
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.sort(x[::2])
    with pytest.raises(ValueError, match="read-only"):
        gpuprim.sort(x, out=frozen)
    with pytest.raises(gpuprim.InvalidArgumentError, match="k = 13"):
        gpuprim.topk(x, 13)
    with pytest.raises(TypeError, match="index dtype must be one of"):
        gpuprim.argsort(x, dtype=np.int16)
    with pytest.raises(TypeError, match="index dtype must be one of"):
        gpuprim.topk(x, 3, dtype="float32")


# -- CuPy: the checks run on real CuPy arrays (below) and on fake_cupy.py's ----


def keeps_its_dtype(op, dtype):
    """Whether the common path takes reduction op of a dtype: not bools, and
    sums only of dtypes a sum keeps (narrower integers widen: a cast)."""
    return dtype != np.bool_ and (op != _ext.OP_SUM or dtype in (np.float32, np.float64, np.float16,
                                                                 np.int64, np.uint64))


def check_cupy_common_path(cupy, a, expected):
    """fast_* on the CuPy array a (1-D, or rows along the last axis) against
    expected(name, *args, **options): the general path's result of
    Context.<name> on a's values, as numpy arrays. The common path must take
    every call; its outputs are CuPy arrays (made by CuPy) on a's device,
    and out= is written and returned."""
    def taken(result):
        assert result is not None  # the common path took the call
        for array in result if isinstance(result, tuple) else (result,):
            assert type(array) is cupy.ndarray and array.device.id == a.device.id
        return result
    dtype = a.dtype.type
    for descending in (False, True):
        want = expected("sort", axis=-1, descending=descending)
        fast = taken(_ext.fast_sort(a, -1, descending, None))
        assert fast.dtype == a.dtype and fast.shape == a.shape
        np.testing.assert_array_equal(cupy.asnumpy(fast), want)
        out = cupy.empty_like(a)
        assert _ext.fast_sort(a, -1, descending, out) is out
        np.testing.assert_array_equal(cupy.asnumpy(out), want)
        indices = taken(_ext.fast_argsort(a, -1, descending, None))
        assert indices.dtype == np.int64 and indices.shape == a.shape
        np.testing.assert_array_equal(cupy.asnumpy(indices), expected("argsort", axis=-1, descending=descending))
    indices = taken(_ext.fast_argsort(a, -1, False, "int32"))
    assert indices.dtype == np.int32
    np.testing.assert_array_equal(cupy.asnumpy(indices), expected("argsort", axis=-1, dtype="int32"))
    k = min(3, a.shape[-1])
    for largest in (True, False):
        values, indices = taken(_ext.fast_topk(a, k, largest, -1, None))
        want_values, want_indices = expected("topk", k, largest=largest, axis=-1)
        assert values.dtype == a.dtype and indices.dtype == np.int64
        np.testing.assert_array_equal(cupy.asnumpy(values), want_values)
        np.testing.assert_array_equal(cupy.asnumpy(indices), want_indices)
    for op, name in ((_ext.OP_MIN, "min"), (_ext.OP_MAX, "max"), (_ext.OP_SUM, "sum")):
        for axis in (None, -1):
            fast = _ext.fast_reduce(op, a, axis)
            if not keeps_its_dtype(op, dtype):
                assert fast is None  # bools, and sums that widen: the general path
                continue
            taken(fast)
            assert fast.dtype == a.dtype and fast.shape == (() if axis is None else a.shape[:-1])
            want = expected(name, axis=axis)
            np.testing.assert_array_equal(cupy.asnumpy(fast), want)
            out = cupy.empty(fast.shape, a.dtype)
            assert _ext.fast_reduce(op, a, axis, out) is out
            np.testing.assert_array_equal(cupy.asnumpy(out), want)


def check_cupy_declines(cupy):
    """What the common path leaves to the general path on CuPy arrays, as on
    numpy arrays and torch tensors."""
    class Subclass(cupy.ndarray):
        pass
    a = cupy.asarray(np.arange(12, dtype=np.float32))
    rows = a.reshape(3, 4)
    assert _ext.fast_sort(a, -1, False, None) is not None  # (the path is there)
    assert _ext.fast_sort(a[::2], -1, False, None) is None             # not contiguous
    assert _ext.fast_sort(rows, None, False, None) is None             # axis=None of 2-D
    assert _ext.fast_sort(rows, 0, False, None) is None                # another axis
    assert _ext.fast_sort(a[:0], -1, False, None) is None              # empty
    assert _ext.fast_sort(a, -1, 1, None) is None                      # descending not a bool
    assert _ext.fast_sort(a.view(type=Subclass), -1, False, None) is None  # a subclass
    assert _ext.fast_sort(a.astype(np.complex64), -1, False, None) is None  # dtype
    assert _ext.fast_sort(a, -1, False, cupy.empty(12, np.float64)) is None   # out's dtype
    assert _ext.fast_sort(rows, -1, False, cupy.empty((4, 3), np.float32)) is None  # out's shape
    assert _ext.fast_sort(a, -1, False, np.empty(12, np.float32)) is None     # out of another kind
    assert _ext.fast_sort(a, -1, False, cupy.empty(24, np.float32)[::2]) is None  # strided out
    assert _ext.fast_argsort(a[::2], -1, False, None) is None
    assert _ext.fast_topk(a, 13, True, -1, None) is None                    # k past the length
    assert _ext.fast_topk(a, 0, True, -1, None) is None
    assert _ext.fast_topk(rows, 5, True, -1, None) is None                  # k past the rows' length
    assert _ext.fast_reduce(_ext.OP_MAX, a[::2], None) is None
    assert _ext.fast_reduce(_ext.OP_MAX, rows, -1, cupy.empty(4, np.float32)) is None  # out's shape
    assert _ext.fast_reduce(_ext.OP_MAX, a, None, cupy.empty(1, np.float32)) is None   # not 0-d
    assert _ext.fast_reduce(_ext.OP_MAX, a, None, np.empty((), np.float32)) is None    # another kind
    assert _ext.fast_reduce(_ext.OP_SUM, a.astype(np.int32), None) is None              # a sum that widens


def gpu_cupy():
    """CuPy with a CUDA device; the test skips, saying which is missing, otherwise."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # no driver, or one too old for this CuPy
        pytest.skip(f"no CUDA device for CuPy ({type(error).__name__}: {error})")
    if count == 0:
        pytest.skip("no CUDA device for CuPy")
    return cupy


def cupy_results(cupy, result):
    return tuple(map(cupy.asnumpy, result)) if isinstance(result, tuple) else cupy.asnumpy(result)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (1000,), (7, 33)])
def test_cupy_common_path_matches_the_general_path(dtype, shape):
    cupy = gpu_cupy()
    a = cupy.asarray(sample(dtype, shape))
    general = gpuprim.context_for(_arrays.describe(a, "x"))  # the context both paths use
    check_cupy_common_path(cupy, a, lambda name, *args, **options: cupy_results(
        cupy, getattr(general, name)(a, *args, **options)))


def test_cupy_common_path_declines_what_it_does_not_handle():
    cupy = gpu_cupy()
    check_cupy_declines(cupy)
    # and the general path then says why, as before
    a = cupy.arange(12, dtype=cupy.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.sort(a[::2])
    with pytest.raises(gpuprim.InvalidArgumentError, match="k = 13"):
        gpuprim.topk(a, 13)
    if cupy.cuda.runtime.getDeviceCount() > 1:  # an array off the current device: the general path
        with cupy.cuda.Device(1):
            other = cupy.arange(5, 0, -1, dtype=cupy.float32)
        assert _ext.fast_sort(other, -1, False, None) is None
        result = gpuprim.sort(other)
        assert result.device.id == 1
        np.testing.assert_array_equal(cupy.asnumpy(result), [1, 2, 3, 4, 5])


def test_cupy_common_path_runs_on_the_current_stream_with_cupys_memory():
    """CuPy work queued on a side stream, then the common path's calls with
    no synchronization between: they run on that stream (CuPy's current
    one, which its array interface names too), after it; the outputs come
    from CuPy's memory pool."""
    cupy = gpu_cupy()
    n = 1 << 22
    spin = cupy.RawKernel(r"""extern "C" __global__ void spin(long long cycles) {
        long long start = clock64();
        while (clock64() - start < cycles) {}
    }""", "spin")
    stream = cupy.cuda.Stream(non_blocking=True)
    pool = cupy.get_default_memory_pool()
    with stream:
        a = cupy.zeros(n, dtype=cupy.int64)
        spin((1,), (1,), (np.int64(200_000_000),))  # ~0.1 s on the stream: calls not after it would see zeros
        a.fill(1)
        used = pool.used_bytes()
        total = _ext.fast_reduce(_ext.OP_SUM, a, None)
        ordered = _ext.fast_sort(a, -1, True, None)
        assert pool.used_bytes() - used >= ordered.nbytes + total.nbytes
        assert a.__cuda_array_interface__["stream"] == stream.ptr
        assert gpuprim.context_for(_arrays.describe(a, "a")).stream == stream.ptr
    stream.synchronize()
    assert int(total) == n
    assert int(ordered.min()) == 1 and int(ordered.max()) == 1


def test_cupy_common_path_on_a_numpy_stand_in():
    """fake_cupy.py's tests (these checks on a numpy-backed CuPy, CPU
    backend), in an interpreter of their own: the compiled layer keeps the
    first cupy module a process shows it."""
    fake = os.path.join(HERE, "fake_cupy.py")
    # The package this process imported (the installed one in CI, the source
    # tree under ctest), not whatever python/ holds: the child must see the
    # same gpuprim, compiled layer included.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(gpuprim.__file__)))
    path = os.pathsep.join(p for p in (package_root, HERE, os.environ.get("PYTHONPATH")) if p)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", HERE,
                             fake], env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout, result.stdout[-2000:]


def test_a_framework_imported_after_the_first_calls_is_found():
    """The common path looks for the frameworks it has not found once per
    change in the number of imported modules: CuPy (fake_cupy.py's
    stand-in) imported after calls on numpy arrays is read on the next
    call, in an interpreter of its own."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(gpuprim.__file__)))
    path = os.pathsep.join(p for p in (package_root, HERE, os.environ.get("PYTHONPATH")) if p)
    script = "\n".join([
        "import sys",
        "import numpy as np",
        "import gpuprim",
        "from gpuprim import _arrays, _core, _ext",
        "x = np.array([3, 1, 2], np.float32)",
        "for _ in range(3):",
        "    assert type(_ext.fast_sort(x, -1, False, None)) is np.ndarray",
        "assert 'cupy' not in sys.modules",
        "import fake_cupy",
        "with gpuprim.Context('cpu') as context:",
        "    _ext.fast_init(_arrays._fast_dtype_code, _core._fast_index_code, lambda a: context,",
        "                   _core._raise_status)",
        "    result = _ext.fast_sort(fake_cupy.asarray(x), -1, False, None)",
        "    assert type(result) is fake_cupy.ndarray, result",
        "    np.testing.assert_array_equal(fake_cupy.asnumpy(result), [1, 2, 3])",
        "print('found')",
    ])
    result = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=path),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "found" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]


def test_torch_common_path_matches_the_general_path():
    """fast_* on CPU torch tensors (skipped without torch), read through
    torch's DLPack C exchange table (torch >= 2.10) and through
    torch._C._to_dlpack: the general path's results, of torch's kind."""
    torch = pytest.importorskip("torch")
    general = gpuprim.Context("cpu")
    has_table = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    x = torch.from_numpy(sample(np.float32, (5, 40)))
    leaf = x.clone().requires_grad_(True)  # read as its values (torch.sort's too)
    try:
        for use in (True, False):
            assert _ext.fast_use_torch_exchange(use) == (use and has_table)
            for a in (x, x[1], leaf):
                expected = general.sort(a.detach().numpy(), axis=-1, descending=True)
                sorted_ = _ext.fast_sort(a, -1, True, None)
                assert type(sorted_) is torch.Tensor
                np.testing.assert_array_equal(sorted_.numpy(), expected)
                out = torch.empty_like(x[0]) if a.dim() == 1 else torch.empty_like(x)
                assert _ext.fast_sort(a, -1, True, out) is out
                np.testing.assert_array_equal(out.numpy(), expected)
                for index, torch_dtype in ((None, torch.int64), ("int32", torch.int32), (torch.int32, torch.int32)):
                    indices = _ext.fast_argsort(a, -1, False, index)
                    assert indices.dtype == torch_dtype
                    name = "int64" if index is None else "int32"
                    np.testing.assert_array_equal(indices.numpy(),
                                                  general.argsort(a.detach().numpy(), axis=-1, dtype=name))
                    values, indices = _ext.fast_topk(a, 4, True, -1, index)
                    want = general.topk(a.detach().numpy(), 4, axis=-1, dtype=name)
                    np.testing.assert_array_equal(values.numpy(), want[0])
                    np.testing.assert_array_equal(indices.numpy(), want[1])
                if a.dim() == 2:  # (a CPU tensor's 0-d result takes the general path)
                    largest = _ext.fast_reduce(_ext.OP_MAX, a, -1)
                    np.testing.assert_array_equal(largest.numpy(), general.max(a.detach().numpy(), axis=-1))
            assert _ext.fast_sort(x[:, ::2], -1, False, None) is None      # not contiguous
            assert _ext.fast_sort(x.t(), -1, False, None) is None          # transposed
            assert _ext.fast_sort(x.to(torch.complex64), -1, False, None) is None
            assert _ext.fast_argsort(x, -1, False, torch.float32) is None   # not an index dtype
    finally:
        _ext.fast_use_torch_exchange(True)
        general.close()


def test_torch_outputs_through_the_exchange_table(monkeypatch):
    """With torch's DLPack C exchange table, the common path makes its torch
    outputs with the table's allocator (torch.Tensor.new_empty, the Python
    way it takes without one, is made to fail here): plain C-contiguous
    tensors of the dtype, shape and device the general path gives, not
    requiring grad, for every dtype and index dtype."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("torch without the DLPack C exchange table (torch < 2.10)")
    assert _ext.fast_use_torch_exchange(True)

    def no_python_allocation(*args, **kwargs):
        raise AssertionError("an output made through torch.Tensor.new_empty, not the exchange table")

    monkeypatch.setattr(torch.Tensor, "new_empty", no_python_allocation)
    general = gpuprim.Context("cpu")
    try:
        names = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
        names += [name for name in ("uint16", "uint32", "uint64") if hasattr(torch, name)]
        for name in names + ["bfloat16"]:
            base = np.float32 if name == "bfloat16" else np.dtype(name).type
            x = torch.from_numpy(sample(base, (3, 50))).to(getattr(torch, name))
            reference = x.float().numpy() if name == "bfloat16" else x.numpy()

            def check(made, dtype, shape):
                assert type(made) is torch.Tensor and made.dtype == dtype and tuple(made.shape) == shape
                assert made.device == x.device and made.is_contiguous() and not made.requires_grad

            def values(t):
                return t.float().numpy() if name == "bfloat16" else t.numpy()

            for a in (x, x[1]):
                rows = reference if a.dim() == 2 else reference[1]  # bfloat16 as float32: the same order
                shape = tuple(a.shape)
                sorted_ = _ext.fast_sort(a, -1, False, None)
                check(sorted_, a.dtype, shape)
                np.testing.assert_array_equal(values(sorted_), general.sort(rows, axis=-1))
                for index in ("int32", "uint32", "int64", "uint64"):
                    if not hasattr(torch, index):
                        continue
                    indices = _ext.fast_argsort(a, -1, True, index)
                    check(indices, getattr(torch, index), shape)
                    np.testing.assert_array_equal(
                        indices.numpy().astype(np.int64),
                        general.argsort(rows, axis=-1, descending=True, dtype="int64"))
                    chosen, where = _ext.fast_topk(a, 5, True, -1, index)
                    check(chosen, a.dtype, shape[:-1] + (5,))
                    check(where, getattr(torch, index), shape[:-1] + (5,))
                    first = general.argsort(rows, axis=-1, descending=True)[..., :5]
                    np.testing.assert_array_equal(where.numpy().astype(np.int64), first)
                    np.testing.assert_array_equal(values(chosen), np.take_along_axis(rows, first, axis=-1))
                if name != "bool" and a.dim() == 2:  # (a CPU tensor's 0-d result takes the general path)
                    largest = _ext.fast_reduce(_ext.OP_MAX, a, -1)
                    check(largest, a.dtype, shape[:-1])
                    np.testing.assert_array_equal(values(largest), reference.max(axis=-1))
    finally:
        general.close()


def test_benchmark_hooks():
    """The overhead benchmark's hooks (python/benchmarks/bench_overhead.py)
    time what they say, `repeats` times, and refuse arrays off the common
    path by name."""
    x = sample(np.float32, (1024,))
    out, one = np.empty_like(x), np.empty(1, np.float32)
    for times in (_ext.c_call_times("sort", x, out, 3), _ext.c_call_times("sum", x, one, 3),
                  _ext.c_layer_times(x, out, 3), _ext.c_output_times(x, False, 3),
                  _ext.c_output_times(x, True, 3)):
        assert len(times) == 3 and all(isinstance(t, int) and t >= 0 for t in times)
    np.testing.assert_array_equal(out, np.sort(x))  # c_call_times made the call
    for hook, arguments in ((_ext.c_layer_times, (x.tolist(), out, 1)), (_ext.c_output_times, (x[::2], False, 1))):
        with pytest.raises(ValueError, match=hook.__name__):
            hook(*arguments)


def test_out_in_place_and_errors_through_the_common_path():
    x = np.array([3, 1, 2], np.int32)
    assert gpuprim.sort(x, out=x) is x
    np.testing.assert_array_equal(x, [1, 2, 3])


def test_wrap_cache_is_bounded_and_closed_with_its_context():
    with gpuprim.Context("cpu") as context:
        for i in range(300):
            context.sum(np.full(i + 1, 1.0, np.float32))
        assert 0 < len(context._wraps) <= 256
        wraps = context._wraps
    assert len(wraps) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.uint8])
def test_reductions_into_out(dtype):
    x = sample(dtype, (7, 33))
    for name in ("sum", "min", "max"):
        function = getattr(gpuprim, name)
        expected_whole = function(x)
        out = np.empty((), np.asarray(expected_whole).dtype)
        assert function(x, out=out) is out
        np.testing.assert_array_equal(out, expected_whole)
        rows = function(x, axis=-1)
        out_rows = np.full(7, 99, rows.dtype)
        assert function(x, axis=-1, out=out_rows) is out_rows
        np.testing.assert_array_equal(out_rows, rows)
        with pytest.raises(ValueError, match="shape"):
            function(x, axis=-1, out=np.empty(8, rows.dtype))
        with pytest.raises(ValueError, match="shape"):
            function(x, out=np.empty(1, rows.dtype))
        with pytest.raises(TypeError, match="dtype"):
            function(x, out=np.empty((), np.float64 if dtype != np.float64 else np.float32))
        frozen = np.empty((), rows.dtype)
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            function(x, out=frozen)


def test_common_path_takes_the_general_paths_answers_on_odd_arguments():
    """Arguments the common path once got wrong (a review found them): an
    axis past a C long, a bool out= for uint8 x, out= inside x, a thread
    context closed by a with block."""
    x = np.array([3.0, 1.0, 2.0])
    for function in (gpuprim.sort, gpuprim.argsort, gpuprim.min, gpuprim.sum):
        for axis in (2**64, -2**64):
            with pytest.raises(ValueError, match="only the last axis"):
                function(x, axis=axis)
    small = np.array([5, 200, 7], np.uint8)
    for name in ("min", "max"):
        out = np.zeros((), bool)
        with pytest.raises(TypeError, match="dtype bool"):
            getattr(gpuprim, name)(small, out=out)
        assert not out
        rows = np.zeros(2, bool)
        with pytest.raises(TypeError, match="dtype bool"):
            getattr(gpuprim, name)(np.array([[5, 200], [7, 9]], np.uint8), axis=-1, out=rows)
        assert not rows.any()
    y = np.array([3.0, 1.0, 2.0])
    assert gpuprim.min(y, out=y[0, ...]) == 1.0
    np.testing.assert_array_equal(y, [1.0, 1.0, 2.0])
    with gpuprim.context_for(x):
        pass
    np.testing.assert_array_equal(gpuprim.sort(x), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(gpuprim.cumsum(x), [3.0, 4.0, 6.0])
    assert gpuprim.context_for(x)._handle is not None


def test_committed_stubs_match_the_extension(tmp_path):
    """python/gpuprim/_ext.pyi is what nanobind's stubgen writes for the
    built layer (regenerate: python -m nanobind.stubgen -m gpuprim._ext -o
    python/gpuprim/_ext.pyi, with the package importable)."""
    stubgen = pytest.importorskip("nanobind.stubgen")
    output = tmp_path / "_ext.pyi"
    stubgen.main(["-q", "-m", "gpuprim._ext", "-o", str(output)])
    committed = open(os.path.join(PACKAGE, "_ext.pyi")).read()
    assert output.read_text() == committed, "regenerate python/gpuprim/_ext.pyi"
