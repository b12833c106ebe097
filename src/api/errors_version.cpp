// SPDX-License-Identifier: Apache-2.0
// The entry points that need no context: status names, the library version,
// element sizes.
#include "api/validate.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

namespace {

// "MAJOR.MINOR.PATCH", built from the header's version macros.
#define GPUPRIM_API_STRINGIZE_(x) #x
#define GPUPRIM_API_STRINGIZE(x) GPUPRIM_API_STRINGIZE_(x)
// clang-format off
constexpr const char *kVersionString =
    GPUPRIM_API_STRINGIZE(GPUPRIM_VERSION_MAJOR) "." GPUPRIM_API_STRINGIZE(GPUPRIM_VERSION_MINOR) "."
    GPUPRIM_API_STRINGIZE(GPUPRIM_VERSION_PATCH);
// clang-format on
#undef GPUPRIM_API_STRINGIZE
#undef GPUPRIM_API_STRINGIZE_

}  // namespace

extern "C" {

const char *gpuprim_get_error_string(gpuprim_status_t status) {
    switch (gpuprim::api::enum_bits(status)) {
    case GPUPRIM_SUCCESS: return "success";
    case GPUPRIM_ERROR_NULL_POINTER: return "NULL pointer argument";
    case GPUPRIM_ERROR_INVALID_HANDLE: return "invalid handle";
    case GPUPRIM_ERROR_CONTEXT_MISMATCH: return "buffer belongs to another context";
    case GPUPRIM_ERROR_INVALID_ENUM: return "unknown enum value";
    case GPUPRIM_ERROR_DTYPE_MISMATCH: return "dtype mismatch";
    case GPUPRIM_ERROR_SIZE_MISMATCH: return "size mismatch";
    case GPUPRIM_ERROR_OUT_OF_RANGE: return "range out of bounds";
    case GPUPRIM_ERROR_OVERFLOW: return "size overflow";
    case GPUPRIM_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GPUPRIM_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GPUPRIM_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case GPUPRIM_ERROR_DEVICE: return "device error";
    case GPUPRIM_ERROR_INTERNAL: return "internal error";
    case GPUPRIM_ERROR_NOT_CAPTURABLE: return "not capturable into a CUDA graph";
    }
    return "unknown status";
}

uint32_t gpuprim_version_number(void) { return GPUPRIM_VERSION_NUMBER; }

const char *gpuprim_version_string(void) { return kVersionString; }

size_t gpuprim_dtype_size(gpuprim_dtype_t dtype) {
    return gpuprim::dtype_is_valid(gpuprim::api::enum_bits(dtype)) ? gpuprim::dtype_size(dtype) : 0;
}

}  // extern "C"
