// SPDX-License-Identifier: Apache-2.0
// The reduction/scan operators, shared by the CPU backend, the CUDA kernels
// and (through the same definitions) the documented semantics:
// - integer SUM wraps (computed in the unsigned type: no signed overflow UB);
// - float MIN/MAX are IEEE 754-2019 minimum/maximum: NaN propagates (of two
//   NaNs the larger bit pattern wins, so the result does not depend on the
//   order of combination) and -0.0 < +0.0;
// - DOT multiplies with fma for floats;
// - float SUM and DOT (and the adjacent difference) give the canonical
//   quiet NaN for any NaN result.
// Every operator here is associative and commutative except float SUM/DOT,
// which callers combine in a fixed order to stay deterministic.
#pragma once

#include "core/element_traits.h"
#include "core/portable.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if !defined(__CUDACC__)
#  include <cmath>
#endif

namespace gpuprim {

template <typename To, typename From>
GPUPRIM_HD To bit_cast(From from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
    To to;
    memcpy(&to, &from, sizeof to);
    return to;
}

template <typename T>
GPUPRIM_HD bool is_nan(T x) {
    if constexpr (kIsHalf<T>) {
        constexpr uint16_t kInfinity = FloatFormat<T>::kInfinity;
        return (x.bits & 0x7FFFu) > kInfinity;
    } else if constexpr (std::is_floating_point_v<T>) {
        return x != x;
    } else {
        return false;
    }
}

// The canonical quiet NaN (positive, payload 0) in place of any NaN. Which
// NaN payload an addition of two NaNs returns depends on the operand order,
// and the kernels do not promise a fixed operand order (only a fixed
// association), so float sums report every NaN as this one.
template <typename T>
GPUPRIM_HD T canonical_nan_if_nan(T x) {
    if constexpr (std::is_floating_point_v<T>) {
        using B = bits_t<T>;
        constexpr B quiet_nan = FloatFormat<T>::kCanonicalNan;
        return is_nan(x) ? bit_cast<T>(quiet_nan) : x;
    } else {
        return x;  // no NaNs
    }
}

template <typename T>
struct SumOp {
    GPUPRIM_HD static T identity() { return T(0); }
    GPUPRIM_HD T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
        } else {
            return canonical_nan_if_nan(a + b);
        }
    }
};

// An element minus the one before it (gpuprim_adjacent_difference):
// integers wrap (computed in the unsigned type: no signed overflow UB);
// floats one IEEE subtraction, f16/bf16 in f32 rounded once; any NaN result
// the canonical quiet NaN, as float sums give (which NaN x - y returns
// differs between CPUs and GPUs), so both backends write the same bits.
template <typename T>
struct DifferenceOp {
    GPUPRIM_HD T operator()(T x, T previous) const {
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            return static_cast<T>(static_cast<U>(static_cast<U>(x) - static_cast<U>(previous)));
        } else if constexpr (kIsHalf<T>) {
            return round_to<T>(canonical_nan_if_nan(widen(x) - widen(previous)));
        } else {
            return canonical_nan_if_nan(x - previous);
        }
    }
};

// "less than" of the order MIN/MAX use on non-NaN values: for floats, -0.0 < +0.0.
template <typename T>
GPUPRIM_HD bool total_less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (a == b) {
            // Only ±0 pairs reach here with different bits: negative zero first.
            using B = bits_t<T>;
            constexpr B sign = ElementTraits<T>::kSignBit;
            return (bit_cast<B>(a) & sign) > (bit_cast<B>(b) & sign);
        }
    }
    return a < b;
}

// The NaN of a pair that propagates; a and b must not both be non-NaN.
template <typename T>
GPUPRIM_HD T propagate_nan(T a, T b) {
    if (!is_nan(a)) return b;
    if (!is_nan(b)) return a;
    using B = bits_t<T>;
    return bit_cast<B>(a) >= bit_cast<B>(b) ? a : b;
}


// Float MIN/MAX as unsigned MIN/MAX. MinOp and MaxOp each pick the least
// (greatest) bit pattern under one total order of all 2^W patterns (NaNs
// first for MIN / last for MAX, the larger NaN bits winning; -0 < +0), so a
// one-to-one map onto W-bit unsigned keys that keeps that order turns them
// into an integer min/max: one instruction per step, and a warp-wide
// redux.sync for 4-byte keys, where the exact rule takes several compares.
template <typename T, bool kMin>
struct MinMaxKey {
    static_assert(kIsFloat<T>, "keys are for float MIN/MAX");
    using Key = bits_t<T>;
    static constexpr Key kSign = ElementTraits<T>::kSignBit;
    // NaN bit patterns of each sign: every nonzero mantissa.
    static constexpr Key kNans = Key((Key(1) << FloatFormat<T>::kMantissaBits) - 1);

