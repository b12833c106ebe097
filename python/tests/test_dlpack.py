# SPDX-License-Identifier: Apache-2.0
"""Arrays of frameworks the package has no reader of its own for, through
the DLPack protocol: a numpy-backed producer here (CPU backend), JAX on the
GPU when it is importable there."""
import ctypes
import sys
import types

import numpy as np
import pytest

import gpuprim


class Producer:
    """An array that offers only the DLPack protocol (its data: a numpy
    array), recording the stream and version each __dlpack__ call asked for."""

    def __init__(self, a):
        self.a = a
        self.asked = []

    @property
    def shape(self):
        return self.a.shape

    def __dlpack__(self, *, stream=None, max_version=None, **kwargs):
        self.asked.append(stream)
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def back(result):
    return np.from_dlpack(result)


FLOATS = np.array([3.0, -0.0, np.nan, 0.0, -np.inf, 1.5, 1.5, np.inf], np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_])
def test_calls_on_a_dlpack_producer(dtype):
    if dtype == np.bool_:
        a = np.array([1, 0, 1, 1, 0], np.bool_)
    elif np.issubdtype(dtype, np.floating):
        a = FLOATS.astype(dtype)
    else:
        a = np.array([3, 0, 7, 0, -5, 1, 1, 9]).astype(dtype)
    x = Producer(a)
    np.testing.assert_array_equal(back(gpuprim.sort(x)), gpuprim.sort(a))
    np.testing.assert_array_equal(back(gpuprim.argsort(x, descending=True)),
                                  gpuprim.argsort(a, descending=True))
    values, indices = gpuprim.topk(x, 3)
    expected = gpuprim.topk(a, 3)
    np.testing.assert_array_equal(back(values), expected[0])
    np.testing.assert_array_equal(back(indices), expected[1])
    assert back(values).dtype == a.dtype
    assert gpuprim.argmax(x) == gpuprim.argmax(a)
    if dtype in (np.float32, np.float64, np.int64):  # sums that keep the dtype
        np.testing.assert_array_equal(gpuprim.sum(x), gpuprim.sum(a))
        np.testing.assert_array_equal(back(gpuprim.cumsum(x)), gpuprim.cumsum(a))
    assert set(x.asked) == {None}  # CPU memory: no stream asked for


def test_rows_and_empty():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1].copy()
    np.testing.assert_array_equal(back(gpuprim.sort(Producer(a))), np.sort(a, axis=-1))
    np.testing.assert_array_equal(back(gpuprim.sum(Producer(a), axis=-1)), a.sum(axis=-1))
    empty = back(gpuprim.sort(Producer(np.zeros(0, np.float32))))
    assert empty.shape == (0,)


def test_producer_arrays_are_never_written_and_errors_are_clear():
    a = np.array([2, 1], np.int32)
    x = Producer(a)
    with pytest.raises(ValueError, match="read-only"):
        gpuprim.sort(np.array([1, 2], np.int32), out=x)
    np.testing.assert_array_equal(a, [2, 1])
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.sort(Producer(np.arange(8, dtype=np.float32)[::2]))
    with pytest.raises(TypeError, match="supported"):
        gpuprim.sort(Producer(np.zeros(3, np.complex64)))
    with pytest.raises(TypeError, match="DLPack"):
        gpuprim.sort(object())
    # segmented calls whose offsets cover x run; elements outside every
    # segment are copied in after the call, which an export cannot take
    keys = np.array([1.0, 0.0, 3.0, 2.0], np.float32)
    np.testing.assert_array_equal(back(gpuprim.segment_sort(Producer(keys), Producer(np.array([0, 2, 4])))),
                                  [0, 1, 2, 3])
    with pytest.raises(TypeError, match="not supported"):
        gpuprim.segment_sort(Producer(keys), Producer(np.array([0, 2, 3])))
    np.testing.assert_array_equal(keys, [1, 0, 3, 2])


def test_results_outlive_their_call():
    results = [gpuprim.sort(Producer(np.arange(100, 0, -1, dtype=np.int64))) for _ in range(50)]
    import gc
    gc.collect()
    for result in results:
        np.testing.assert_array_equal(back(result), np.arange(1, 101))


class FrameworkArray:
    """The array type of a fake framework's from_dlpack (its data: numpy)."""

    def __init__(self, a):
        self.a = a


