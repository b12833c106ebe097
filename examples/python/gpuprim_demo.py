#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libgpuprim from Python through ctypes, on numpy arrays.

Uploads arrays, reduces, scans, sorts key/value pairs, downloads, shows an
error (status + message) and checks every result against numpy.

    python3 gpuprim_demo.py [--library path/to/libgpuprim.so]

The shared library is looked up in --library, then $GPUPRIM_LIBRARY, then the
system's library path. GPUPRIM_BACKEND=cpu|cuda chooses the backend.
Exit status: 0 all results right, 1 a wrong result, 2 setup failed,
77 numpy is not installed (reported as a skip by the test suite).
"""
import argparse
import ctypes
import ctypes.util
import os
import sys

try:
    import numpy as np
except ImportError:
    print("gpuprim_demo.py: skipped, numpy is not installed")
    sys.exit(77)

# Values of the C enums in gpuprim.h (part of the ABI).
DTYPES = {np.dtype(np.int32): 0, np.dtype(np.uint32): 1, np.dtype(np.int64): 2,
          np.dtype(np.uint64): 3, np.dtype(np.float32): 4, np.dtype(np.float64): 5}
OP_SUM, OP_MIN, OP_MAX = 0, 1, 2
SCAN_INCLUSIVE, SCAN_EXCLUSIVE = 0, 1
ASCENDING, DESCENDING = 0, 1
BACKEND_CPU, BACKEND_CUDA = 1, 2
SUCCESS, ERROR_DTYPE_MISMATCH, ERROR_OUT_OF_RANGE = 0, 5, 7


class GpuprimError(Exception):
    def __init__(self, function, status, name, message):
        super().__init__(f"{function}: status {status} ({name}): {message}")
        self.status = status
        self.name = name
        self.message = message


class Gpuprim:
    """A context plus thin wrappers; every failure raises GpuprimError."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        vp, u64, i32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int
        signatures = {
            "gpuprim_get_error_string": (ctypes.c_char_p, [i32]),
            "gpuprim_version_string": (ctypes.c_char_p, []),
            "gpuprim_context_create": (i32, [vp, ctypes.POINTER(vp), ctypes.c_char_p, ctypes.c_size_t]),
            "gpuprim_context_destroy": (i32, [vp]),
            "gpuprim_context_get_backend": (i32, [vp, ctypes.POINTER(i32)]),
            "gpuprim_context_get_device": (i32, [vp, ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p,
                                                 ctypes.c_size_t]),
            "gpuprim_context_last_error": (ctypes.c_char_p, [vp]),
            "gpuprim_context_synchronize": (i32, [vp]),
            "gpuprim_buffer_create": (i32, [vp, i32, u64, ctypes.POINTER(vp)]),
            "gpuprim_buffer_wrap": (i32, [vp, i32, vp, u64, ctypes.POINTER(vp)]),
            "gpuprim_buffer_destroy": (i32, [vp, vp]),
            "gpuprim_buffer_upload": (i32, [vp, vp, u64, vp, u64]),
            "gpuprim_buffer_download": (i32, [vp, vp, u64, vp, u64]),
            "gpuprim_reduce": (i32, [vp, i32, vp, vp]),
            "gpuprim_dot": (i32, [vp, vp, vp, vp]),
            "gpuprim_scan": (i32, [vp, i32, i32, vp, vp]),
            "gpuprim_sort": (i32, [vp, vp, vp, vp, vp, i32]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        self.lib = lib
        self.ctx = ctypes.c_void_p()
        message = ctypes.create_string_buffer(512)
        status = lib.gpuprim_context_create(None, ctypes.byref(self.ctx), message, len(message))
        if status != SUCCESS:
            raise GpuprimError("gpuprim_context_create", status, self.status_name(status),
                               message.value.decode())

    def status_name(self, status):
        return self.lib.gpuprim_get_error_string(status).decode()

    def call(self, name, *args):
        status = getattr(self.lib, name)(self.ctx, *args)
        if status != SUCCESS:
            raise GpuprimError(name, status, self.status_name(status),
                               self.lib.gpuprim_context_last_error(self.ctx).decode())

    def close(self):
        self.lib.gpuprim_context_destroy(self.ctx)

    def device(self):
        backend, ordinal = ctypes.c_int(), ctypes.c_int32()
        name = ctypes.create_string_buffer(256)
        self.call("gpuprim_context_get_backend", ctypes.byref(backend))
        self.call("gpuprim_context_get_device", ctypes.byref(ordinal), name, len(name))
        return ("cuda" if backend.value == BACKEND_CUDA else "cpu"), ordinal.value, name.value.decode()

    # Buffers -----------------------------------------------------------------
    def empty(self, dtype, count):
        handle = ctypes.c_void_p()
        self.call("gpuprim_buffer_create", DTYPES[np.dtype(dtype)], count, ctypes.byref(handle))
        return Buffer(self, handle, np.dtype(dtype), count)

    def upload(self, array):
        array = np.ascontiguousarray(array)
        buffer = self.empty(array.dtype, array.size)
        buffer.upload(array)
        return buffer

    # Primitives --------------------------------------------------------------
    def reduce(self, op, buffer):
        result = np.zeros(1, dtype=buffer.dtype)
        self.call("gpuprim_reduce", op, buffer.handle, result.ctypes.data)
        return result[0]

    def dot(self, a, b):
        result = np.zeros(1, dtype=a.dtype)
        self.call("gpuprim_dot", a.handle, b.handle, result.ctypes.data)
        return result[0]

    def scan(self, op, kind, input, output):
        self.call("gpuprim_scan", op, kind, input.handle, output.handle)

    def sort(self, keys_in, keys_out, values_in=None, values_out=None, order=ASCENDING):
        self.call("gpuprim_sort", keys_in.handle, values_in.handle if values_in else None,
                  keys_out.handle, values_out.handle if values_out else None, order)


class Buffer:
    def __init__(self, gp, handle, dtype, count):
        self.gp, self.handle, self.dtype, self.count = gp, handle, dtype, count

    def upload(self, array, offset=0):
        array = np.ascontiguousarray(array, dtype=self.dtype)
        self.gp.call("gpuprim_buffer_upload", self.handle, offset, array.ctypes.data, array.size)

    def download(self, offset=0, count=None):
        count = self.count - offset if count is None else count
        array = np.empty(count, dtype=self.dtype)
        self.gp.call("gpuprim_buffer_download", self.handle, offset, array.ctypes.data, count)
        return array

    def destroy(self):
        self.gp.call("gpuprim_buffer_destroy", self.handle)


def locate_library(argument):
    candidates = [argument, os.environ.get("GPUPRIM_LIBRARY"), ctypes.util.find_library("gpuprim")]
    for candidate in candidates:
        if candidate:
            return candidate
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", help="path to the shared libgpuprim (.so/.dylib/.dll)")
    parser.add_argument("--count", type=int, default=1_000_003)
    args = parser.parse_args()
    path = locate_library(args.library)
    if not path:
        print("gpuprim_demo.py: libgpuprim not found; pass --library or set GPUPRIM_LIBRARY")
        return 2
    try:
        gp = Gpuprim(path)
    except (OSError, GpuprimError) as error:
        print(f"gpuprim_demo.py: cannot start: {error}")
        return 2

    failures = []

    def check(condition, what):
        print(f"  {'ok   ' if condition else 'WRONG'} {what}")
        if not condition:
            failures.append(what)

    backend, ordinal, name = gp.device()
    version = gp.lib.gpuprim_version_string().decode()
    print(f"libgpuprim {version} via ctypes ({path}): backend {backend}, device {ordinal} \"{name}\"")
    n = args.count
    rng = np.random.default_rng(12345)

    # Reduce: float64 sum within n * eps * sum|x|; integer min/max/sum exact (sums wrap).
    x = rng.standard_normal(n) * 100.0
    xb = gp.upload(x)
    total = gp.reduce(OP_SUM, xb)
    tolerance = n * np.finfo(np.float64).eps * np.abs(x).sum()
    check(abs(total - x.sum()) <= tolerance, f"f64 sum {total:.6f} vs numpy {x.sum():.6f}")
    check(gp.reduce(OP_MIN, xb) == x.min() and gp.reduce(OP_MAX, xb) == x.max(), "f64 min and max")
    check(abs(gp.dot(xb, xb) - np.dot(x, x)) <= 2 * n * np.finfo(np.float64).eps * np.dot(x, x), "f64 dot")
    k = rng.integers(0, 2**32, size=n, dtype=np.uint32)
    kb = gp.upload(k)
    check(gp.reduce(OP_SUM, kb) == np.sum(k, dtype=np.uint32), "u32 sum (wraps modulo 2^32)")
    check(gp.reduce(OP_MAX, kb) == k.max(), "u32 max")

    # Scan: int64 inclusive and exclusive sums, exact; in place and out of place.
    v = rng.integers(-1000, 1000, size=n, dtype=np.int64)
    vb = gp.upload(v)
    out = gp.empty(np.int64, n)
    gp.scan(OP_SUM, SCAN_INCLUSIVE, vb, out)
    check(np.array_equal(out.download(), np.cumsum(v)), "i64 inclusive sum scan")
    gp.scan(OP_SUM, SCAN_EXCLUSIVE, vb, vb)
    check(np.array_equal(vb.download(), np.concatenate(([0], np.cumsum(v)[:-1]))),
          "i64 exclusive sum scan, in place")
    gp.scan(OP_MAX, SCAN_INCLUSIVE, kb, kb)
    check(np.array_equal(kb.download(), np.maximum.accumulate(k)), "u32 inclusive max scan, in place")

    # Sort pairs: int32 keys with many duplicates and their indices; stable like numpy's.
    keys = rng.integers(-50, 50, size=n, dtype=np.int32)
    index = np.arange(n, dtype=np.int64)
    keys_b, index_b = gp.upload(keys), gp.upload(index)
    keys_out, index_out = gp.empty(np.int32, n), gp.empty(np.int64, n)
    gp.sort(keys_b, keys_out, index_b, index_out)
    order = np.argsort(keys, kind="stable")
    check(np.array_equal(keys_out.download(), keys[order]) and np.array_equal(index_out.download(), order),
          "sort i32 keys with i64 values, stable")
    check(np.array_equal(keys_b.download(), keys), "out-of-place sort left its input alone")
    # float32 keys descending, in place; NaN sorts above +inf, so it comes first
    f = rng.standard_normal(n).astype(np.float32)
    f[rng.integers(0, n, size=10)] = np.nan
    f[:2] = [np.inf, -np.inf]
    fb = gp.upload(f)
    gp.sort(fb, fb, order=DESCENDING)
    expected = np.sort(f)[::-1]
    expected = np.concatenate((expected[np.isnan(expected)], expected[~np.isnan(expected)]))
    check(np.array_equal(fb.download(), expected, equal_nan=True), "sort f32 keys descending (NaN first)")

    # Errors: a status, its name and a message that names the problem; nothing changes.
    try:
        xb.download(offset=n - 5, count=10)
        check(False, "download past the end fails")
    except GpuprimError as error:
        print(f"  error shown: status {error.status} ({error.name}): {error.message}")
        check(error.status == ERROR_OUT_OF_RANGE and error.name and error.message,
              "download past the end: OUT_OF_RANGE with a message")
    before = out.download()
    try:
        gp.scan(OP_SUM, SCAN_INCLUSIVE, xb, out)  # float64 into int64
        check(False, "scan into a buffer of another dtype fails")
    except GpuprimError as error:
        print(f"  error shown: status {error.status} ({error.name}): {error.message}")
        check(error.status == ERROR_DTYPE_MISMATCH and np.array_equal(out.download(), before),
              "dtype mismatch reported, output untouched")

    for buffer in (xb, kb, vb, out, keys_b, index_b, keys_out, index_out, fb):
        buffer.destroy()
    gp.close()
    if failures:
        print(f"gpuprim_demo.py: {len(failures)} WRONG: {failures}")
        return 1
    print("gpuprim_demo.py: all results match numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
