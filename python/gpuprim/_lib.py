# SPDX-License-Identifier: Apache-2.0
"""The shared libgpuprim through ctypes: loading, signatures, statuses."""
import ctypes
import glob
import os

# Values of the C enums in gpuprim.h (part of the ABI).
BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA = 0, 1, 2
OP_SUM, OP_MIN, OP_MAX = 0, 1, 2
SCAN_INCLUSIVE, SCAN_EXCLUSIVE = 0, 1
ASCENDING, DESCENDING = 0, 1
COMM_NCCL, COMM_MPI = 1, 2  # gpuprim_comm_kind_t (experimental)
# dtype names as numpy, PyTorch and CuPy spell them. bfloat16: torch.bfloat16,
# or numpy arrays of ml_dtypes.bfloat16 (when ml_dtypes is installed).
DTYPE_CODES = {"int32": 0, "uint32": 1, "int64": 2, "uint64": 3, "float32": 4, "float64": 5,
               "float16": 6, "bfloat16": 7, "int8": 8, "uint8": 9, "int16": 10, "uint16": 11}

SUCCESS = 0
_STATUS_NAMES = {
    1: "NULL_POINTER", 2: "INVALID_HANDLE", 3: "CONTEXT_MISMATCH", 4: "INVALID_ENUM",
    5: "DTYPE_MISMATCH", 6: "SIZE_MISMATCH", 7: "OUT_OF_RANGE", 8: "OVERFLOW",
    9: "INVALID_ARGUMENT", 10: "OUT_OF_MEMORY", 11: "BACKEND_UNAVAILABLE", 12: "DEVICE",
    13: "INTERNAL",
}


