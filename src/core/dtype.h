// SPDX-License-Identifier: Apache-2.0
// dtype facts and the one switch that turns a run-time dtype into a C++ type.
#pragma once

#include "core/error.h"

#include <cstddef>
#include <cstdint>

namespace gpuprim {

inline bool dtype_is_valid(int dtype) {
    return dtype >= GPUPRIM_DTYPE_I32 && dtype <= GPUPRIM_DTYPE_F64;
}

inline size_t dtype_size(gpuprim_dtype_t dtype) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32:
    case GPUPRIM_DTYPE_U32:
    case GPUPRIM_DTYPE_F32: return 4;
    case GPUPRIM_DTYPE_I64:
    case GPUPRIM_DTYPE_U64:
    case GPUPRIM_DTYPE_F64: return 8;
    }
    return 0;
}

inline const char *dtype_name(gpuprim_dtype_t dtype) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: return "i32";
    case GPUPRIM_DTYPE_U32: return "u32";
    case GPUPRIM_DTYPE_I64: return "i64";
    case GPUPRIM_DTYPE_U64: return "u64";
    case GPUPRIM_DTYPE_F32: return "f32";
    case GPUPRIM_DTYPE_F64: return "f64";
    }
    return "unknown";
}

// How a sort key's bits are ordered. Sort kernels are instantiated by key
// width only; the kind selects the order-preserving bit transform at run time.
enum class KeyKind : int { Unsigned = 0, Signed = 1, Float = 2 };

inline KeyKind key_kind(gpuprim_dtype_t dtype) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32:
    case GPUPRIM_DTYPE_I64: return KeyKind::Signed;
    case GPUPRIM_DTYPE_F32:
    case GPUPRIM_DTYPE_F64: return KeyKind::Float;
    default: return KeyKind::Unsigned;
    }
}

// Calls f(T{}) with T the C++ type of dtype.
template <typename F>
decltype(auto) dispatch_dtype(gpuprim_dtype_t dtype, F &&f) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: return f(int32_t{});
    case GPUPRIM_DTYPE_U32: return f(uint32_t{});
    case GPUPRIM_DTYPE_I64: return f(int64_t{});
    case GPUPRIM_DTYPE_U64: return f(uint64_t{});
    case GPUPRIM_DTYPE_F32: return f(float{});
    case GPUPRIM_DTYPE_F64: return f(double{});
    }
    fail(GPUPRIM_ERROR_INTERNAL, "dispatch_dtype: unknown dtype %d", static_cast<int>(dtype));
}

}  // namespace gpuprim
