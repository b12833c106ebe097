# SPDX-License-Identifier: Apache-2.0
"""gpuprim on numpy arrays (CPU backend), checked against reference.py."""
import gc
import os
import resource
import sys
import threading

import numpy as np
import pytest

import gpuprim
from reference import (ALL_DTYPES, DTYPES, PATTERNS, SIZES, bits, dtype_of, is_float, is_half,
                       numpy_cumsum, numpy_sum_dtype, pattern, range_permutation, round_half,
                       sort_permutation, specials, wrap_cumsum)

rng = np.random.default_rng(20261123)


def poisoned(like):
    out = np.empty_like(like)
    bits(out)[:] = 0x5A
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("kind", PATTERNS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_keys_and_argsort(dtype, kind, descending):
    for n in SIZES:
        x = pattern(dtype, n, kind, rng)
        keep = x.copy()
        expected = x[sort_permutation(x, descending)]
        got = gpuprim.sort(x, descending=descending)
        assert type(got) is np.ndarray and got.dtype == x.dtype and got.shape == x.shape
        np.testing.assert_array_equal(bits(got), bits(expected), err_msg=f"n={n}")
        np.testing.assert_array_equal(bits(x), bits(keep), err_msg="input changed")
        order = gpuprim.argsort(x, descending=descending)
        assert order.dtype == np.int64
        np.testing.assert_array_equal(order, sort_permutation(x, descending), err_msg=f"n={n}")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("value_dtype", ["uint32", "float64", "int64", "uint8", "float16", "int16"])
def test_sort_pairs_stable(dtype, value_dtype):
    for n in (0, 1, 777, 20000):
        keys = pattern(dtype, n, "few", rng)
        values = np.arange(n).astype(value_dtype)  # 1/2-byte values wrap: still moved bit for bit
        for descending in (False, True):
            perm = sort_permutation(keys, descending)
            k, v = gpuprim.sort(keys, values=values, descending=descending)
            np.testing.assert_array_equal(bits(k), bits(keys[perm]))
            np.testing.assert_array_equal(v, values[perm])
            k2, v2 = gpuprim.sort_by_key(keys, values, descending=descending)
            np.testing.assert_array_equal(bits(k2), bits(k))
            np.testing.assert_array_equal(v2, v)


def test_sort_in_place_and_out():
    x = specials("float32", 5000, rng)
    keep = x.copy()
    expected = x[sort_permutation(x)]
    out = poisoned(x)
    assert gpuprim.sort(x, out=out) is out
    np.testing.assert_array_equal(bits(out), bits(expected))
    values = np.arange(x.size, dtype=np.uint64)
    k, v = gpuprim.sort(x, values=values, out=x, values_out=values)
    assert k is x and v is values
    np.testing.assert_array_equal(bits(x), bits(expected))
    np.testing.assert_array_equal(values, sort_permutation(keep))


@pytest.mark.parametrize("index_dtype", ["int64", "int32", "uint32", "uint64"])
def test_argsort_index_dtypes(index_dtype):
    x = specials("int64", 3001, rng)
    order = gpuprim.argsort(x, dtype=index_dtype)
    assert order.dtype == np.dtype(index_dtype)
    np.testing.assert_array_equal(order.astype(np.int64), sort_permutation(x))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_cumsum(dtype, exclusive):
    for n in SIZES:
        if is_half(dtype):
            # f16/bf16 accumulate in f32 (exact for these integers) and round
            # each output once: not numpy's float16 cumsum, which rounds every step
            x = rng.integers(-1000, 1000, size=n).astype(dtype_of(dtype))
            exact = np.cumsum(x.astype(np.float64))
            if exclusive:
                exact = np.concatenate(([0.0], exact[:-1]))[:n]
            got = gpuprim.cumsum(x, exclusive=exclusive)
            np.testing.assert_array_equal(bits(got), bits(round_half(exact, dtype)), err_msg=f"n={n}")
            continue
        if np.dtype(dtype).kind == "f":
            x = rng.integers(-1000, 1000, size=n).astype(dtype)  # exact in any order
        else:
            x = specials(dtype, n, rng)                           # 64-bit sums wrap
        got = gpuprim.cumsum(x, exclusive=exclusive)
        # numpy's dtype: integers narrower than 64 bits widened (issue 35)
        assert got.dtype == numpy_sum_dtype(x.dtype)
        np.testing.assert_array_equal(got, numpy_cumsum(x, exclusive), err_msg=f"n={n}")
        # dtype=x.dtype: in x's own dtype, wrapping like C (the default before 0.3)
        got = gpuprim.cumsum(x, exclusive=exclusive, dtype=x.dtype)
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, wrap_cumsum(x, exclusive), err_msg=f"n={n}")


def test_float_cumsum_deterministic_and_close():
    x = rng.standard_normal(300001).astype(np.float32)
    first = gpuprim.cumsum(x)
    for _ in range(3):
        np.testing.assert_array_equal(bits(gpuprim.cumsum(x)), bits(first))
    reference = np.cumsum(x.astype(np.float64))
    scale = np.cumsum(np.abs(x.astype(np.float64)))
    assert np.all(np.abs(first - reference) <= 1e-6 * x.size * scale + 1e-6)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("op", ["min", "max"])
def test_scan_min_max(dtype, op):
    x = specials(dtype, 10007, rng)
    if is_float(dtype_of(dtype)):
        with np.errstate(invalid="ignore"):
            x[x == 0] = 1  # the sign of zero is tested separately
    ufunc = np.minimum if op == "min" else np.maximum
    # compared as float64 (exact for every dtype here but 64-bit integers):
    # numpy's testing treats bfloat16 NaNs as unequal
    wide = np.float64 if x.dtype.name == "bfloat16" else x.dtype
    got = gpuprim.scan(x, op)
    with np.errstate(invalid="ignore"):
        expected = ufunc.accumulate(x.astype(wide))
    np.testing.assert_array_equal(got.astype(wide), expected)
    out = x.copy()
    assert gpuprim.scan(out, op, out=out) is out  # in place
    np.testing.assert_array_equal(out.astype(wide), expected)


