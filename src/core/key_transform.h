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

// The float facts of a key width: its sign bit and its negative NaNs (for
// 2-byte keys, those of binary16 or, with KeyKind::BFloat, of bfloat16).
template <typename Bits>
struct FloatLayout {
    static constexpr Bits sign = ElementTraits<Bits>::kSignBit;
    GPUPRIM_HD static constexpr Bits negative_nan_count(KeyKind kind) {
        if constexpr (sizeof(Bits) == 2) {
            if (kind == KeyKind::BFloat) return FloatFormat<bfloat16>::kNegativeNanCount;
        }
        if constexpr (sizeof(Bits) == 1) return 0;  // no 1-byte float format
        else return FloatFormat<typename FloatOfWidth<sizeof(Bits)>::type>::kNegativeNanCount;
    }
};

template <typename Bits>
GPUPRIM_HD bool is_float_kind(KeyKind kind) {
    return sizeof(Bits) > 1 && (kind == KeyKind::Float || kind == KeyKind::BFloat);
}

template <typename Bits>
GPUPRIM_HD Bits to_radix_key(Bits bits, KeyKind kind, bool descending) {
    constexpr Bits sign = FloatLayout<Bits>::sign;
    Bits key = bits;
    if (kind == KeyKind::Signed) {
        key = Bits(bits ^ sign);
    } else if (is_float_kind<Bits>(kind)) {
        key = (bits & sign) ? Bits(~bits) : Bits(bits ^ sign);
        key = Bits(key - FloatLayout<Bits>::negative_nan_count(kind));
    }
    return descending ? Bits(~key) : key;
}

// to_radix_key as three word operations with constants of the kind and
// order, for loops over many keys of one kind (no branch per key; the CUDA
// sort's upfront histogram, the CPU top-k's scans):
// radix key = ((bits ^ flip) - subtract) ^ complement, where flip is
// negative_flip for a key whose top bit is set, and always_flip otherwise
// ORed in for every key. Floats: a negative key's every bit flips, a
// positive one's sign bit (then the negative NaNs rotate to the top);
// signed integers: the sign bit; descending: the complement.
template <typename Bits>
struct RadixKeyMap {
    Bits negative_flip, always_flip, subtract, complement;

    GPUPRIM_HD Bits operator()(Bits bits) const {
        const Bits top_set = Bits(0) - Bits(bits >> (sizeof(Bits) * 8 - 1));  // all ones when the top bit is set
        const Bits flip = Bits((top_set & negative_flip) | always_flip);
        return Bits(Bits(Bits(bits ^ flip) - subtract) ^ complement);
    }
};

template <typename Bits>
GPUPRIM_HD RadixKeyMap<Bits> radix_key_map(KeyKind kind, bool descending) {
    constexpr Bits sign = FloatLayout<Bits>::sign;
    RadixKeyMap<Bits> map{Bits(0), Bits(0), Bits(0), descending ? Bits(~Bits(0)) : Bits(0)};
    if (kind == KeyKind::Signed) {
        map.always_flip = sign;
    } else if (is_float_kind<Bits>(kind)) {
        map.negative_flip = Bits(~Bits(0));
        map.always_flip = sign;
        map.subtract = FloatLayout<Bits>::negative_nan_count(kind);
    }
    return map;
}

template <typename Bits>
GPUPRIM_HD Bits from_radix_key(Bits key, KeyKind kind, bool descending) {
    constexpr Bits sign = FloatLayout<Bits>::sign;
    if (descending) key = Bits(~key);
    if (kind == KeyKind::Signed) return Bits(key ^ sign);
    if (is_float_kind<Bits>(kind)) {
        key = Bits(key + FloatLayout<Bits>::negative_nan_count(kind));
        return (key & sign) ? Bits(key ^ sign) : Bits(~key);
    }
    return key;
}

// The bits [begin_bit, end_bit) of a radix key that a sort orders by (the
// others are carried along), as a digit-sized window: pass p of an LSD
// radix sort with digit_bits-bit digits reads the digit at
// begin_bit + p * digit_bits, masked to the range's end; passes past the
// range have mask 0 (a constant digit: a stable copy, if run at all) and a
// shift of p * digit_bits (mod 32), where a whole 1-byte key's second pass
// reads a byte that is always 0 even unmasked.
struct DigitWindow {
    uint32_t shift;
    uint32_t mask;
};
GPUPRIM_HD DigitWindow digit_window(uint32_t begin_bit, uint32_t end_bit, int pass, int digit_bits) {
    const uint32_t shift = begin_bit + uint32_t(pass * digit_bits);
    if (shift >= end_bit) return {uint32_t(pass * digit_bits) & 31u, 0};
    const uint32_t width = end_bit - shift < uint32_t(digit_bits) ? end_bit - shift : uint32_t(digit_bits);
    return {shift, (1u << width) - 1u};
}

// The key's sort bits: bits [begin_bit, end_bit) of the radix key, at the bottom.
template <typename Bits>
GPUPRIM_HD uint64_t sort_bits(Bits radix_key, uint32_t begin_bit, uint32_t end_bit) {
    const uint64_t shifted = uint64_t(radix_key) >> begin_bit;
    const uint32_t width = end_bit - begin_bit;
    return width >= 64 ? shifted : shifted & ((uint64_t(1) << width) - 1);
}

}  // namespace gpuprim
