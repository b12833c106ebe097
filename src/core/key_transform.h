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

#include "core/element_traits.h"
#include "core/portable.h"

#include <cstdint>

namespace gpuprim {

// The float facts of a key width: its sign bit and its negative NaNs.
template <typename Bits>
struct FloatLayout {
    static constexpr Bits sign = ElementTraits<Bits>::kSignBit;
    static constexpr Bits negative_nan_count =
        FloatFormat<typename FloatOfWidth<sizeof(Bits)>::type>::kNegativeNanCount;
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