    // Sign-flip order: ascending in value with -0 < +0; negative NaNs sit
    // below -inf (larger bits lower), positive NaNs above +inf (larger bits
    // higher).
    GPUPRIM_HD static Key ordered(Key bits) { return (bits & kSign) ? Key(~bits) : Key(bits | kSign); }
    GPUPRIM_HD static Key unordered(Key o) { return (o & kSign) ? Key(o & ~kSign) : Key(~o); }

    // MIN keys: negative NaNs (o < kNans) stay first; positive NaNs (the top
    // kNans of o) follow in reverse; then every other value, shifted up.
    // MAX keys: every other value shifted down, then positive NaNs, then
    // negative NaNs in reverse at the top.
    GPUPRIM_HD static Key key(T x) {
        const Key o = ordered(bit_cast<Key>(x));
        if constexpr (kMin) {
            const Key positive_nan = Key(kNans + Key(~o)), other = Key(o + kNans);
            return o < kNans ? o : o > Key(~kNans) ? positive_nan : other;
        } else {
            return o < kNans ? Key(~o) : Key(o - kNans);
        }
    }
    GPUPRIM_HD static T value(Key k) {
        Key o;
        if constexpr (kMin) o = k < kNans ? k : k < Key(2 * kNans) ? Key(~Key(k - kNans)) : Key(k - kNans);
        else o = k > Key(~kNans) ? Key(~k) : Key(k + kNans);
        return bit_cast<T>(unordered(o));
    }
};

// argmin / argmax (gpuprim_argreduce): numpy's np.argmin / np.argmax on the
// flat data. Each element maps to an unsigned key of its width such that the
// answer is the FIRST position of the LEAST key, for both ops:
// - integers: the value order (signed: the sign bit flipped); MAX complements
//   it, so the greatest value has the least key;
// - floats: every NaN gets key 0, the least of all, so the first NaN wins
//   (numpy propagates NaN, for argmin and argmax alike, whatever the NaN's
//   sign or payload); -0.0 becomes +0.0 first, so the two zeros tie and the
//   first of them wins; every other value takes its sign-flip order
//   (MinMaxKey::ordered: -inf < ... < -0 = +0 < ... < +inf), complemented
//   for MAX. No non-NaN value has key 0: ordered() is 0 only for the
//   all-ones pattern and ~ordered() only for 0x7F..F, both NaNs. So +-inf,
//   subnormals and the 16-bit formats (by value, through their bits) need no
//   special case.
// Keys compare as integers: the (key, position) pair under "key, then
// position" is a total order, so any reduction shape gives the same answer.
template <typename T, bool kMin>
struct ArgKey {
    using Key = bits_t<T>;
    static constexpr Key kSign = ElementTraits<T>::kSignBit;

    // Written with masks, no branch and no select, so the CPU's folds
    // vectorize it (a select on -0.0 became a branch per element).
    GPUPRIM_HD static Key key(T x) {
        const Key bits = bit_cast<Key>(x);
        if constexpr (kIsFloat<T>) {
            constexpr Key kMantissa = Key((Key(1) << FloatFormat<T>::kMantissaBits) - 1);
            constexpr Key kInfinity = Key(Key(~kSign) & Key(~kMantissa));
            const Key magnitude = Key(bits & Key(~kSign));
            // -0.0 ties with +0.0: a zero's sign bit is cleared.
            const Key zero_fill = Key(Key(0) - Key(magnitude == 0));
            const Key unsigned_zero = Key(bits & Key(~Key(zero_fill & kSign)));
            // MinMaxKey::ordered: negative values complemented, others with the sign bit set.
            const Key sign_fill = Key(Key(0) - Key(unsigned_zero >> (sizeof(Key) * 8 - 1)));
            const Key ordered = Key(unsigned_zero ^ Key(sign_fill | kSign));
            const Key k = kMin ? ordered : Key(~ordered);
            // Every NaN: 0.
            const Key not_nan = Key(Key(0) - Key(magnitude <= kInfinity));
            return Key(k & not_nan);
        } else {
            const Key ordered = std::is_signed_v<T> ? Key(bits ^ kSign) : bits;
            return kMin ? ordered : Key(~ordered);
        }
    }
};

// MIN and MAX. The 16-bit floats compare through their MinMaxKey (an
// integer min/max of order keys: the same rule, exactly).
template <typename T>
struct MinOp {
    GPUPRIM_HD static T identity() { return ElementTraits<T>::highest(); }
    GPUPRIM_HD T operator()(T a, T b) const {
        if constexpr (kIsHalf<T>) {
            using Keys = MinMaxKey<T, true>;
            return Keys::key(b) < Keys::key(a) ? b : a;
        } else {
            if constexpr (std::is_floating_point_v<T>)
                if (is_nan(a) || is_nan(b)) return propagate_nan(a, b);
            return total_less(b, a) ? b : a;
        }
    }
};

