// SPDX-License-Identifier: Apache-2.0
// The one list of dtypes. Every run-time dtype switch in api, core, cpu and
// cuda is generated from GPUPRIM_DTYPE_TABLE; every compile-time fact of an
// element (size, radix bits type, key kind, sign bit, canonical NaN, operator
// identities) comes from ElementTraits of its C type (core/element_traits.h).
//
// Adding a dtype: one line here, its enum value in include/gpuprim/gpuprim.h,
// the tests; and only if its C type is new to ElementTraits (a new width or
// a new float format), its facts there. Kernels are instantiated per C type
// (reduce, scan) or per byte width (sort), so an alias of an existing C type
// adds no kernel.
#pragma once

#include "core/half.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

// X(enum value, C type, short name). Keep the enum values dense from 0: the
// API validates a dtype by range (first..last, see kDtypeFirst/kDtypeLast).
#define GPUPRIM_DTYPE_TABLE(X)                 \
    X(GPUPRIM_DTYPE_I32, int32_t, "i32")       \
    X(GPUPRIM_DTYPE_U32, uint32_t, "u32")      \
    X(GPUPRIM_DTYPE_I64, int64_t, "i64")       \
    X(GPUPRIM_DTYPE_U64, uint64_t, "u64")      \
    X(GPUPRIM_DTYPE_F32, float, "f32")         \
    X(GPUPRIM_DTYPE_F64, double, "f64")        \
    X(GPUPRIM_DTYPE_F16, gpuprim::float16, "f16")  \
    X(GPUPRIM_DTYPE_BF16, gpuprim::bfloat16, "bf16") \
    X(GPUPRIM_DTYPE_I8, int8_t, "i8")          \
    X(GPUPRIM_DTYPE_U8, uint8_t, "u8")         \
    X(GPUPRIM_DTYPE_I16, int16_t, "i16")       \
    X(GPUPRIM_DTYPE_U16, uint16_t, "u16")

namespace gpuprim {

namespace dtype_table_detail {
#define GPUPRIM_DTYPE_VALUE(e, type, name) static_cast<int>(e),
constexpr int kValues[] = {GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_VALUE)};
#undef GPUPRIM_DTYPE_VALUE
constexpr int count() { return int(sizeof kValues / sizeof kValues[0]); }
constexpr int least() {
    int m = kValues[0];
    for (int v : kValues) m = v < m ? v : m;
    return m;
}
constexpr int greatest() {
    int m = kValues[0];
    for (int v : kValues) m = v > m ? v : m;
    return m;
}
}  // namespace dtype_table_detail

constexpr int kDtypeCount = dtype_table_detail::count();
constexpr gpuprim_dtype_t kDtypeFirst = static_cast<gpuprim_dtype_t>(dtype_table_detail::least());
constexpr gpuprim_dtype_t kDtypeLast = static_cast<gpuprim_dtype_t>(dtype_table_detail::greatest());
static_assert(int(kDtypeLast) - int(kDtypeFirst) + 1 == kDtypeCount,
              "dtype enum values must be dense: the API checks a dtype by range");

}  // namespace gpuprim
