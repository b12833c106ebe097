// SPDX-License-Identifier: Apache-2.0
// Which bin an element of a histogram falls in (gpuprim_histogram_even,
// gpuprim_histogram_range, gpuprim_bincount), written once for both
// backends (GPUPRIM_HD) so that every element lands in the same bin on each:
// - even bins, integers: floor((x - lower) * bins / (upper - lower)), exact
//   (64-bit products for keys up to 4 bytes, 128-bit for 8-byte ones; a
//   shift where the range is bins times a power of two, bincount's case);
// - even bins, floats: floor((x - lower) * scale) in f64, scale = bins /
//   (upper - lower) in f64 (where that overflows, f64 bounds a few
//   subnormals apart: floor((x - lower) / (upper - lower) * bins)), clamped
//   to bins - 1, so every x with lower <= x < upper counts; NaN never counts;
// - edges: floats by value (-0.0 is +0.0, NaN never counts) through the
//   order-preserving unsigned form of core/key_transform.h, so an element's
//   bin is a search among the edges' keys.
#pragma once

#include "core/element_traits.h"
#include "core/half.h"
#include "core/key_transform.h"
#include "core/portable.h"

#include <cstdint>
#include <cstring>

namespace gpuprim {

// 128-bit products of 8-byte integers' offsets (GCC, Clang and nvcc, host
// and device; __extension__: no -Wpedantic warning).
__extension__ typedef unsigned __int128 HistogramWide;

// Even bins over [lower, upper), their count and the arithmetic that maps
// an element to one (filled by even_bins_of on the host).
struct EvenBins {
    uint64_t bins;           // 1 to 2^32
    int64_t lower_signed;    // signed integers: the bounds by value
    int64_t upper_signed;
    uint64_t lower_unsigned; // unsigned integers: the bounds by value
    uint64_t upper_unsigned;
    uint64_t range;          // integers: upper - lower, >= 1
    uint32_t shift;          // by_shift: range == bins << shift, bin = (x - lower) >> shift
    bool by_shift;
    double lower;            // floats: the bounds widened to f64 (finite)
    double upper;
    double scale;            // bins / (upper - lower), in f64
    double width;            // upper - lower, in f64 (finite, > 0)
    bool divide;             // scale overflowed: (x - lower) / width * bins
};

// The bin of an f64 value v with lower <= v < upper: always in [0, bins),
// whatever the rounding (an element just below upper may round to bins).
GPUPRIM_HD uint64_t even_float_bin(const EvenBins &e, double v) {
    const double scaled = e.divide ? (v - e.lower) / e.width * double(e.bins) : (v - e.lower) * e.scale;
    if (!(scaled < double(e.bins))) return e.bins - 1;  // at or past the top (or NaN: cannot happen)
    const uint64_t b = scaled > 0 ? uint64_t(scaled) : 0;
    return b < e.bins ? b : e.bins - 1;
}

template <typename T>
GPUPRIM_HD double histogram_value(T x) {
    if constexpr (kIsHalf<T>) return double(widen(x));
    else return double(x);
}

// Even bins of dtype T for bounds lower < upper (by value; floats finite,
// with upper - lower finite in f64: the API checks) and bins >= 1.
template <typename T>
EvenBins even_bins_of(T lower, T upper, uint64_t bins) {
    EvenBins e{};
    e.bins = bins;
    if constexpr (kIsFloat<T>) {
        e.lower = histogram_value(lower);
        e.upper = histogram_value(upper);
        e.width = e.upper - e.lower;
        e.scale = double(bins) / e.width;
        e.divide = !(e.scale <= 1.7976931348623157e308);  // +inf: the width is a few subnormals
    } else {
        if constexpr (std::is_signed_v<T>) {
            e.lower_signed = int64_t(lower);
            e.upper_signed = int64_t(upper);
            e.range = uint64_t(e.upper_signed) - uint64_t(e.lower_signed);
        } else {
            e.lower_unsigned = uint64_t(lower);
            e.upper_unsigned = uint64_t(upper);
            e.range = e.upper_unsigned - e.lower_unsigned;
        }
        for (uint32_t s = 0; s < 64; ++s) {
            if ((bins << s) >> s != bins) break;
            if ((bins << s) == e.range) {
                e.by_shift = true;
                e.shift = s;
                break;
            }
        }
    }
    return e;
}

// Whether x counts, and its bin.
template <typename T>
GPUPRIM_HD bool even_bin(const EvenBins &e, T x, uint64_t &bin) {
    if constexpr (kIsFloat<T>) {
        const double v = histogram_value(x);
        if (!(v >= e.lower && v < e.upper)) return false;  // NaN fails too
        bin = even_float_bin(e, v);
        return true;
    } else {
        uint64_t offset;
        if constexpr (std::is_signed_v<T>) {
            const int64_t v = int64_t(x);
            if (v < e.lower_signed || v >= e.upper_signed) return false;
            offset = uint64_t(v) - uint64_t(e.lower_signed);
        } else {
            const uint64_t v = uint64_t(x);
            if (v < e.lower_unsigned || v >= e.upper_unsigned) return false;
            offset = v - e.lower_unsigned;
        }
        if (e.by_shift) {
            bin = offset >> e.shift;
        } else if constexpr (sizeof(T) <= 4) {
            bin = offset * e.bins / e.range;  // offset < 2^32, bins <= 2^32: no overflow
        } else {
            bin = uint64_t(HistogramWide(offset) * e.bins / e.range);
        }
        return true;
    }
}

// The key an element or an edge compares by when edges give the bins:
// floats by value (-0.0 as +0.0); false for a NaN.
template <typename T>
GPUPRIM_HD bool range_key(T x, bits_t<T> &key) {
    using Bits = bits_t<T>;
    Bits bits;
    std::memcpy(&bits, &x, sizeof bits);
    if constexpr (kIsFloat<T>) {
        const double v = histogram_value(x);
        if (v != v) return false;
        if (v == 0) bits = 0;
    }
    key = to_radix_key(bits, ElementTraits<T>::kKeyKind, false);
    return true;
}

// An edge's key: range_key's, a NaN edge keeping its place above +inf (a
// NaN element never counts; edges are not checked for NaN).
template <typename T>
GPUPRIM_HD bits_t<T> range_edge_key(T x) {
    bits_t<T> key;
    if (range_key(x, key)) return key;
    bits_t<T> bits;
    std::memcpy(&bits, &x, sizeof bits);
    return to_radix_key(bits, ElementTraits<T>::kKeyKind, false);
}

// The bin of an element's key among edge_count >= 2 edge keys (ascending):
// the last edge at or below it, if it is not the last edge.
template <typename Bits, typename Edges>
GPUPRIM_HD bool range_bin(const Edges &edge_key, uint64_t edge_count, Bits key, uint64_t &bin) {
    uint64_t lo = 0, hi = edge_count;  // the number of edges <= key
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (edge_key(mid) <= key) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || lo == edge_count) return false;
    bin = lo - 1;
    return true;
}

}  // namespace gpuprim
