// SPDX-License-Identifier: Apache-2.0
// gpuprim._ext: the package's compiled layer over libgpuprim. The constants
// of gpuprim.h's enums come from the header at compile time (the package has
// no copy of them to keep in step); load() opens the library the package
// found; raw_calls.cpp defines the entry points as Python functions.
#include "library.h"
#include "dlpack_calls.h"
#include "fast_calls.h"
#include "raw_calls.h"
#include "wrap_cache.h"

#include <nanobind/nanobind.h>

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace nb = nanobind;
using namespace gpuprim_ext;

namespace {

void define_constants(nb::module_ &m) {
#define GPUPRIM_EXT_CONSTANT(name, value) m.attr(name) = static_cast<int>(value)
    GPUPRIM_EXT_CONSTANT("SUCCESS", GPUPRIM_SUCCESS);
    GPUPRIM_EXT_CONSTANT("BACKEND_AUTO", GPUPRIM_BACKEND_AUTO);
    GPUPRIM_EXT_CONSTANT("BACKEND_CPU", GPUPRIM_BACKEND_CPU);
    GPUPRIM_EXT_CONSTANT("BACKEND_CUDA", GPUPRIM_BACKEND_CUDA);
    GPUPRIM_EXT_CONSTANT("OP_SUM", GPUPRIM_OP_SUM);
    GPUPRIM_EXT_CONSTANT("OP_MIN", GPUPRIM_OP_MIN);
    GPUPRIM_EXT_CONSTANT("OP_MAX", GPUPRIM_OP_MAX);
    GPUPRIM_EXT_CONSTANT("SCAN_INCLUSIVE", GPUPRIM_SCAN_INCLUSIVE);
    GPUPRIM_EXT_CONSTANT("SCAN_EXCLUSIVE", GPUPRIM_SCAN_EXCLUSIVE);
    GPUPRIM_EXT_CONSTANT("ASCENDING", GPUPRIM_ORDER_ASCENDING);
    GPUPRIM_EXT_CONSTANT("DESCENDING", GPUPRIM_ORDER_DESCENDING);
    GPUPRIM_EXT_CONSTANT("SIDE_LEFT", GPUPRIM_SIDE_LEFT);
    GPUPRIM_EXT_CONSTANT("SIDE_RIGHT", GPUPRIM_SIDE_RIGHT);
    GPUPRIM_EXT_CONSTANT("RUNS_ALL", GPUPRIM_RUNS_ALL);
    GPUPRIM_EXT_CONSTANT("RUNS_NON_TRIVIAL", GPUPRIM_RUNS_NON_TRIVIAL);
    GPUPRIM_EXT_CONSTANT("COMM_NCCL", GPUPRIM_COMM_NCCL);
    GPUPRIM_EXT_CONSTANT("COMM_MPI", GPUPRIM_COMM_MPI);
    GPUPRIM_EXT_CONSTANT("OFFSETS_CHECK_WAIT", GPUPRIM_OFFSETS_CHECK_WAIT);
    GPUPRIM_EXT_CONSTANT("OFFSETS_CHECK_DEFERRED", GPUPRIM_OFFSETS_CHECK_DEFERRED);
#undef GPUPRIM_EXT_CONSTANT

    // dtype names as numpy, PyTorch and CuPy spell them, with their codes.
    nb::dict dtypes;
    dtypes["int32"] = static_cast<int>(GPUPRIM_DTYPE_I32);
    dtypes["uint32"] = static_cast<int>(GPUPRIM_DTYPE_U32);
    dtypes["int64"] = static_cast<int>(GPUPRIM_DTYPE_I64);
    dtypes["uint64"] = static_cast<int>(GPUPRIM_DTYPE_U64);
    dtypes["float32"] = static_cast<int>(GPUPRIM_DTYPE_F32);
    dtypes["float64"] = static_cast<int>(GPUPRIM_DTYPE_F64);
    dtypes["float16"] = static_cast<int>(GPUPRIM_DTYPE_F16);
    dtypes["bfloat16"] = static_cast<int>(GPUPRIM_DTYPE_BF16);
    dtypes["int8"] = static_cast<int>(GPUPRIM_DTYPE_I8);
    dtypes["uint8"] = static_cast<int>(GPUPRIM_DTYPE_U8);
    dtypes["int16"] = static_cast<int>(GPUPRIM_DTYPE_I16);
    dtypes["uint16"] = static_cast<int>(GPUPRIM_DTYPE_U16);
    m.attr("DTYPE_CODES") = dtypes;

    // Status codes by name (gpuprim_status_t without its GPUPRIM_ERROR_ prefix).
    nb::dict statuses;
#define GPUPRIM_EXT_STATUS(name) statuses[#name] = static_cast<int>(GPUPRIM_ERROR_##name)
    GPUPRIM_EXT_STATUS(NULL_POINTER);
    GPUPRIM_EXT_STATUS(INVALID_HANDLE);
    GPUPRIM_EXT_STATUS(CONTEXT_MISMATCH);
    GPUPRIM_EXT_STATUS(INVALID_ENUM);
    GPUPRIM_EXT_STATUS(DTYPE_MISMATCH);
    GPUPRIM_EXT_STATUS(SIZE_MISMATCH);
    GPUPRIM_EXT_STATUS(OUT_OF_RANGE);
    GPUPRIM_EXT_STATUS(OVERFLOW);
    GPUPRIM_EXT_STATUS(INVALID_ARGUMENT);
    GPUPRIM_EXT_STATUS(OUT_OF_MEMORY);
    GPUPRIM_EXT_STATUS(BACKEND_UNAVAILABLE);
    GPUPRIM_EXT_STATUS(DEVICE);
    GPUPRIM_EXT_STATUS(INTERNAL);
    GPUPRIM_EXT_STATUS(NOT_CAPTURABLE);
#undef GPUPRIM_EXT_STATUS
    m.attr("STATUS_CODES") = statuses;
}

}  // namespace

NB_MODULE(_ext, m) {
    m.doc() = "libgpuprim's compiled layer for the gpuprim package (internal: use gpuprim's functions)";
    define_constants(m);
    m.def("load", [](const char *path) {
        try {
            load_library(path);
        } catch (const std::runtime_error &error) {
            throw nb::import_error(error.what());
        }
        return library().has_distributed;
    }, nb::arg("path"), "Open libgpuprim at path; True when it has the distributed calls.");
    m.def("library_path", [] { return nb::str(library().path.c_str()); });
    m.def("has_distributed", [] { return library().has_distributed; });
    define_raw_calls(m);

    // A context's wraps of callers' memory (wrap_cache.h): Context._wraps.
    nb::class_<WrapCache>(m, "WrapCache")
        .def("__init__", [](WrapCache *self, std::uint64_t context) {
            new (self) WrapCache(reinterpret_cast<gpuprim_context_t>(static_cast<std::uintptr_t>(context)));
        })
        .def("wrap", [](WrapCache &self, int code, std::uint64_t data, std::uint64_t count) {
            gpuprim_buffer_t buffer = nullptr;
            int status = self.wrap(code, reinterpret_cast<void *>(static_cast<std::uintptr_t>(data)), count, &buffer);
            return nb::make_tuple(status, reinterpret_cast<std::uintptr_t>(buffer));
        }, "(status, buffer): the cached buffer over count elements of dtype code at data")
        .def("close", &WrapCache::close, "Destroy every cached buffer (before the context)")
        .def("__len__", &WrapCache::size);
    define_fast_calls(m);
    define_dlpack_calls(m);
}