def producer_of_framework(monkeypatch, **module_attributes):
    """A Producer type of the fake framework "fakearrays" (its type's module
    "fakearrays.core"), the framework's top-level module registered in
    sys.modules with module_attributes."""
    module = types.ModuleType("fakearrays")
    for name, value in module_attributes.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, "fakearrays", module)
    return type("FrameworkProducer", (Producer,), {"__module__": "fakearrays.core"})


def test_results_come_back_through_the_producers_from_dlpack(monkeypatch):
    taken = []

    def from_dlpack(obj):
        taken.append(obj)
        return FrameworkArray(np.from_dlpack(obj))
    producer = producer_of_framework(monkeypatch, from_dlpack=from_dlpack)
    x = producer(FLOATS.copy())
    result = gpuprim.sort(x)
    assert type(result) is FrameworkArray
    np.testing.assert_array_equal(result.a, gpuprim.sort(FLOATS))
    values, indices = gpuprim.topk(x, 3, largest=False)
    assert type(values) is FrameworkArray and type(indices) is FrameworkArray
    expected = gpuprim.topk(FLOATS, 3, largest=False)
    np.testing.assert_array_equal(values.a, expected[0])
    np.testing.assert_array_equal(indices.a, expected[1])
    assert indices.a.dtype == np.int64
    rows = producer(np.arange(12, dtype=np.int64).reshape(3, 4))
    sums = gpuprim.sum(rows, axis=-1)
    assert type(sums) is FrameworkArray
    np.testing.assert_array_equal(sums.a, [6, 22, 38])
    assert len(taken) == 4  # one from_dlpack per output
    assert all(type(obj) is not FrameworkArray and hasattr(obj, "__dlpack__") for obj in taken)


@pytest.mark.parametrize("module_attributes", [{}, {"from_dlpack": "not callable"}],
                         ids=["no from_dlpack", "from_dlpack not callable"])
def test_results_without_the_producers_from_dlpack_stay_dlpack_arrays(monkeypatch, module_attributes):
    producer = producer_of_framework(monkeypatch, **module_attributes)
    result = gpuprim.sort(producer(FLOATS.copy()))
    today = gpuprim.sort(Producer(FLOATS.copy()))  # this module has no from_dlpack either
    assert type(result) is type(today) and type(result) is not FrameworkArray
    np.testing.assert_array_equal(back(result), gpuprim.sort(FLOATS))