def _half_sum_ok(got, terms, dtype):
    """f16/bf16 sums: between the roundings of exact -+ n * 2^-24 * sum|x|
    (f32 accumulation in any order, then one rounding to nearest even)."""
    exact = float(np.sum(terms, dtype=np.float64))
    bound = max(len(terms), 1) * 2.0 ** -24 * float(np.sum(np.abs(terms)))
    low, high = round_half([exact - bound, exact + bound], dtype).astype(np.float64)
    return low <= float(got) <= high


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_reductions(dtype):
    if dtype_of(dtype) is None:
        pytest.skip("bfloat16 numpy arrays need ml_dtypes")
    d = dtype_of(dtype)
    for n in (0, 1, 2, 4097, 100003):
        finite = (rng.standard_normal(n) * 4).astype(d)
        wide = finite.astype(np.float64)
        total = gpuprim.sum(finite)
        assert total.dtype == d
        assert _half_sum_ok(total, wide, dtype), (n, float(total), wide.sum())
        assert _half_sum_ok(gpuprim.dot(finite, finite), wide * wide, dtype)
        assert bits(np.array([gpuprim.sum(finite)], d))[0] == bits(np.array([total], d))[0]
    # one rounding at the end, of a sum exact in f32: 4097 ones are 4096 in
    # f16 (a 16-bit accumulator would stall at 2048), 257 ones 256 in bf16
    ones = np.ones(4097 if dtype == "float16" else 257, d)
    assert float(gpuprim.sum(ones)) == (4096.0 if dtype == "float16" else 256.0)
    assert float(gpuprim.dot(ones, ones)) == (4096.0 if dtype == "float16" else 256.0)
    big = np.full(65520, 1.0, d)
    if dtype == "float16":  # 65520 rounds to inf; overflow only at the end
        assert np.isposinf(gpuprim.sum(big))
        assert float(gpuprim.sum(big[:65519])) == 65504.0
    # NaN sums are the canonical NaN; MIN/MAX the NaN of largest bits
    x = np.array([1.0, np.nan, -np.inf, 2.0], d)
    bits(x)[1] |= 3  # a payload
    canonical = 0x7E00 if dtype == "float16" else 0x7FC0
    assert bits(np.array([gpuprim.sum(x)], d))[0] == canonical
    assert bits(np.array([gpuprim.min(x)], d))[0] == bits(x)[1]
    z = np.array([0.0, -0.0], d)
    assert np.signbit(np.float32(gpuprim.min(z))) and not np.signbit(np.float32(gpuprim.max(z)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype):
    for n in (0, 1, 2, 4097, 100003):
        x = specials(dtype, n, rng)
        if is_half(dtype):
            if n:
                has_nan = np.isnan(x).any()
                assert np.isnan(gpuprim.min(x)) == has_nan
                if not has_nan:
                    assert gpuprim.min(x) == x.min() and gpuprim.max(x) == x.max()
            else:
                assert gpuprim.min(x) == np.inf and gpuprim.max(x) == -np.inf
            continue
        if np.dtype(dtype).kind == "f":
            finite = rng.standard_normal(n).astype(dtype)
            total = gpuprim.sum(finite)
            assert isinstance(total, np.generic) and total.dtype == np.dtype(dtype)
            assert abs(float(total) - float(finite.astype(np.float64).sum())) <= \
                n * np.finfo(dtype).eps * float(np.abs(finite).sum()) + 1e-30
            assert bits(np.array([gpuprim.sum(finite)]))[0] == bits(np.array([total]))[0]
            d = gpuprim.dot(finite, finite)
            assert abs(float(d) - float(np.dot(finite.astype(np.float64), finite))) <= \
                2 * n * np.finfo(dtype).eps * float(np.dot(finite.astype(np.float64), finite)) + 1e-30
            if n:
                has_nan = np.isnan(x).any()
                assert np.isnan(gpuprim.min(x)) == has_nan
                assert np.isnan(gpuprim.max(x)) == has_nan
                if not has_nan:
                    assert gpuprim.min(x) == x.min() and gpuprim.max(x) == x.max()
            else:
                assert gpuprim.min(x) == np.inf and gpuprim.max(x) == -np.inf
        else:
            total = gpuprim.sum(x)  # numpy's dtype: narrower integers widened (issue 35)
            assert total.dtype == np.sum(x).dtype == numpy_sum_dtype(x.dtype) and total == np.sum(x)
            with np.errstate(over="ignore"):
                wrapped = gpuprim.sum(x, dtype=x.dtype)  # x's own dtype: wraps like C
                assert wrapped.dtype == x.dtype and wrapped == np.sum(x, dtype=x.dtype)
                assert gpuprim.dot(x, x) == np.sum(x * x, dtype=x.dtype)
            info = np.iinfo(dtype)
            assert gpuprim.min(x) == (x.min() if n else info.max)
            assert gpuprim.max(x) == (x.max() if n else info.min)


def test_signed_zero_min_max():
    x = np.array([0.0, -0.0, 0.0], np.float64)
    assert np.signbit(gpuprim.min(x)) and not np.signbit(gpuprim.max(x))
    assert np.signbit(gpuprim.scan(np.array([0.0, -0.0], np.float32), "min")[1])


def test_reduce_any_shape():
    x = rng.integers(0, 100, size=(7, 9)).astype(np.int64)
    assert gpuprim.sum(x) == x.sum() and gpuprim.max(x) == x.max()


def test_misaligned_arrays_are_refused_naming_them():
    # np.frombuffer at an odd offset: C-contiguous but not aligned; both the
    # common path and the general one name the argument
    misaligned = np.frombuffer(bytearray(8 * 4 + 1), np.float64, offset=1)
    assert misaligned.flags.c_contiguous and not misaligned.flags.aligned
    for call, name in ((lambda: gpuprim.sort(misaligned), "x"), (lambda: gpuprim.sum(misaligned), "x"),
                       (lambda: gpuprim.argsort(misaligned), "x"),
                       (lambda: gpuprim.sort(np.arange(4.0), out=misaligned), "out")):
        with pytest.raises(ValueError, match=f"gpuprim: {name} is not aligned"):
            call()


def test_values_sharing_x_memory_are_refused_naming_values():
    a = np.array([2, 1, 3])
    for values in (a, a[:], a.view(np.uint64)):
        with pytest.raises(ValueError, match="values shares memory with x"):
            gpuprim.sort(a, values=values)
    np.testing.assert_array_equal(a, [2, 1, 3])
    keys, values = gpuprim.sort(a, values=a.copy())
    np.testing.assert_array_equal(keys, [1, 2, 3])
    np.testing.assert_array_equal(values, [1, 2, 3])


def test_sort_outputs_over_inputs_are_refused_naming_them():
    """The library refuses partial overlaps and cross overlaps naming its C
    parameters (keys_in, values_out, ...); the package names out,
    values_out, values and x, before any work, leaving every array as it
    was. In place (out is x, values_out is values) still runs."""
    b = np.array([5, 3, 4, 1, 0, 2])
    with pytest.raises(ValueError, match="out shares memory with x without being it"):
        gpuprim.sort(b[:-1], out=b[1:])
    k, v = np.array([3, 1, 2]), np.array([30, 10, 20])
    w = np.zeros(6, np.int64)
    for options, message in (({"values_out": k}, "values_out shares memory with x"),
                             ({"out": v}, "out shares memory with values"),
                             ({"out": w[:3], "values_out": w[2:5]}, "values_out shares memory with out"),
                             ({"values_out": np.concatenate([v, v])[1:4]}, None)):
        if message is None:  # apart from everything: runs
            gpuprim.sort(k.copy(), values=v, **options)
            continue
        with pytest.raises(ValueError, match=message):
            gpuprim.sort(k, values=v, **options)
    spread = np.array([30, 10, 20, 0])
    with pytest.raises(ValueError, match="values_out shares memory with values without being it"):
        gpuprim.sort(k, values=spread[:3], values_out=spread[1:])
    np.testing.assert_array_equal(spread, [30, 10, 20, 0])
    np.testing.assert_array_equal(k, [3, 1, 2])
    np.testing.assert_array_equal(v, [30, 10, 20])
    np.testing.assert_array_equal(w, 0)
    for values, call in ((np.arange(4), lambda values: gpuprim.sort(k, values=values)),
                         (np.arange(2), lambda values: gpuprim.segment_sort(k, np.array([0, 3]), values=values))):
        with pytest.raises(ValueError, match=f"values has {values.size} elements, x 3"):
            call(values)
    keys, values = gpuprim.sort(k, values=v, out=k, values_out=v)
    assert keys is k and values is v
    np.testing.assert_array_equal(k, [1, 2, 3])
    np.testing.assert_array_equal(v, [10, 20, 30])


def test_scan_into_an_out_over_x():
    """np.cumsum(a[:-1], out=a[1:]) reads a before writing: so does gpuprim
    (through a new array); flat, per row and exclusive."""
    for exclusive in (False, True):
        a, expected = np.arange(6, dtype=np.int64), np.arange(6, dtype=np.int64)
        gpuprim.cumsum(a[:-1], out=a[1:], exclusive=exclusive)
        scanned = np.cumsum(expected[:-1])
        expected[1:] = np.concatenate([[0], scanned[:-1]]) if exclusive else scanned
        np.testing.assert_array_equal(a, expected)
    a = np.arange(6, dtype=np.int64)
    gpuprim.cumsum(a[:4].reshape(2, 2), axis=-1, out=a[2:].reshape(2, 2))
    np.testing.assert_array_equal(a, [0, 1, 0, 1, 2, 5])
    # segments: out's elements outside every segment keep their values
    buffer = np.arange(100.0, 111.0)
    gpuprim.segment_scan(buffer[0:10], np.array([2, 5]), out=buffer[1:11])
    np.testing.assert_array_equal(buffer, [100, 101, 102, 102, 205, 309, 106, 107, 108, 109, 110])
    a = np.arange(5.0)
    assert gpuprim.scan(a, "max", out=a) is a  # in place, as before


def test_argreduce_of_nothing_names_x():
    for call in (gpuprim.argmin, gpuprim.argmax):
        with pytest.raises(gpuprim.InvalidArgumentError, match=r"arg(min|max): x is empty"):
            call(np.empty(0))


def test_row_reductions_into_an_out_inside_x():
    # numpy reads x before writing out; so does gpuprim (through a new array)
    for op in ("sum", "min", "max"):
        for start in (0, 5, 9):
            x = np.arange(12.0).reshape(3, 4)
            y = x.copy()
            got = getattr(gpuprim, op)(x, axis=-1, out=x.reshape(-1)[start:start + 3])
            want = getattr(np, op)(y, axis=-1, out=y.reshape(-1)[start:start + 3])
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(x, y)


def test_out_of_another_shape_is_refused_as_numpy_refuses_it():
    x = np.array([3.0, 1.0, 2.0])
    for call in (lambda out: gpuprim.sort(x, out=out), lambda out: gpuprim.cumsum(x, out=out),
                 lambda out: gpuprim.sort(x, out=out, descending=True)):
        out = np.full((3, 1), -7.0)
        with pytest.raises(ValueError, match=r"out has shape \(3, 1\), expected \(3,\)"):
            call(out)
        assert (out == -7.0).all()


def test_errors():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpuprim.sort(x[::2])
    with pytest.raises(ValueError, match="1-D"):
        gpuprim.sort(x.reshape(2, 5), axis=None)
    # the array API's default, axis=-1: every row (since 0.4)
    rows = x[::-1].copy().reshape(2, 5)
    np.testing.assert_array_equal(gpuprim.sort(rows), np.sort(rows, axis=-1))
    for bad in (np.zeros(4, np.complex64), np.zeros(4, np.float128)):  # (bool: since 0.3)
        with pytest.raises(TypeError, match="supported"):
            gpuprim.sort(bad)
    with pytest.raises(TypeError, match="numpy array"):
        gpuprim.sort([3, 1, 2])
    with pytest.raises(TypeError, match="expected float32"):
        gpuprim.sort(x, out=np.empty(10, np.float64))
    with pytest.raises(ValueError, match="elements"):
        gpuprim.cumsum(x, out=np.empty(9, np.float32))
    with pytest.raises(ValueError, match="values_out"):
        gpuprim.sort(x, values_out=np.empty(10))
    with pytest.raises(ValueError, match="op"):
        gpuprim.scan(x, "prod")
    with pytest.raises(TypeError, match="index dtype"):
        gpuprim.argsort(x, dtype="float32")
    # values of another length: named as the Python call names them (the
    # library's message says keys_in and values_in); nothing changed
    keys = np.arange(10, dtype=np.int32)[::-1].copy()
    with pytest.raises(ValueError, match="values has 3 elements, x 10"):
        gpuprim.sort(keys, values=np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(keys, np.arange(10)[::-1])
    # the library's own checks: an exception carrying its message
    with pytest.raises(gpuprim.DtypeError) as info:
        gpuprim.dot(x, np.ones(10, np.float64))
    assert isinstance(info.value, TypeError)
    with pytest.raises(ValueError, match="backend"):
        gpuprim.Context("gpu")


def test_context_lifecycle():
    with gpuprim.Context("cpu") as context:
        assert context.backend == "cpu" and context.device == -1
        assert "CPU" in repr(context)
        np.testing.assert_array_equal(context.sort(np.array([3, 1, 2], np.uint64)), [1, 2, 3])
        context.synchronize()
    with pytest.raises(ValueError, match="closed"):
        context.sort(np.array([1], np.int32))
    context.close()  # twice is fine


def test_context_arguments_are_checked_here():
    # a stream that is no address reached the compiled layer, whose
    # TypeError named its internal function
    for stream in (-1, 2**64):
        with pytest.raises(ValueError, match="gpuprim: stream must be a CUDA stream's address"):
            gpuprim.Context("cpu", stream=stream)
    for stream in ("x", 1.5, True):
        with pytest.raises(TypeError, match="gpuprim: stream must be None or a CUDA stream's address"):
            gpuprim.Context("cpu", stream=stream)
    for value in (2**31, "2", None):
        with pytest.raises(TypeError, match="gpuprim: cpu_threads must be a 32-bit integer"):
            gpuprim.Context("cpu", cpu_threads=value)
    with gpuprim.Context("cpu", stream=None) as context:
        assert context.backend == "cpu"


def test_cuda_context_without_gpu_is_a_clear_error():
    try:
        context = gpuprim.Context("cuda")
    except gpuprim.DeviceError as error:
        assert isinstance(error, RuntimeError)
        assert error.status_name == "BACKEND_UNAVAILABLE" and error.message
        return
    # A GPU is here: numpy arrays go to the device and back.
    with context:
        x = specials("float64", 100003, rng)
        np.testing.assert_array_equal(bits(context.sort(x)), bits(x[sort_permutation(x)]))
        np.testing.assert_array_equal(context.argsort(x), sort_permutation(x))
        y = rng.integers(-5, 5, size=5000).astype(np.int32)
        np.testing.assert_array_equal(context.cumsum(y), wrap_cumsum(y))
        assert context.sum(y) == y.sum()


def test_version_matches_library():
    assert gpuprim.__version__ == gpuprim.library_version()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_installed_package_loads_its_own_cpu_engine_libraries():
    # A wheel carries oneTBB and Highway beside libgpuprim (found through its
    # $ORIGIN rpath), so it runs where they are not installed: every copy of
    # them in this process must then be the package's own.
    package_dir = os.path.dirname(os.path.abspath(gpuprim.__file__))
    if os.path.dirname(os.path.abspath(gpuprim.LIBRARY_PATH)) != package_dir:
        pytest.skip("the library is not the installed package's (GPUPRIM_LIBRARY or a source tree)")
    bundled = {name for name in os.listdir(package_dir) if name.startswith(("libtbb", "libhwy"))}
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if "/libtbb" in line or "/libhwy" in line}
    for path in mapped:
        assert os.path.dirname(path) == package_dir, f"{path} loaded from outside the package"
    assert {os.path.basename(path) for path in mapped} <= bundled


def _rss_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_many_calls_do_not_leak():
    x = np.arange(64, dtype=np.float32)[::-1].copy()
    for _ in range(2000):  # warm the caches
        gpuprim.sort(x)
        gpuprim.sum(x)
    gc.collect()
    before = _rss_bytes()
    for _ in range(100_000):
        gpuprim.sort(x)
        gpuprim.sum(x)
    gc.collect()
    grown = _rss_bytes() - before
    assert grown < 8 << 20, f"resident memory grew by {grown} bytes over 200,000 calls"


def test_threads_each_get_their_context():
    errors = []

    def work(seed):
        local = np.random.default_rng(seed)
        try:
            for _ in range(200):
                x = local.integers(-100, 100, size=1000).astype(np.int64)
                np.testing.assert_array_equal(gpuprim.argsort(x), sort_permutation(x))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_threads_share_one_context():
    # Threads calling one explicit Context: its cache of wraps (256) evicts
    # (destroys) buffers for one thread's new arrays while another thread is
    # between wrapping its operand and the library call. Without the
    # context's lock that call failed with "a buffer that was already
    # destroyed" (INVALID_HANDLE) a few times in 10,000; closing the context
    # from another thread must give the package's ValueError, not a library
    # error.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # many thread switches: the window is short
    errors = []
    ctx = gpuprim.Context("cpu", cpu_threads=1)

    def work(seed):
        local = np.random.default_rng(seed)
        pool = [local.integers(-9, 9, size=8 + i).astype(np.int64) for i in range(300)]
        try:
            for i in range(2500):
                x = pool[i % len(pool)]
                np.testing.assert_array_equal(ctx.sort(x), np.sort(x))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors[:3]

    closed = []

    def keep_calling():
        x = np.arange(1 << 16, dtype=np.int64)[::-1].copy()
        while True:
            try:
                ctx.sort(x)
            except ValueError as error:
                closed.append(str(error))
                return
            except Exception as error:  # pragma: no cover - reported below
                closed.append(repr(error))
                return

    callers = [threading.Thread(target=keep_calling) for _ in range(3)]
    for thread in callers:
        thread.start()
    ctx.close()
    for thread in callers:
        thread.join()
    assert all("the context is closed" in text for text in closed), closed


def test_another_threads_call_waits_for_a_workspace_query():
    # A query measures every call on its context without running it: a
    # call from another thread inside the block returned unwritten output.
    ctx = gpuprim.Context("cpu")
    x = np.arange(1000, dtype=np.int64)[::-1].copy()
    results = []
    started = threading.Event()

    def other():
        started.set()
        results.append(ctx.sort(x))

    with ctx.workspace_query():
        ctx.sort(x)
        thread = threading.Thread(target=other)
        thread.start()
        started.wait()
        thread.join(0.2)  # it must be waiting for the block
        assert thread.is_alive()
    thread.join()
    np.testing.assert_array_equal(results[0], np.sort(x))
    ctx.close()


def test_wrap_cache_never_evicts_a_call_operand():
    # One values array used with hundreds of new key arrays: the cache of
    # wraps (256) overflows many times while `values` is in every call.
    values = np.arange(16, dtype=np.int32)
    arrays = [rng.integers(0, 9, size=16).astype(np.uint32) for _ in range(600)]
    for keys in arrays:
        k, v = gpuprim.sort(keys, values=values)
        np.testing.assert_array_equal(v, sort_permutation(keys))


def _ranges(width):
    return [(0, None), (0, width), (0, width // 2), (width // 2, width), (1, 2), (width - 1, width),
            (0, 1), (3, min(11, width)), (width // 2, None)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_bit_ranges(dtype, descending):
    """sort/argsort(begin_bit=, end_bit=) against numpy's stable argsort of
    bits [begin, end) of the documented order-preserving form."""
    width = dtype_of(dtype).itemsize * 8
    for n in (1, 33, 4097, 70001):
        for kind in ("random", "few"):
            x = pattern(dtype, n, kind, rng)
            keep = x.copy()
            for begin, end in _ranges(width):
                perm = range_permutation(x, descending, begin, end)
                where = f"n={n} {kind} bits [{begin}, {end})"
                got = gpuprim.sort(x, descending=descending, begin_bit=begin, end_bit=end)
                np.testing.assert_array_equal(bits(got), bits(x[perm]), err_msg=where)
                np.testing.assert_array_equal(
                    gpuprim.argsort(x, descending=descending, begin_bit=begin, end_bit=end), perm,
                    err_msg=where)
                values = np.arange(n, dtype=np.uint16)
                k, v = gpuprim.sort(x, values=values, descending=descending, begin_bit=begin,
                                    end_bit=end)
                np.testing.assert_array_equal(bits(k), bits(x[perm]), err_msg=where)
                np.testing.assert_array_equal(v, values[perm], err_msg=where)
            np.testing.assert_array_equal(bits(x), bits(keep), err_msg="input changed")


def test_sort_bit_range_examples():
    # u32 keys below 2^16: bits [0, 16) sort them whole
    x = rng.integers(0, 1 << 16, size=50001).astype(np.uint32)
    np.testing.assert_array_equal(gpuprim.sort(x, end_bit=16), np.sort(x))
    np.testing.assert_array_equal(gpuprim.argsort(x, end_bit=16, descending=True),
                                  gpuprim.argsort(x, descending=True))
    # one bit: a stable partition (even keys first), others carried in order
    y = np.array([5, 2, 7, 4, 1, 0], np.uint8)
    np.testing.assert_array_equal(gpuprim.sort(y, begin_bit=0, end_bit=1), [2, 4, 0, 5, 7, 1])
    # i8 by its sign bit in the order form: negatives first, stably
    z = np.array([3, -1, 0, -128, 127, -5], np.int8)
    np.testing.assert_array_equal(gpuprim.sort(z, begin_bit=7, end_bit=8), [-1, -128, -5, 3, 0, 127])
    # the whole width spelled either way is the plain sort, in place too
    h = specials("float16", 3001, rng)
    expected = h[sort_permutation(h)]
    np.testing.assert_array_equal(bits(gpuprim.sort(h, begin_bit=0, end_bit=16)), bits(expected))
    np.testing.assert_array_equal(bits(gpuprim.sort(h, end_bit=0)), bits(expected))
    assert gpuprim.sort(h, out=h, begin_bit=0) is h
    np.testing.assert_array_equal(bits(h), bits(expected))


def test_sort_bit_range_errors():
    x = np.arange(10, dtype=np.uint32)[::-1].copy()
    keep = x.copy()
    for begin, end in ((16, 16), (20, 10), (0, 33), (32, None), (40, 0)):
        with pytest.raises(gpuprim.InvalidArgumentError, match="begin_bit") as info:
            gpuprim.sort(x, begin_bit=begin, end_bit=end)
        assert "end_bit" in info.value.message and info.value.status_name == "INVALID_ARGUMENT"
        assert isinstance(info.value, ValueError)
    with pytest.raises(gpuprim.InvalidArgumentError, match="end_bit"):
        gpuprim.argsort(np.zeros(4, np.int8), end_bit=9)
    with pytest.raises(gpuprim.InvalidArgumentError, match="begin_bit"):
        gpuprim.sort(np.zeros(4, np.float16), values=np.zeros(4, np.int8), begin_bit=16)
    for bad in (-1, 1 << 32, 2.5, True, "3", np.int64(-1), np.float32(3)):
        with pytest.raises(ValueError, match="begin_bit"):
            gpuprim.sort(x, begin_bit=bad)
    np.testing.assert_array_equal(x, keep)
    # numpy integers, as k and axis take them
    np.testing.assert_array_equal(gpuprim.sort(x, begin_bit=np.uint8(0), end_bit=np.int64(8)),
                                  gpuprim.sort(x, begin_bit=0, end_bit=8))



def test_torch_cpu_new_dtypes():
    """CPU tensors of the new dtypes (bfloat16 needs no ml_dtypes with torch)."""
    torch = pytest.importorskip("torch")
    t = torch.tensor([3.0, -0.0, float("nan"), 0.0, -2.5, float("inf")], dtype=torch.bfloat16)
    got = gpuprim.sort(t)
    assert got.dtype == torch.bfloat16
    want = torch.tensor([-2.5, -0.0, 0.0, 3.0, float("inf"), float("nan")], dtype=torch.bfloat16)
    assert torch.equal(got.view(torch.int16), want.view(torch.int16))
    ones = torch.ones(257, dtype=torch.bfloat16)
    total = gpuprim.sum(ones)
    assert total.dtype == torch.bfloat16 and float(total) == 256.0
    h = torch.ones(4097, dtype=torch.float16)
    assert float(gpuprim.sum(h)) == 4096.0
    i8 = torch.tensor([127, 1, -3], dtype=torch.int8)
    total = gpuprim.sum(i8)  # torch's rule: int64 (torch.sum(i8) is 125 too)
    assert total.dtype == torch.int64 and int(total) == 125
    total = gpuprim.sum(i8, dtype=torch.int8)  # in int8: 127 + 1 wraps to -128, -131 to 125
    assert total.dtype == torch.int8 and int(total) == 125
    assert int(gpuprim.sum(torch.tensor([100, 100], dtype=torch.int8))) == 200
    assert gpuprim.cumsum(torch.tensor([200, 100], dtype=torch.uint8)).tolist() == [200, 300]
    b = torch.tensor([True, False, True, True])
    assert gpuprim.sort(b).tolist() == [False, True, True, True] and gpuprim.sort(b).dtype == torch.bool
    assert gpuprim.sum(b).dtype == torch.int64 and int(gpuprim.sum(b)) == 3
    assert gpuprim.cumsum(b).tolist() == [1, 1, 2, 3]
    assert gpuprim.min(b).dtype == torch.bool and not bool(gpuprim.min(b))
    assert gpuprim.scan(b, "min", exclusive=True).view(torch.uint8).tolist() == [1, 1, 0, 0]
    u = torch.tensor([5, 2, 7, 4], dtype=torch.uint8)
    assert gpuprim.sort(u, end_bit=1).tolist() == [2, 4, 5, 7]


def test_dtype_spellings():
    """dtype= takes numpy's spellings (issue 35): the name, the scalar type,
    a numpy dtype, numpy's other strings; not only the name."""
    x = specials("int64", 3001, rng)
    perm = sort_permutation(x)
    for spelling in ("int32", np.int32, np.dtype("int32"), "i4", np.intc):
        order = gpuprim.argsort(x, dtype=spelling)
        assert order.dtype == np.int32, spelling
        np.testing.assert_array_equal(order, perm)
    for spelling in (np.uint64, np.dtype(np.uint32), int):  # int: numpy's int64
        assert gpuprim.argsort(x, dtype=spelling).dtype == np.dtype(spelling)
        values, indices = gpuprim.topk(x, 5, dtype=spelling)
        assert indices.dtype == np.dtype(spelling)
        np.testing.assert_array_equal(indices.astype(np.int64), sort_permutation(x, True)[:5])
    offsets = np.array([0, 1000, 3001], np.int64)
    assert gpuprim.segment_argsort(x, offsets, dtype=np.uint32).dtype == np.uint32
    assert gpuprim.segment_topk(x, offsets, 3, dtype=np.dtype("int32"))[1].dtype == np.int32
    assert gpuprim.argsort(x, axis=-1, dtype=np.int32).dtype == np.int32
    # a dtype torch spells (torch.int32 is "int32" to the helper; fake: its str)
    from gpuprim import _arrays
    TorchInt32 = type("dtype", (), {"__str__": lambda self: "torch.int32", "__hash__": object.__hash__})
    TorchInt32.__module__ = "torch"
    assert _arrays.dtype_name(TorchInt32()) == "int32"
    # refused: not an index dtype (named in numpy's spelling), and no dtype at all
    for bad, name in ((np.float32, "float32"), (np.int16, "int16"), ("f8", "float64"), (bool, "bool")):
        with pytest.raises(TypeError, match=f"index dtype must be one of int64, int32, uint32, "
                                            f"uint64, not {name}"):
            gpuprim.argsort(x, dtype=bad)
    for bad in ("int33", object(), [1, 2]):
        with pytest.raises(TypeError, match="not a dtype"):
            gpuprim.argsort(x, dtype=bad)
    assert gpuprim.argsort(x, dtype=None).dtype == np.int64  # None: the default


def test_masked_arrays_are_refused():
    """numpy.ma arrays came back with a wrong mask, silently (issue 35): every
    function refuses them, as input, values=, out= or offsets."""
    data = np.array([3, 1, 2, 5], np.int32)
    m = np.ma.masked_array(data, mask=[0, 1, 0, 0])
    message = r"masked arrays are not supported; pass (x|a).filled\(...\) or (x|a).compressed\(\)"
    offsets = np.array([0, 2, 4], np.int64)
    calls = [lambda f: f.sort(m), lambda f: f.argsort(m), lambda f: f.topk(m, 2),
             lambda f: f.cumsum(m), lambda f: f.scan(m, "max"), lambda f: f.sum(m),
             lambda f: f.min(m), lambda f: f.max(m), lambda f: f.dot(m, data),
             lambda f: f.sort(m.reshape(2, 2), axis=-1), lambda f: f.sum(m.reshape(2, 2), axis=-1),
             lambda f: f.segment_sort(m, offsets), lambda f: f.segment_argsort(m, offsets),
             lambda f: f.segment_topk(m, offsets, 1), lambda f: f.segment_cumsum(m, offsets),
             lambda f: f.segment_sum(m, offsets), lambda f: f.segment_min(m, offsets),
             lambda f: f.segment_max(m, offsets)]
    with gpuprim.Context("cpu") as context:
        for functions in (gpuprim, context):
            for call in calls:
                with pytest.raises(TypeError, match=message):
                    call(functions)
    with pytest.raises(TypeError, match=r"pass values.filled\(...\)"):
        gpuprim.sort(data, values=m)
    with pytest.raises(TypeError, match=r"pass out.filled\(...\)"):
        gpuprim.sort(data, out=np.ma.masked_array(np.empty(4, np.int32)))
    with pytest.raises(TypeError, match=r"pass b.filled\(...\)"):
        gpuprim.dot(data, m)
    with pytest.raises(TypeError, match=r"pass offsets.filled\(...\)"):
        gpuprim.segment_sum(data, np.ma.masked_array(offsets))
    # host arguments too: histogram edges, select's value
    with pytest.raises(TypeError, match=r"pass bins.filled\(...\)"):
        gpuprim.histogram(np.arange(4.0), np.ma.array([0.0, 1.0, 2.0, 4.0], mask=[0, 1, 0, 0]))
    with pytest.raises(TypeError, match=r"pass value.filled\(...\)"):
        gpuprim.select(np.arange(4.0), op=">", value=np.ma.array(2.0, mask=True))
    for bounds in (np.ma.array([0.0, 4.0], mask=[1, 0]), (np.ma.masked, 4.0)):
        with pytest.raises(TypeError, match=r"pass range.filled\(...\)"):
            gpuprim.histogram(np.arange(5.0), bins=4, range=bounds)
    # a mask of nothing is still a masked array; filled() / compressed() work
    with pytest.raises(TypeError, match=message):
        gpuprim.sort(np.ma.masked_array(data))
    np.testing.assert_array_equal(gpuprim.sort(m.filled(0)), [0, 2, 3, 5])
    np.testing.assert_array_equal(gpuprim.sort(m.compressed()), [2, 3, 5])
    np.testing.assert_array_equal(gpuprim.sort(data), [1, 2, 3, 5])  # plain arrays as before


def test_integer_sums_widen_like_numpy():
    """Issue 35: sum(np.full(3, 2**30, np.int32)) was -1073741824 (wrapped in
    int32); numpy's is 3221225472 (int64). Sums and scans of integers
    narrower than 64 bits accumulate and return int64 (uint64 for unsigned),
    as numpy's do; dtype= chooses, and out= sums in out's dtype."""
    x = np.full(3, 2 ** 30, np.int32)
    total = gpuprim.sum(x)
    assert total == 3221225472 and total.dtype == np.int64 and total == np.sum(x)
    assert gpuprim.sum(x, dtype=np.int32) == -1073741824  # the old wrapping, when asked
    np.testing.assert_array_equal(gpuprim.cumsum(x), [2 ** 30, 2 ** 31, 3 * 2 ** 30])
    assert gpuprim.cumsum(x).dtype == np.int64
    u = np.full(5, 200, np.uint8)
    assert gpuprim.sum(u) == 1000 and gpuprim.sum(u).dtype == np.uint64
    assert gpuprim.cumsum(u).dtype == np.uint64 and gpuprim.cumsum(u)[-1] == 1000
    # dtype= in any spelling, floats too (numpy's np.sum(x, dtype=...))
    for spelling in ("int16", np.int16, np.dtype("int16"), "i2"):
        assert gpuprim.sum(x, dtype=spelling).dtype == np.int16
    assert gpuprim.sum(u, dtype=np.float64) == 1000.0 and gpuprim.sum(u, dtype=float).dtype == np.float64
    np.testing.assert_array_equal(gpuprim.cumsum(u, dtype=np.int8), np.cumsum(u, dtype=np.int8))
    # out=: numpy sums in out's dtype (in place: wraps in x's own)
    y = np.array([100, 100, 100], np.int8)
    assert gpuprim.cumsum(y, out=y) is y
    np.testing.assert_array_equal(y, np.cumsum(np.array([100, 100, 100], np.int8),
                                               out=np.empty(3, np.int8)))
    wide = np.empty(3, np.int64)
    assert gpuprim.cumsum(np.array([100, 100, 100], np.int8), out=wide) is wide
    np.testing.assert_array_equal(wide, [100, 200, 300])
    with pytest.raises(TypeError, match="out has dtype int8, expected int64"):
        gpuprim.cumsum(y, out=y, dtype=np.int64)
    # per row, per segment, scan("sum"), Context methods: the same rule
    rows = np.full((2, 3), 100, np.int8)
    assert gpuprim.sum(rows, axis=-1).tolist() == [300, 300]
    assert gpuprim.sum(rows, axis=-1).dtype == np.int64
    assert gpuprim.cumsum(rows, axis=-1)[0].tolist() == [100, 200, 300]
    assert gpuprim.scan(rows, "sum", axis=-1, exclusive=True)[1].tolist() == [0, 100, 200]
    offsets = np.array([0, 2, 6], np.int64)
    flat = rows.reshape(-1)
    assert gpuprim.segment_sum(flat, offsets).tolist() == [200, 400]
    assert gpuprim.segment_sum(flat, offsets, dtype=np.int8).tolist() == [-56, -112]
    got = gpuprim.segment_cumsum(flat, np.array([1, 4], np.int64))
    assert got.dtype == np.int64 and got.tolist() == [100, 100, 200, 300, 100, 100]
    assert gpuprim.segment_scan(flat, offsets, "sum").dtype == np.int64
    with gpuprim.Context("cpu") as context:
        assert context.sum(x) == 3221225472 and context.cumsum(x)[-1] == 3 * 2 ** 30
        assert context.segment_sum(flat, offsets, dtype="int16").dtype == np.int16
    # min/max and their scans keep x's dtype; 64-bit sums wrap as numpy's do
    assert gpuprim.min(y).dtype == np.int8 and gpuprim.scan(y, "max").dtype == np.int8
    assert gpuprim.scan(y, "max", dtype=np.int64).dtype == np.int64
    big = np.array([2 ** 62, 2 ** 62], np.int64)
    assert gpuprim.sum(big) == np.sum(big) == -2 ** 63
    # floats as before: float16 sums return float16 (numpy's too), float32 float32
    assert gpuprim.sum(np.ones(10, np.float16)).dtype == np.float16 == np.sum(np.ones(3, np.float16)).dtype
    assert gpuprim.cumsum(np.ones(10, np.float32)).dtype == np.float32
    assert gpuprim.sum(np.ones(10, np.float16), dtype=np.float32).dtype == np.float32
    # a dtype that is none of the library's
    for bad in (np.complex64, "bool", np.float128):
        with pytest.raises(TypeError, match="dtype must be one of"):
            gpuprim.sum(x, dtype=bad)
        with pytest.raises(TypeError, match="dtype must be one of"):
            gpuprim.cumsum(x, dtype=bad)


def test_sum_dtype_rules_by_framework():
    """The default sum dtype: numpy's rule for numpy and CuPy arrays, torch's
    (int64 for every integer narrower than 64 bits) for torch tensors."""
    from gpuprim import _arrays
    numpy_rule = {"int8": "int64", "int16": "int64", "int32": "int64", "int64": "int64",
                  "uint8": "uint64", "uint16": "uint64", "uint32": "uint64", "uint64": "uint64",
                  "float16": "float16", "bfloat16": "bfloat16", "float32": "float32",
                  "float64": "float64"}
    for name, wide in numpy_rule.items():
        for kind in ("numpy", "cupy"):
            assert _arrays.sum_dtype_name(_arrays.Array(None, kind, 0, name, 0, False, -1, 1)) == wide
        if name in DTYPES:
            assert np.dtype(wide) == np.sum(np.zeros(1, name)).dtype  # numpy's own
        torch_wide = "int64" if name[0] in "iu" and not name.endswith("64") else wide
        assert _arrays.sum_dtype_name(_arrays.Array(None, "torch", 0, name, 0, False, -1, 1)) == \
            torch_wide


def valid_bools(a):
    """Whether every byte of the bool array is 0 or 1 (numpy's own bools)."""
    a = np.asarray(a)
    return a.dtype == np.bool_ and bool((a.view(np.uint8) <= 1).all())


def test_bool_arrays():
    """bool arrays (issue 35; refused before): sorts, top-k, min/max and
    their scans as bools (their bytes as uint8); sums and cumsums count the
    True elements in int64, as numpy's do; dot refuses them."""
    for n in (0, 1, 2, 1001, 70001):
        x = rng.random(n) < 0.4
        got = gpuprim.sort(x)
        assert got.dtype == np.bool_ and valid_bools(got)
        np.testing.assert_array_equal(got, np.sort(x, kind="stable"))
        np.testing.assert_array_equal(gpuprim.sort(x, descending=True), np.sort(x)[::-1])
        np.testing.assert_array_equal(gpuprim.argsort(x), np.argsort(x, kind="stable"))
        np.testing.assert_array_equal(gpuprim.argsort(x, descending=True),
                                      sort_permutation(x, descending=True))
        k = min(n, 7)
        values, indices = gpuprim.topk(x, k)
        assert values.dtype == np.bool_ and valid_bools(values)
        np.testing.assert_array_equal(indices, sort_permutation(x, descending=True)[:k])
        np.testing.assert_array_equal(values, x[indices])
        total = gpuprim.sum(x)
        assert total.dtype == np.int64 == np.sum(x).dtype and total == np.count_nonzero(x)
        c = gpuprim.cumsum(x)
        assert c.dtype == np.int64 == np.cumsum(x).dtype
        np.testing.assert_array_equal(c, np.cumsum(x))
        np.testing.assert_array_equal(gpuprim.cumsum(x, exclusive=True)[1:], np.cumsum(x)[:-1])
        low, high = gpuprim.min(x), gpuprim.max(x)
        assert type(low) is np.bool_ and type(high) is np.bool_
        # numpy has no min of nothing; ours is the identity: True for min, False for max
        assert low == (x.min() if n else True) and high == (x.max() if n else False)
        for op, ufunc in (("min", np.minimum), ("max", np.maximum)):
            got = gpuprim.scan(x, op)
            assert got.dtype == np.bool_ and valid_bools(got)
            np.testing.assert_array_equal(got, ufunc.accumulate(x))
            got = gpuprim.scan(x, op, exclusive=True)
            assert valid_bools(got)  # min's first element: True, not uint8's 255
            if n:
                assert got[0] == (op == "min")
                np.testing.assert_array_equal(got[1:], ufunc.accumulate(x)[:-1])
    # per row: an empty row's min is True (a valid bool), its sum 0
    rows = rng.random((6, 33)) < 0.5
    np.testing.assert_array_equal(gpuprim.sort(rows, axis=-1), np.sort(rows, axis=-1))
    assert gpuprim.sum(rows, axis=-1).dtype == np.int64
    np.testing.assert_array_equal(gpuprim.sum(rows, axis=-1), rows.sum(axis=-1))
    np.testing.assert_array_equal(gpuprim.min(rows, axis=-1), rows.min(axis=-1))
    np.testing.assert_array_equal(gpuprim.cumsum(rows, axis=-1), np.cumsum(rows, axis=-1))
    empty_rows = np.zeros((3, 0), bool)
    got = gpuprim.min(empty_rows, axis=-1)
    assert valid_bools(got) and got.tolist() == [True] * 3
    assert gpuprim.max(empty_rows, axis=-1).tolist() == [False] * 3
    assert gpuprim.sum(empty_rows, axis=-1).tolist() == [0] * 3
    # per segment, empty segments too
    flat = rng.random(50) < 0.5
    offsets = np.array([0, 10, 10, 40, 50], np.int64)
    got = gpuprim.segment_min(flat, offsets)
    assert valid_bools(got)
    np.testing.assert_array_equal(got, [flat[0:10].min(), True, flat[10:40].min(), flat[40:].min()])
    np.testing.assert_array_equal(gpuprim.segment_max(flat, offsets)[1], False)
    counts = gpuprim.segment_sum(flat, offsets)
    assert counts.dtype == np.int64 and counts.tolist() == [int(flat[a:b].sum()) for a, b in
                                                            ((0, 10), (10, 10), (10, 40), (40, 50))]
    got = gpuprim.segment_scan(flat, offsets, "min", exclusive=True)
    assert valid_bools(got) and got[0] and got[10] and got[40]
    assert gpuprim.segment_cumsum(flat, offsets).dtype == np.int64
    np.testing.assert_array_equal(gpuprim.segment_sort(flat, offsets)[:10], np.sort(flat[:10]))
    values, indices = gpuprim.segment_topk(flat, offsets, 3)
    assert values.dtype == np.bool_ and not values[1].any() and (indices[1] == -1).all()
    # sort pairs: bool keys and bool values move bit for bit
    keys, vals = gpuprim.sort(flat, values=~flat)
    assert vals.dtype == np.bool_ and (vals == ~keys).all()
    k, v = gpuprim.sort(np.arange(50, dtype=np.int32)[::-1].copy(), values=flat)
    np.testing.assert_array_equal(v, flat[::-1])
    # in place, and dtype= for the count
    y = flat.copy()
    assert gpuprim.sort(y, out=y) is y and (y == np.sort(flat)).all()
    many = np.ones(300, bool)
    assert gpuprim.sum(many, dtype=np.uint8) == 44  # 300 in uint8, when asked
    assert gpuprim.sum(many, dtype=np.int32).dtype == np.int32
    # refused: dot, sums made in bool, bool offsets, bool indices
    with pytest.raises(TypeError, match="dot does not take bool"):
        gpuprim.dot(flat, flat)
    with pytest.raises(TypeError, match="dtype must be one of"):
        gpuprim.sum(flat, dtype=bool)
    with pytest.raises(TypeError, match="out has dtype bool"):
        gpuprim.cumsum(flat, out=np.empty(50, bool))
    with pytest.raises(TypeError, match="offsets"):
        gpuprim.segment_sum(flat, np.array([True, True]))
    with pytest.raises(TypeError, match="index dtype"):
        gpuprim.argsort(flat, dtype=bool)
    with pytest.raises(TypeError, match="expected bool"):
        gpuprim.sort(flat, out=np.empty(50, np.uint8))


class UserArray(np.ndarray):
    """A numpy subclass defined outside numpy (as astropy's Quantity or a
    user's own): read as the numpy array it is."""


def test_numpy_subclasses_are_numpy_arrays():
    x = np.array([3.0, 1.0, 2.0]).view(UserArray)
    result = gpuprim.sort(x)
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, [1.0, 2.0, 3.0])
    out = np.zeros(3).view(UserArray)
    assert gpuprim.sort(np.array([3.0, 1.0, 2.0]), out=out) is out
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    frozen = x.copy()
    frozen.setflags(write=False)
    np.testing.assert_array_equal(gpuprim.sort(frozen), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="out: output array is read-only"):
        gpuprim.sort(x, out=frozen)
    with pytest.raises(TypeError, match="native byte order"):
        gpuprim.sort(np.arange(3, dtype=">f8").view(UserArray))
    np.testing.assert_array_equal(gpuprim.cumsum(np.arange(3, dtype=np.int32).view(UserArray)), [0, 1, 3])
    np.testing.assert_array_equal(gpuprim.unique(np.array([3, 1, 3]).view(UserArray)), [1, 3])
    np.testing.assert_array_equal(gpuprim.segment_sort(x, np.array([0, 3])), [1.0, 2.0, 3.0])


def test_refusals_name_the_functions_own_arguments():
    with pytest.raises(ValueError, match="compress: condition has 1 elements, a has 4"):
        gpuprim.compress(np.array([True]), np.arange(4))
    with pytest.raises(TypeError, match="compress: condition must be of bool or an integer dtype"):
        gpuprim.compress(np.ones(4), np.arange(4))
    with pytest.raises(ValueError, match="condition is not C-contiguous"):
        gpuprim.compress(np.ones(8, bool)[::2], np.arange(4))
    keys = np.array([3, 2, 1, 0])
    with pytest.raises(ValueError, match="keys is not C-contiguous"):
        gpuprim.sort_by_key(np.arange(8)[::2], np.arange(4.0))
    with pytest.raises(ValueError, match="values shares memory with keys"):
        gpuprim.sort_by_key(keys, keys)
    with pytest.raises(ValueError, match="values has 3 elements, keys 4"):
        gpuprim.sort_by_key(keys, np.arange(3.0))
    with pytest.raises(ValueError, match="merge: values_a has 3 elements, a has 4"):
        gpuprim.merge(np.array([1, 2, 3, 4]), np.array([2, 5]), values_a=np.arange(3.0), values_b=np.arange(2.0))
    with pytest.raises(ValueError, match="merge: values_b has 3 elements, b has 2"):
        gpuprim.merge(np.array([1, 2, 3, 4]), np.array([2, 5]), values_a=np.arange(4.0), values_b=np.arange(3.0))
    with pytest.raises(gpuprim.InvalidArgumentError, match=r"begin_bit=None and end_bit=65: .* <= 64"):
        gpuprim.sort(np.arange(4, dtype=np.int64), end_bit=65)
    with pytest.raises(gpuprim.InvalidArgumentError, match=r"begin_bit=8 and end_bit=4: .* <= 32"):
        gpuprim.argsort(np.arange(4, dtype=np.int32), begin_bit=8, end_bit=4)
    with pytest.raises(gpuprim.InvalidArgumentError, match=r"begin_bit=16 and end_bit=None: .* <= 16"):
        gpuprim.segment_sort(np.arange(4, dtype=np.uint16), np.array([0, 4]), begin_bit=16)
    for call in (gpuprim.sort, gpuprim.argsort, lambda x: gpuprim.topk(x, 1)):
        with pytest.raises(ValueError, match="a 0-d array has no axis -1"):
            call(np.array(5.0))
    offsets_and_out = np.array([0, 2, 4, 9, 9, 9])
    with pytest.raises(ValueError, match="an output .* shares memory with offsets"):
        gpuprim.segment_sort(np.arange(6)[::-1].copy(), offsets_and_out[:3], out=offsets_and_out)
    np.testing.assert_array_equal(offsets_and_out, [0, 2, 4, 9, 9, 9])
