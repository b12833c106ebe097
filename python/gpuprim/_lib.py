# SPDX-License-Identifier: Apache-2.0
"""The shared libgpuprim through the compiled layer gpuprim._ext: loading,
the C enums' values (from gpuprim.h, compiled into _ext), statuses."""
import glob
import os

try:
    from . import _ext
except ImportError as error:  # no compiled layer next to this file
    raise ImportError(
        "gpuprim: the package's compiled layer (gpuprim._ext) is missing; install the package "
        "with 'pip install .' from the repository root (a CMake build with nanobind puts it in "
        f"<build>/python_extension: set GPUPRIM_EXTENSION_DIR to that folder) [{error}]") from None

# Values of the C enums in gpuprim.h (part of the ABI), as _ext was compiled with them.
BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA = _ext.BACKEND_AUTO, _ext.BACKEND_CPU, _ext.BACKEND_CUDA
OP_SUM, OP_MIN, OP_MAX = _ext.OP_SUM, _ext.OP_MIN, _ext.OP_MAX
SCAN_INCLUSIVE, SCAN_EXCLUSIVE = _ext.SCAN_INCLUSIVE, _ext.SCAN_EXCLUSIVE
ASCENDING, DESCENDING = _ext.ASCENDING, _ext.DESCENDING
SIDE_LEFT, SIDE_RIGHT = _ext.SIDE_LEFT, _ext.SIDE_RIGHT  # gpuprim_side_t (experimental)
RUNS_ALL, RUNS_NON_TRIVIAL = _ext.RUNS_ALL, _ext.RUNS_NON_TRIVIAL  # gpuprim_runs_t (experimental)
COMM_NCCL, COMM_MPI = _ext.COMM_NCCL, _ext.COMM_MPI  # gpuprim_comm_kind_t (experimental)
# gpuprim_offsets_check_t (experimental)
OFFSETS_CHECK_WAIT, OFFSETS_CHECK_DEFERRED = _ext.OFFSETS_CHECK_WAIT, _ext.OFFSETS_CHECK_DEFERRED
# dtype names as numpy, PyTorch and CuPy spell them. bfloat16: torch.bfloat16,
# or numpy arrays of ml_dtypes.bfloat16 (when ml_dtypes is installed).
DTYPE_CODES = dict(_ext.DTYPE_CODES)

SUCCESS = _ext.SUCCESS
STATUS_CODES = dict(_ext.STATUS_CODES)
_STATUS_NAMES = {code: name for name, code in STATUS_CODES.items()}


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


class NotCapturableError(GpuprimError, RuntimeError):
    """(Experimental.) The context's CUDA stream is capturing a CUDA graph and
    the call cannot be captured (it waits for the device, returns a value to
    the host, allocates, or its workspace would have to grow): refused before
    anything was enqueued, the capture is intact."""


_ERROR_CLASSES = {STATUS_CODES[name]: cls for name, cls in (
    ("DTYPE_MISMATCH", DtypeError), ("OUT_OF_MEMORY", OutOfMemoryError),
    ("BACKEND_UNAVAILABLE", DeviceError), ("DEVICE", DeviceError), ("INTERNAL", DeviceError),
    ("NULL_POINTER", DeviceError), ("INVALID_HANDLE", DeviceError),
    ("NOT_CAPTURABLE", NotCapturableError))}


def error_for(status, message):
    return _ERROR_CLASSES.get(status, InvalidArgumentError)(status, message)


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


LIBRARY_PATH = _library_path()
HAS_DISTRIBUTED = _ext.load(LIBRARY_PATH)
# The entry points, gpuprim_<name>(...) as in gpuprim.h: handles and
# addresses as ints (0: NULL), out-parameters returned after the status.
LIB = _ext