def test_jax_on_its_device():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    for device in (jax.devices()[0],):
        x = jax.device_put(jnp.asarray(FLOATS), device)
        result = gpuprim.sort(x)
        assert isinstance(result, jax.Array)
        np.testing.assert_array_equal(np.asarray(result), gpuprim.sort(FLOATS))
        values, indices = gpuprim.topk(x, 3)
        assert isinstance(values, jax.Array) and isinstance(indices, jax.Array)
        np.testing.assert_array_equal(np.asarray(indices), gpuprim.topk(FLOATS, 3)[1])
        rows = jax.device_put(jnp.arange(12, dtype=jnp.float32).reshape(3, 4), device)
        np.testing.assert_array_equal(np.asarray(gpuprim.sum(rows, axis=-1)), [6, 22, 38])
        total = gpuprim.sum(rows)
        assert float(total) == 66.0
        assert gpuprim.argmin(x) == int(np.argmin(FLOATS))
        # a JAX array is never written, not even as out=
        with pytest.raises(ValueError, match="read-only"):
            gpuprim.sort(x, out=x)
        # counts come back as JAX arrays; a histogram (which adds numpy's
        # closed last bin after the call) is refused before any work
        labels = jax.device_put(jnp.asarray([1, 1, 3], dtype=jnp.int32), device)
        counts = gpuprim.bincount(labels, minlength=5)
        assert isinstance(counts, jax.Array)
        np.testing.assert_array_equal(np.asarray(counts), [0, 2, 0, 1, 0])
        assert isinstance(gpuprim.bincount(labels[:0]), jax.Array)
        for bins in (3, [0.0, 1.0, 2.0]):
            with pytest.raises(TypeError, match="histogram on jax arrays is not supported"):
                gpuprim.histogram(x, bins)
        # segmented calls: offsets covering x run; elements outside every
        # segment (copied in after the call) are refused before it
        keys = jax.device_put(jnp.asarray([3.0, 1.0, 2.0, 9.0, 8.0, 7.0], dtype=jnp.float32), device)
        whole = jnp.asarray([0, 3, 6], dtype=jnp.int32)
        np.testing.assert_array_equal(np.asarray(gpuprim.segment_sort(keys, whole)), [1, 2, 3, 7, 8, 9])
        np.testing.assert_array_equal(np.asarray(gpuprim.segment_argsort(keys, whole)), [1, 2, 0, 2, 1, 0])
        np.testing.assert_array_equal(np.asarray(gpuprim.segment_cumsum(keys, whole)), [3, 4, 6, 9, 17, 24])
        # segment_topk's short segments (their unused slots made before the call)
        values, indices = gpuprim.segment_topk(keys, jnp.asarray([0, 2, 6], dtype=jnp.int32), 3)
        np.testing.assert_array_equal(np.asarray(values), [[3, 1, 0], [9, 8, 7]])
        np.testing.assert_array_equal(np.asarray(indices), [[0, 1, -1], [1, 2, 3]])
        short = gpuprim.segment_topk(keys, jnp.asarray([0, 2, 2, 6], dtype=jnp.int32), 2, dtype="uint32")[1]
        np.testing.assert_array_equal(np.asarray(short), [[0, 1], [2**32 - 1, 2**32 - 1], [1, 2]])
        # mins over bools where every result covers an element: no fix after the call
        flags = jax.device_put(jnp.asarray([True, False, True, True]), device)
        np.testing.assert_array_equal(np.asarray(gpuprim.scan(flags, "min")), [True, False, False, False])
        halves = jnp.asarray([0, 2, 4], jnp.int32)
        np.testing.assert_array_equal(np.asarray(gpuprim.segment_min(flags, halves)), [False, True])
        np.testing.assert_array_equal(np.asarray(gpuprim.min(flags.reshape(2, 2), axis=-1)), [False, True])
        for call in (lambda: gpuprim.scan(flags, "min", exclusive=True),
                     lambda: gpuprim.segment_min(flags, jnp.asarray([0, 2, 2, 4], jnp.int32))):
            with pytest.raises(TypeError, match="a min over bools of jax arrays"):
                call()
        # bfloat16 reductions come back as JAX arrays; float keys' unique and group-by run
        half = jax.device_put(jnp.asarray([1.0, 2.5, -3.0], dtype=jnp.bfloat16), device)
        for result, expected in ((gpuprim.sum(half), 0.5), (gpuprim.min(half), -3.0), (gpuprim.dot(half, half), 16.25)):
            assert isinstance(result, jax.Array) and result.dtype == jnp.bfloat16 and float(result) == expected
        spread = jax.device_put(jnp.asarray([3.0, -0.0, 0.0, jnp.nan, -jnp.nan, 1.0]), device)
        unique = np.asarray(gpuprim.unique(spread))
        np.testing.assert_array_equal(unique, [0.0, 1.0, 3.0, np.nan])
        group_keys, sums = gpuprim.groupby_sum(spread, jnp.arange(6.0))
        np.testing.assert_array_equal(np.asarray(group_keys), [0.0, 1.0, 3.0, np.nan])
        np.testing.assert_array_equal(np.asarray(sums), [3.0, 5.0, 0.0, 7.0])
        inner = jnp.asarray([1, 3, 6], dtype=jnp.int32)
        for call in (gpuprim.segment_sort, gpuprim.segment_argsort, gpuprim.segment_cumsum):
            with pytest.raises(TypeError, match="outside every segment on jax arrays"):
                call(keys, inner)