class GpuprimError(Exception):
    """Base of every error libgpuprim reports. `status` is the C status code,
    `status_name` its name (e.g. "OUT_OF_RANGE"), `message` the library's text."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = _STATUS_NAMES.get(status, "UNKNOWN")
        self.message = message
        super().__init__(f"{message} [{self.status_name}]" if message else self.status_name)


class InvalidArgumentError(GpuprimError, ValueError):
    """A bad argument: sizes, ranges, overlap, options."""


class DtypeError(GpuprimError, TypeError):
    """Arrays whose dtypes must agree do not."""


class OutOfMemoryError(GpuprimError, MemoryError):
    """Host or device memory could not be allocated."""


class DeviceError(GpuprimError, RuntimeError):
    """The CUDA runtime failed, the backend is unavailable, or an internal error."""


_ERROR_CLASSES = {5: DtypeError, 10: OutOfMemoryError, 11: DeviceError, 12: DeviceError,
                  13: DeviceError, 1: DeviceError, 2: DeviceError}


def error_for(status, message):
    return _ERROR_CLASSES.get(status, InvalidArgumentError)(status, message)


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint64), ("backend", ctypes.c_int32),
                ("device_ordinal", ctypes.c_int32), ("cuda_stream", ctypes.c_void_p),
                ("cpu_threads", ctypes.c_int32)]


class SortOptions(ctypes.Structure):
    """gpuprim_sort_options_t: fill with gpuprim_sort_options_init first."""
    _fields_ = [("struct_size", ctypes.c_uint64), ("order", ctypes.c_int32),
                ("begin_bit", ctypes.c_uint32), ("end_bit", ctypes.c_uint32)]


class Segments(ctypes.Structure):
    """gpuprim_segments_t: fill with gpuprim_segments_init_rows (uniform rows
    of a contiguous row-major array) or gpuprim_segments_init_offsets (CSR
    offsets: a buffer of segment count + 1 integers) first."""
    _fields_ = [("struct_size", ctypes.c_uint64), ("offsets", ctypes.c_void_p),
                ("row_count", ctypes.c_uint64), ("row_length", ctypes.c_uint64)]


def _library_path():
    explicit = os.environ.get("GPUPRIM_LIBRARY")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    for pattern in ("libgpuprim.so*", "libgpuprim*.dylib", "gpuprim*.dll"):
        found = sorted(glob.glob(os.path.join(here, pattern)))
        if found:
            return found[0]
    raise ImportError(
        "gpuprim: the shared libgpuprim is not in the package; install the package with "
        "'pip install .' from the repository root, or set GPUPRIM_LIBRARY to a built "
        "libgpuprim.so")


def load():
    path = _library_path()
    lib = ctypes.CDLL(path)
    vp, u64, i32, sz = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_size_t
    signatures = {
        "gpuprim_get_error_string": (ctypes.c_char_p, [i32]),
        "gpuprim_version_string": (ctypes.c_char_p, []),
        "gpuprim_context_options_init": (None, [ctypes.POINTER(ContextOptions)]),
        "gpuprim_context_create": (i32, [ctypes.POINTER(ContextOptions), ctypes.POINTER(vp),
                                         ctypes.c_char_p, sz]),
        "gpuprim_context_destroy": (i32, [vp]),
        "gpuprim_context_get_backend": (i32, [vp, ctypes.POINTER(i32)]),
        "gpuprim_context_get_device": (i32, [vp, ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, sz]),
        "gpuprim_context_last_error": (ctypes.c_char_p, [vp]),
        "gpuprim_context_synchronize": (i32, [vp]),
        "gpuprim_buffer_create": (i32, [vp, i32, u64, ctypes.POINTER(vp)]),
        "gpuprim_buffer_wrap": (i32, [vp, i32, vp, u64, ctypes.POINTER(vp)]),
        "gpuprim_buffer_destroy": (i32, [vp, vp]),
        "gpuprim_buffer_upload": (i32, [vp, vp, u64, vp, u64]),
        "gpuprim_buffer_download": (i32, [vp, vp, u64, vp, u64]),
        "gpuprim_reduce": (i32, [vp, i32, vp, vp]),
        "gpuprim_reduce_to_buffer": (i32, [vp, i32, vp, vp]),
        "gpuprim_argreduce": (i32, [vp, i32, vp, ctypes.POINTER(u64)]),
        "gpuprim_dot": (i32, [vp, vp, vp, vp]),
        "gpuprim_dot_to_buffer": (i32, [vp, vp, vp, vp]),
        "gpuprim_scan": (i32, [vp, i32, i32, vp, vp]),
        "gpuprim_sort": (i32, [vp, vp, vp, vp, vp, i32]),
        "gpuprim_sort_options_init": (None, [ctypes.POINTER(SortOptions)]),
        "gpuprim_sort_with_options": (i32, [vp, vp, vp, vp, vp, ctypes.POINTER(SortOptions)]),
        "gpuprim_argsort": (i32, [vp, vp, vp, vp, ctypes.POINTER(SortOptions)]),
        "gpuprim_segments_init_rows": (None, [ctypes.POINTER(Segments), u64, u64]),
        "gpuprim_segments_init_offsets": (None, [ctypes.POINTER(Segments), vp]),
        "gpuprim_segmented_sort": (i32, [vp, ctypes.POINTER(Segments), vp, vp, vp, vp,
                                         ctypes.POINTER(SortOptions)]),
        "gpuprim_segmented_argsort": (i32, [vp, ctypes.POINTER(Segments), vp, vp, vp,
                                            ctypes.POINTER(SortOptions)]),
        "gpuprim_segmented_reduce": (i32, [vp, i32, ctypes.POINTER(Segments), vp, vp]),
        "gpuprim_segmented_scan": (i32, [vp, i32, i32, ctypes.POINTER(Segments), vp, vp]),
        "gpuprim_topk": (i32, [vp, vp, u64, i32, vp, vp]),
        "gpuprim_segmented_topk": (i32, [vp, ctypes.POINTER(Segments), vp, u64, i32, vp, vp]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    # The distributed calls (experimental section of gpuprim.h): optional, so
    # the package still loads a library from before them. All or none.
    distributed = {
        "gpuprim_context_attach_communicator": (i32, [vp, i32, vp]),
        "gpuprim_context_detach_communicator": (i32, [vp]),
        "gpuprim_context_get_rank": (i32, [vp, ctypes.POINTER(ctypes.c_int32),
                                           ctypes.POINTER(ctypes.c_int32)]),
        "gpuprim_distributed_reduce": (i32, [vp, i32, vp, vp]),
        "gpuprim_distributed_scan": (i32, [vp, i32, i32, vp, vp]),
        "gpuprim_distributed_sort": (i32, [vp, vp, vp, vp, vp, ctypes.POINTER(SortOptions)]),
        "gpuprim_distributed_argsort": (i32, [vp, vp, vp, vp, ctypes.POINTER(SortOptions)]),
        "gpuprim_distributed_topk": (i32, [vp, vp, u64, i32, vp, vp]),
    }
    has_distributed = all(hasattr(lib, name) for name in distributed)
    if has_distributed:
        for name, (restype, argtypes) in distributed.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
    return lib, path, has_distributed


LIB, LIBRARY_PATH, HAS_DISTRIBUTED = load()
