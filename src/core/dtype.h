// SPDX-License-Identifier: Apache-2.0
// Run-time dtype facts and the one switch that turns a run-time dtype into a
// C++ type, all generated from the dtype table (core/dtype_table.h).
#pragma once

#include "core/dtype_table.h"
#include "core/element_traits.h"
#include "core/error.h"

#include <cstddef>
#include <cstdint>

namespace gpuprim {

inline bool dtype_is_valid(int dtype) {
    switch (dtype) {
#define GPUPRIM_DTYPE_CASE(e, type, name) case e:
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_CASE)
#undef GPUPRIM_DTYPE_CASE
        return true;
    }
    return false;
}

inline size_t dtype_size(gpuprim_dtype_t dtype) {
    switch (dtype) {
#define GPUPRIM_DTYPE_CASE(e, type, name) \
    case e: return sizeof(type);
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_CASE)
#undef GPUPRIM_DTYPE_CASE
    }
    return 0;
}

inline const char *dtype_name(gpuprim_dtype_t dtype) {
    switch (dtype) {
#define GPUPRIM_DTYPE_CASE(e, type, name) \
    case e: return name;
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_CASE)
#undef GPUPRIM_DTYPE_CASE
    }
    return "unknown";
}

inline KeyKind key_kind(gpuprim_dtype_t dtype) {
    switch (dtype) {
#define GPUPRIM_DTYPE_CASE(e, type, name) \
    case e: return ElementTraits<type>::kKeyKind;
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_CASE)
#undef GPUPRIM_DTYPE_CASE
    }
    return KeyKind::Unsigned;
}

// Calls f(T{}) with T the C++ type of dtype.
template <typename F>
decltype(auto) dispatch_dtype(gpuprim_dtype_t dtype, F &&f) {
    switch (dtype) {
#define GPUPRIM_DTYPE_CASE(e, type, name) \
    case e: return f(type{});
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_CASE)
#undef GPUPRIM_DTYPE_CASE
    }
    fail(GPUPRIM_ERROR_INTERNAL, "dispatch_dtype: unknown dtype %d", static_cast<int>(dtype));
}

// Calls f(Bits{}) with Bits the unsigned type of `bytes`, one of the widths
// of the table's dtypes (sort keys and values travel by width only).
template <typename F>
decltype(auto) dispatch_width(uint32_t bytes, const char *what, F &&f) {
#define GPUPRIM_DTYPE_WIDTH(e, type, name) \
    if (bytes == sizeof(type)) return f(bits_t<type>{});
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_WIDTH)
#undef GPUPRIM_DTYPE_WIDTH
    fail(GPUPRIM_ERROR_INTERNAL, "%s %u", what, bytes);
}

// Whether `bytes` is the width of one of the table's dtypes.
inline bool is_dtype_width(uint32_t bytes) {
#define GPUPRIM_DTYPE_WIDTH(e, type, name) \
    if (bytes == sizeof(type)) return true;
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_WIDTH)
#undef GPUPRIM_DTYPE_WIDTH
    return false;
}

}  // namespace gpuprim
