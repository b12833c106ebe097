// SPDX-License-Identifier: Apache-2.0
// Compile-time facts of one element type, for host code and kernels alike
// (CUB's cub::Traits<T>): its radix bits type, its key kind, its sign bit,
// its canonical NaN and the identities of the MIN/MAX operators. Facts that
// follow from the width live in UnsignedBits; facts of a float format in
// FloatFormat. A dtype whose C type is an existing one (an alias) needs
// nothing here; a new width or float format adds one specialization.
#pragma once

#include "core/half.h"
#include "core/portable.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace gpuprim {

// How a sort key's bits are ordered. Sort kernels are instantiated by key
// width only; the kind selects the order-preserving bit transform at run time.
// BFloat is bfloat16, whose width (2 bytes) it shares with IEEE binary16
// (Float) but not its NaN patterns.
enum class KeyKind : int { Unsigned = 0, Signed = 1, Float = 2, BFloat = 3 };

// The unsigned type of a width: radix keys, shuffles, bit casts.
template <size_t kBytes>
struct UnsignedBits;
template <>
struct UnsignedBits<1> { using type = uint8_t; };
template <>
struct UnsignedBits<2> { using type = uint16_t; };
template <>
struct UnsignedBits<4> { using type = uint32_t; };
template <>
struct UnsignedBits<8> { using type = uint64_t; };

// Binary float formats: the canonical quiet NaN (positive, payload 0), the
// mantissa's width, and how many bit patterns are negative NaNs (the sort's
// float transform): every nonzero mantissa.
template <typename T>
struct FloatFormat;
template <>
struct FloatFormat<float> {
    static constexpr uint32_t kCanonicalNan = 0x7FC00000u;
    static constexpr int kMantissaBits = 23;
    static constexpr uint32_t kNegativeNanCount = 0x007FFFFFu;  // 0xFF800001..0xFFFFFFFF
};
template <>
struct FloatFormat<double> {
    static constexpr uint64_t kCanonicalNan = 0x7FF8000000000000ull;
    static constexpr int kMantissaBits = 52;
    static constexpr uint64_t kNegativeNanCount = 0x000FFFFFFFFFFFFFull;
};
template <>
struct FloatFormat<float16> {
    static constexpr uint16_t kCanonicalNan = 0x7E00u;
    static constexpr int kMantissaBits = 10;
    static constexpr uint16_t kNegativeNanCount = 0x03FFu;  // 0xFC01..0xFFFF
    static constexpr uint16_t kInfinity = 0x7C00u;
};
template <>
struct FloatFormat<bfloat16> {
    static constexpr uint16_t kCanonicalNan = 0x7FC0u;
    static constexpr int kMantissaBits = 7;
    static constexpr uint16_t kNegativeNanCount = 0x007Fu;  // 0xFF81..0xFFFF
    static constexpr uint16_t kInfinity = 0x7F80u;
};

// The float format of a key width and kind (the sort carries keys by width
// only): 2-byte keys are binary16 or, for KeyKind::BFloat, bfloat16.
template <size_t kBytes>
struct FloatOfWidth;
template <>
struct FloatOfWidth<2> { using type = float16; };
template <>
struct FloatOfWidth<4> { using type = float; };
template <>
struct FloatOfWidth<8> { using type = double; };

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// The type wrapping arithmetic runs on: integers as the unsigned type of
// their width (a wrapping sum or difference has the same bits signed or
// not, so kernels are instantiated by width), the rest as themselves.
template <typename T, bool = std::is_integral_v<T>>
struct WrappingOf {
    using type = T;
};
template <typename T>
struct WrappingOf<T, true> {
    using type = std::make_unsigned_t<T>;
};
template <typename T>
using wrapping_t = typename WrappingOf<T>::type;
// Binary floats, the 16-bit storage formats included.
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsHalf<T>;

template <typename T>
struct ElementTraits {
    static constexpr int kBytes = int(sizeof(T));
    using Bits = typename UnsignedBits<sizeof(T)>::type;
    static constexpr bool kIsFloat = gpuprim::kIsFloat<T>;
    static constexpr KeyKind kKeyKind = std::is_same_v<T, bfloat16> ? KeyKind::BFloat
                                        : kIsFloat                  ? KeyKind::Float
                                        : std::is_signed_v<T>       ? KeyKind::Signed
                                                                    : KeyKind::Unsigned;
    static constexpr Bits kSignBit = Bits(Bits(1) << (sizeof(T) * 8 - 1));
    // The identities of MIN and MAX (floats: +-infinity, so NaN rules apply).
    GPUPRIM_HD static constexpr T highest() {
        if constexpr (kIsHalf<T>) return T{FloatFormat<T>::kInfinity};
        else if constexpr (kIsFloat) return std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::max();
    }
    GPUPRIM_HD static constexpr T lowest() {
        if constexpr (kIsHalf<T>) return T{uint16_t(FloatFormat<T>::kInfinity | kSignBit)};
        else if constexpr (kIsFloat) return -std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::lowest();
    }
};

template <typename T>
using bits_t = typename ElementTraits<T>::Bits;

}  // namespace gpuprim
