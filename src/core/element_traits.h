// SPDX-License-Identifier: Apache-2.0
// Compile-time facts of one element type, for host code and kernels alike
// (CUB's cub::Traits<T>): its radix bits type, its key kind, its sign bit,
// its canonical NaN and the identities of the MIN/MAX operators. Facts that
// follow from the width live in UnsignedBits; facts of a float format in
// FloatFormat. A dtype whose C type is an existing one (an alias) needs
// nothing here; a new width or float format adds one specialization.
#pragma once

#include "core/portable.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace gpuprim {

// How a sort key's bits are ordered. Sort kernels are instantiated by key
// width only; the kind selects the order-preserving bit transform at run time.
enum class KeyKind : int { Unsigned = 0, Signed = 1, Float = 2 };

// The unsigned type of a width: radix keys, shuffles, bit casts.
template <size_t kBytes>
struct UnsignedBits;
template <>
struct UnsignedBits<4> { using type = uint32_t; };
template <>
struct UnsignedBits<8> { using type = uint64_t; };

// IEEE 754 binary formats: the canonical quiet NaN (positive, payload 0) and
// how many bit patterns are negative NaNs (the sort's float transform).
template <typename T>
struct FloatFormat;
template <>
struct FloatFormat<float> {
    static constexpr uint32_t kCanonicalNan = 0x7FC00000u;
    static constexpr uint32_t kNegativeNanCount = 0x007FFFFFu;  // 0xFF800001..0xFFFFFFFF
};
template <>
struct FloatFormat<double> {
    static constexpr uint64_t kCanonicalNan = 0x7FF8000000000000ull;
    static constexpr uint64_t kNegativeNanCount = 0x000FFFFFFFFFFFFFull;
};

// The float format of a width (the sort carries keys by width only).
template <size_t kBytes>
struct FloatOfWidth;
template <>
struct FloatOfWidth<4> { using type = float; };
template <>
struct FloatOfWidth<8> { using type = double; };

template <typename T>
struct ElementTraits {
    static constexpr int kBytes = int(sizeof(T));
    using Bits = typename UnsignedBits<sizeof(T)>::type;
    static constexpr bool kIsFloat = std::is_floating_point_v<T>;
    static constexpr KeyKind kKeyKind = kIsFloat                  ? KeyKind::Float
                                        : std::is_signed_v<T>     ? KeyKind::Signed
                                                                  : KeyKind::Unsigned;
    static constexpr Bits kSignBit = Bits(1) << (sizeof(T) * 8 - 1);
    // The identities of MIN and MAX (floats: +-infinity, so NaN rules apply).
    GPUPRIM_HD static constexpr T highest() {
        if constexpr (kIsFloat) return std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::max();
    }
    GPUPRIM_HD static constexpr T lowest() {
        if constexpr (kIsFloat) return -std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::lowest();
    }
};

template <typename T>
using bits_t = typename ElementTraits<T>::Bits;

}  // namespace gpuprim
