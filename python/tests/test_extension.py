# SPDX-License-Identifier: Apache-2.0
"""The compiled layer (gpuprim._ext): its constants match gpuprim.h, the
package has no ctypes left, and the common path (fast_*) gives exactly what
the general path gives, declining what it does not handle."""
import os
import re

import numpy as np
import pytest

import gpuprim
from gpuprim import _ext, _lib

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


def test_no_ctypes_in_the_package():
    for name in os.listdir(PACKAGE):
        if name.endswith(".py"):
            source = open(os.path.join(PACKAGE, name)).read()
            assert not re.search(r"^\s*(import ctypes|from ctypes)", source, re.M), name
            assert ".ctypes" not in source, name


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
        indices = _ext.fast_argsort(x, axis, descending)
        assert indices is not None and indices.dtype == np.int64
        np.testing.assert_array_equal(indices, general.argsort(x, axis=-1, descending=descending))
    k = min(3, shape[-1])
    values, indices = _ext.fast_topk(x, k, True, axis)
    expected = general.topk(x, k, axis=-1)
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
    assert _ext.fast_topk(x, 13, True, -1) is None                     # k past the length
    assert _ext.fast_topk(x, 0, True, -1) is None
    # and the general path then says why, as before
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.sort(x[::2])
    with pytest.raises(ValueError, match="read-only"):
        gpuprim.sort(x, out=frozen)
    with pytest.raises(gpuprim.InvalidArgumentError, match="k = 13"):
        gpuprim.topk(x, 13)


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


def test_committed_stubs_match_the_extension(tmp_path):
    """python/gpuprim/_ext.pyi is what nanobind's stubgen writes for the
    built layer (regenerate: python -m nanobind.stubgen -m gpuprim._ext -o
    python/gpuprim/_ext.pyi, with the package importable)."""
    stubgen = pytest.importorskip("nanobind.stubgen")
    output = tmp_path / "_ext.pyi"
    stubgen.main(["-q", "-m", "gpuprim._ext", "-o", str(output)])
    committed = open(os.path.join(PACKAGE, "_ext.pyi")).read()
    assert output.read_text() == committed, "regenerate python/gpuprim/_ext.pyi"
