// SPDX-License-Identifier: Apache-2.0
// Order-preserving bit transforms for radix sorting. A key's bits are mapped
// to an unsigned "radix key" whose plain unsigned order is the documented sort
// order; the map is a bijection, so sorting radix keys and mapping back
// restores every bit (NaN payloads and -0.0 included).
//
// Floats: the classic flip (negative: invert all bits; positive: set the sign
// bit) orders -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. The API puts
// every NaN last, so the result is rotated down by the number of negative-NaN
// bit patterns: -inf lands on 0 and the negative NaNs wrap to the very top,
// after the positive ones. Descending order is the bitwise complement.
#pragma once

#include "core/dtype.h"
#include "core/portable.h"

#include <cstdint>

namespace gpuprim {

template <typename Bits>
struct FloatLayout;
template <>
struct FloatLayout<uint32_t> {
    static constexpr uint32_t sign = 0x80000000u;
    static constexpr uint32_t negative_nan_count = 0x007FFFFFu;  // 0xFF800001..0xFFFFFFFF
};
template <>
struct FloatLayout<uint64_t> {
    static constexpr uint64_t sign = 0x8000000000000000ull;
    static constexpr uint64_t negative_nan_count = 0x000FFFFFFFFFFFFFull;
};

template <typename Bits>
GPUPRIM_HD Bits to_radix_key(Bits bits, KeyKind kind, bool descending) {
    constexpr Bits sign = FloatLayout<Bits>::sign;
    Bits key = bits;
    if (kind == KeyKind::Signed) {
        key = bits ^ sign;
    } else if (kind == KeyKind::Float) {
        key = (bits & sign) ? Bits(~bits) : Bits(bits ^ sign);
        key -= FloatLayout<Bits>::negative_nan_count;
    }
    return descending ? Bits(~key) : key;
}

template <typename Bits>
GPUPRIM_HD Bits from_radix_key(Bits key, KeyKind kind, bool descending) {
    constexpr Bits sign = FloatLayout<Bits>::sign;
    if (descending) key = Bits(~key);
    if (kind == KeyKind::Signed) return key ^ sign;
    if (kind == KeyKind::Float) {
        key += FloatLayout<Bits>::negative_nan_count;
        return (key & sign) ? Bits(key ^ sign) : Bits(~key);
    }
    return key;
}

}  // namespace gpuprim
