// SPDX-License-Identifier: Apache-2.0
// Whether gpuprim_select / gpuprim_partition keep an element (KeepRule),
// written once for both backends (GPUPRIM_HD) so that each keeps the same
// elements:
// - comparisons by value, as C's operators: integers as their type, floats
//   as IEEE with f16/bf16 widened exactly to float: -0.0 == +0.0, a NaN
//   compares false with everything (only NOT_EQUAL and NAN keep one);
//   NOT_NAN keeps every integer, NAN none;
// - flags by bits: flags[i] of any integer width keeps where nonzero.
// The scalars are decoded once on the host (keep_test_of) into a KeepTest,
// which kernels take by value.
#pragma once

#include "core/backend.h"
#include "core/element_traits.h"
#include "core/half.h"
#include "core/portable.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim {

// The type an element compares as: f16/bf16 widened to float (exact), every
// other dtype as itself.
template <typename T>
using keep_value_t = std::conditional_t<kIsHalf<T>, float, T>;

template <typename T>
GPUPRIM_HD keep_value_t<T> keep_value(T x) {
    if constexpr (kIsHalf<T>) return widen(x);
    else return x;
}

// A comparison rule with its scalars decoded (not for KEEP_FLAGGED).
template <typename T>
struct KeepTest {
    gpuprim_keep_t kind;
    keep_value_t<T> scalar;       // the comparisons' and IN_RANGE's lower bound
    keep_value_t<T> scalar_high;  // IN_RANGE's upper bound (exclusive)
};

// The rule's scalars as values of T (their bits are in the low bytes of
// scalar_bits / scalar_high_bits). Host only.
template <typename T>
inline KeepTest<T> keep_test_of(const KeepRule &rule) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "scalars are carried in 8 bytes");
    T scalar, scalar_high;
    std::memcpy(&scalar, &rule.scalar_bits, sizeof scalar);  // little-endian: the low bytes
    std::memcpy(&scalar_high, &rule.scalar_high_bits, sizeof scalar_high);
    return KeepTest<T>{rule.kind, keep_value(scalar), keep_value(scalar_high)};
}

// Whether x (already a keep_value) passes comparison kKind against the
// scalars. A compile-time kind lets a loop over elements vectorize.
template <gpuprim_keep_t kKind, typename V>
GPUPRIM_HD bool compare_keeps(V x, V scalar, V scalar_high) {
    if constexpr (kKind == GPUPRIM_KEEP_LESS) return x < scalar;
    else if constexpr (kKind == GPUPRIM_KEEP_LESS_EQUAL) return x <= scalar;
    else if constexpr (kKind == GPUPRIM_KEEP_GREATER) return x > scalar;
    else if constexpr (kKind == GPUPRIM_KEEP_GREATER_EQUAL) return x >= scalar;
    else if constexpr (kKind == GPUPRIM_KEEP_EQUAL) return x == scalar;
    else if constexpr (kKind == GPUPRIM_KEEP_NOT_EQUAL) return x != scalar;
    else if constexpr (kKind == GPUPRIM_KEEP_IN_RANGE) return scalar <= x && x < scalar_high;
    else if constexpr (kKind == GPUPRIM_KEEP_NAN) {
        if constexpr (std::is_floating_point_v<V>) return x != x;
        else return false;  // an integer is never a NaN
    } else if constexpr (kKind == GPUPRIM_KEEP_NOT_NAN) {
        if constexpr (std::is_floating_point_v<V>) return x == x;
        else return true;
    }
    else return false;  // KEEP_FLAGGED goes through flag_is_set
}

// Whether element x passes test (a comparison kind), the kind chosen at run
// time.
template <typename T>
GPUPRIM_HD bool keeps(const KeepTest<T> &test, T x) {
    const keep_value_t<T> v = keep_value(x);
    switch (test.kind) {
    case GPUPRIM_KEEP_LESS: return compare_keeps<GPUPRIM_KEEP_LESS>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_LESS_EQUAL: return compare_keeps<GPUPRIM_KEEP_LESS_EQUAL>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_GREATER: return compare_keeps<GPUPRIM_KEEP_GREATER>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_GREATER_EQUAL:
        return compare_keeps<GPUPRIM_KEEP_GREATER_EQUAL>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_EQUAL: return compare_keeps<GPUPRIM_KEEP_EQUAL>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_NOT_EQUAL: return compare_keeps<GPUPRIM_KEEP_NOT_EQUAL>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_IN_RANGE: return compare_keeps<GPUPRIM_KEEP_IN_RANGE>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_NAN: return compare_keeps<GPUPRIM_KEEP_NAN>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_NOT_NAN: return compare_keeps<GPUPRIM_KEEP_NOT_NAN>(v, test.scalar, test.scalar_high);
    case GPUPRIM_KEEP_FLAGGED: break;
    }
    return false;
}

// Whether flag i of a flags array of `bytes`-wide integers (1, 2, 4 or 8)
// has a bit set: flags keep by bits, whatever their signedness.
GPUPRIM_HD bool flag_is_set(const void *flags, uint32_t bytes, uint64_t i) {
    switch (bytes) {
    case 1: return static_cast<const uint8_t *>(flags)[i] != 0;
    case 2: return static_cast<const uint16_t *>(flags)[i] != 0;
    case 4: return static_cast<const uint32_t *>(flags)[i] != 0;
    default: return static_cast<const uint64_t *>(flags)[i] != 0;
    }
}

}  // namespace gpuprim