template <typename T>
struct MaxOp {
    GPUPRIM_HD static T identity() { return ElementTraits<T>::lowest(); }
    GPUPRIM_HD T operator()(T a, T b) const {
        if constexpr (kIsHalf<T>) {
            using Keys = MinMaxKey<T, false>;
            return Keys::key(a) < Keys::key(b) ? b : a;
        } else {
            if constexpr (std::is_floating_point_v<T>)
                if (is_nan(a) || is_nan(b)) return propagate_nan(a, b);
            return total_less(a, b) ? b : a;
        }
    }
};

// The running value of SUM, DOT and SUM scans: the element itself, except
// for 8- and 16-bit integers (a 32-bit unsigned sum, which wraps to the same
// low bits) and the 16-bit floats (float: accumulated in f32 and rounded to
// the element's format once, at the end or per scan output).
template <typename T>
struct SumAccumulator {
    using type = T;
};
template <>
struct SumAccumulator<float16> {
    using type = float;
};
template <>
struct SumAccumulator<bfloat16> {
    using type = float;
};
template <>
struct SumAccumulator<int8_t> {
    using type = uint32_t;
};
template <>
struct SumAccumulator<uint8_t> {
    using type = uint32_t;
};
template <>
struct SumAccumulator<int16_t> {
    using type = uint32_t;
};
template <>
struct SumAccumulator<uint16_t> {
    using type = uint32_t;
};
template <typename T>
using sum_accumulator_t = typename SumAccumulator<T>::type;

template <typename T>
GPUPRIM_HD sum_accumulator_t<T> to_accumulator(T x) {
    if constexpr (kIsHalf<T>) return widen(x);
    else return static_cast<sum_accumulator_t<T>>(x);
}
template <typename T>
GPUPRIM_HD T from_accumulator(sum_accumulator_t<T> a) {
    if constexpr (kIsHalf<T>) return round_to<T>(a);
    else return static_cast<T>(a);
}

// acc + a * b: fused for floats, wrapping for integers.
template <typename T>
GPUPRIM_HD T multiply_add(T a, T b, T acc) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b) + static_cast<U>(acc));
    } else {
#if defined(__CUDA_ARCH__)
        return canonical_nan_if_nan(fma(a, b, acc));
#else
        return canonical_nan_if_nan(std::fma(a, b, acc));
#endif
    }
}

// Operators of the narrow dtypes (8- and 16-bit integers, 16-bit floats)
// for code that folds elements into a wider running value (the CUDA
// kernels): load() brings an element in, Combine folds running values,
// store() gives the element-typed result. Combine is a 32-bit (or f32)
// operator, so the kernels' one-instruction warp reductions apply; its
// identity may lie outside the element's range (INT32_MAX for an i8 MIN),
// which store() clamps back to the element's own identity.
template <typename T>
struct WideSumOp {
    using Accumulator = sum_accumulator_t<T>;
    using Combine = SumOp<Accumulator>;
    GPUPRIM_HD static Accumulator load(T x) { return to_accumulator(x); }
    GPUPRIM_HD static T store(Accumulator a) { return from_accumulator<T>(canonical_nan_if_nan(a)); }
};

template <typename T, bool kMin>
struct WideMinMaxOp {
    static_assert(sizeof(T) <= 2, "for the narrow dtypes");
    // 16-bit floats go through their order keys (MinMaxKey), integers as they are.
    using Accumulator = std::conditional_t<kIsHalf<T> || std::is_unsigned_v<T>, uint32_t, int32_t>;
    using Combine = std::conditional_t<kMin, MinOp<Accumulator>, MaxOp<Accumulator>>;
    GPUPRIM_HD static Accumulator load(T x) {
        if constexpr (kIsHalf<T>) return MinMaxKey<T, kMin>::key(x);
        else return Accumulator(x);
    }
    GPUPRIM_HD static T store(Accumulator a) {
        if constexpr (kIsHalf<T>) {
            // MIN's 32-bit identity is above every 16-bit key: the largest key (+inf).
            return MinMaxKey<T, kMin>::value(uint16_t(a > 0xFFFFu ? 0xFFFFu : a));
        } else {
            const Accumulator highest = Accumulator(ElementTraits<T>::highest());
            if (a > highest) return T(highest);
            if constexpr (std::is_signed_v<T>) {
                const Accumulator lowest = Accumulator(ElementTraits<T>::lowest());
                if (a < lowest) return T(lowest);
            }
            return T(a);
        }
    }
};

// The SUM / MIN / MAX operator a kernel runs for T: the plain one for the
// 4- and 8-byte dtypes, the wide one for the narrow dtypes.
template <typename T>
constexpr bool kIsNarrow = sizeof(T) <= 2;
template <typename T>
using SumOpFor = std::conditional_t<kIsNarrow<T>, WideSumOp<T>, SumOp<T>>;
template <typename T>
using MinOpFor = std::conditional_t<kIsNarrow<T>, WideMinMaxOp<T, true>, MinOp<T>>;
template <typename T>
using MaxOpFor = std::conditional_t<kIsNarrow<T>, WideMinMaxOp<T, false>, MaxOp<T>>;

}  // namespace gpuprim