class BareProducer:
    """Only the protocol's two methods, no shape (as gpuprim's own DLPack
    results, which the package must take back in): keywords passed on to
    numpy's __dlpack__, which exports read-only arrays only when asked for a
    versioned capsule (max_version)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_a_producer_without_a_shape_and_results_taken_back_in():
    a = np.array([3.0, 1.0, 2.0, 0.0, 5.0])
    x = BareProducer(a)
    first = gpuprim.sort(x)
    np.testing.assert_array_equal(back(first), np.sort(a))
    assert not hasattr(first, "shape")  # the premise: the result has no shape of its own either
    np.testing.assert_array_equal(back(gpuprim.cumsum(first)), np.cumsum(np.sort(a)))
    np.testing.assert_array_equal(back(gpuprim.argsort(x)), np.argsort(a, kind="stable"))
    values, indices = gpuprim.topk(x, 2)
    np.testing.assert_array_equal(back(values), [5.0, 3.0])
    np.testing.assert_array_equal(back(indices), [4, 0])
    # the results sized by a count the call finds (select and friends)
    np.testing.assert_array_equal(back(gpuprim.select(x, op=">", value=1.5)), [3.0, 2.0, 5.0])
    runs = BareProducer(np.array([1, 1, 4, 4, 4, 2], np.int32))
    keys, starts, lengths = gpuprim.run_length_encode(runs)
    np.testing.assert_array_equal(back(keys), [1, 4, 2])
    np.testing.assert_array_equal(back(lengths), [2, 3, 1])
    np.testing.assert_array_equal(back(gpuprim.unique_consecutive(runs)), [1, 4, 2])
    run_keys, sums = gpuprim.reduce_by_key(runs, BareProducer(np.arange(6.0)))
    np.testing.assert_array_equal(back(run_keys), [1, 4, 2])
    np.testing.assert_array_equal(back(sums), [1.0, 9.0, 5.0])
    rows = np.arange(6.0).reshape(2, 3)[::-1].copy()
    np.testing.assert_array_equal(back(gpuprim.sum(BareProducer(rows), axis=-1)), rows.sum(axis=-1))


def test_a_read_only_array_through_dlpack_is_read():
    a = np.array([3.0, 1.0, 2.0])
    a.setflags(write=False)
    np.testing.assert_array_equal(back(gpuprim.sort(BareProducer(a))), [1.0, 2.0, 3.0])
    assert gpuprim.argmax(BareProducer(a)) == 0
    np.testing.assert_array_equal(a, [3.0, 1.0, 2.0])


def test_an_out_taken_through_dlpack_is_refused_as_such():
    with pytest.raises(ValueError, match="out: an array taken through DLPack is read-only here"):
        gpuprim.sort(np.array([2.0, 1.0]), out=BareProducer(np.zeros(2)))


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class CraftedProducer:
    """A producer whose capsule says what the test wants (float64 on the
    CPU): a shape of ndim lengths (None: no shape array), data at `data`."""

    def __init__(self, ndim, lengths, data, device=(1, 0)):
        self.lengths = None if lengths is None else (ctypes.c_int64 * len(lengths))(*lengths)
        self.backing = (ctypes.c_double * 4)()
        tensor = _DLTensor(ctypes.c_void_p(ctypes.addressof(self.backing)) if data else None,
                           _DLDevice(*device), ndim, _DLDataType(2, 64, 1),
                           ctypes.cast(self.lengths, ctypes.POINTER(ctypes.c_int64)) if lengths else None,
                           None, 0)
        self.managed = _DLManagedTensor(tensor, None, None)
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self.capsule = new_capsule(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("ndim, lengths, data, message", [
    (-1, None, True, "negative number of dimensions"),
    (1, None, True, "without its shape"),
    (1, [-3], True, "negative length"),
    (2, [1 << 40, 1 << 40], True, "2\\^63 elements or more"),
    (1, [3], False, "without data"),
])
def test_a_producer_claiming_an_impossible_tensor_is_refused(ndim, lengths, data, message):
    crafted = CraftedProducer(ndim, lengths, data)
    with pytest.raises(ValueError, match=f"gpuprim: x.__dlpack__\\(\\) gave a DLPack tensor.*{message}"):
        gpuprim.sort(crafted)
    assert crafted.backing[0] == 0.0  # nothing written


def test_a_capsule_on_another_device_than_the_producer_says_is_refused():
    crafted = CraftedProducer(1, [3], True, device=(2, 0))  # CUDA memory, by the capsule
    with pytest.raises(ValueError, match=r"gave a tensor on DLPack device \(2, 0\), its __dlpack_device__\(\) "
                                         r"says \(1, 0\)"):
        gpuprim.sort(crafted)


class OddProducer:
    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("producer, message", [
    (OddProducer(None), r"gpuprim: x.__dlpack__\(\) gave not an unconsumed DLPack capsule"),
    (OddProducer(3), r"gpuprim: x.__dlpack__\(\) gave not an unconsumed DLPack capsule"),
    (OddProducer(None, device=None), r"gpuprim: x.__dlpack_device__\(\) did not give"),
    (OddProducer(None, device=(1,)), r"gpuprim: x.__dlpack_device__\(\) did not give"),
])
def test_a_producer_giving_no_capsule_or_device_is_named(producer, message):
    with pytest.raises(TypeError, match=message):
        gpuprim.sort(producer)
