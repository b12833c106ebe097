// SPDX-License-Identifier: Apache-2.0
// How reduce-by-key folds the values of a run (core/ops.h, the rules both
// backends share): each value enters a running value (Acc) through load(),
// running values fold with combine(), the result leaves through store().
// - SUM: SumAccumulator's value (f32 for f16/bf16, 32 bits for the narrow
//   integers: WideSumOp); floats add plainly and the one canonical NaN is
//   put in at store() (a NaN stays NaN through every later add, as in the
//   flat reduce's PlainSum);
// - MIN/MAX: MinOp/MaxOp (NaN wins, the larger bits; -0 < +0), the narrow
//   dtypes through WideMinMaxOp (16-bit floats by their order keys).
// No identity is ever folded in (a float SUM of -0.0 and an identity +0.0
// would give +0.0): the kernels track whether a running value holds anything.
// Running values travel through memory as 8-byte slots (to_slot/from_slot).
#pragma once

#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

template <typename T, gpuprim_op_t kOp>
struct RunOp {
    static_assert(kOp == GPUPRIM_OP_SUM || kOp == GPUPRIM_OP_MIN || kOp == GPUPRIM_OP_MAX, "SUM, MIN or MAX");
    using Value = T;
    using Rule = std::conditional_t<kOp == GPUPRIM_OP_SUM, SumOpFor<T>,
                                    std::conditional_t<kOp == GPUPRIM_OP_MIN, MinOpFor<T>, MaxOpFor<T>>>;
    static constexpr bool kWide = kIsNarrow<T>;

    template <typename R, bool kIsWide>
    struct Parts {  // the plain operators: the element is its own running value
        using Acc = R;
        using Combine = Rule;
    };
    template <typename R>
    struct Parts<R, true> {
        using Acc = typename Rule::Accumulator;
        using Combine = typename Rule::Combine;
    };
    using Acc = typename Parts<T, kWide>::Acc;
    static constexpr bool kPlainFloatSum = kOp == GPUPRIM_OP_SUM && std::is_floating_point_v<Acc>;

    __device__ __forceinline__ static Acc load(T x) {
        if constexpr (kWide) return Rule::load(x);
        else return x;
    }
    __device__ __forceinline__ static Acc combine(Acc older, Acc newer) {
        if constexpr (kPlainFloatSum) return older + newer;
        else return typename Parts<T, kWide>::Combine()(older, newer);
    }
    __device__ __forceinline__ static T store(Acc a) {
        if constexpr (kWide) return Rule::store(a);  // WideSumOp::store puts in the canonical NaN
        else if constexpr (kOp == GPUPRIM_OP_SUM) return canonical_nan_if_nan(a);
        else return a;  // MIN/MAX: the NaN that won, its bits kept
    }
};

// Integer values run by width, so each key width compiles 8 integer
// operators instead of 24: every integer SUM as unsigned (wrapping sums, and
// the narrow dtypes' 32-bit running value cut back to the element, give the
// same bits signed or not), a signed MIN/MAX as unsigned with the sign bit
// flipped on the way in and out (value_flip). Calls f(RunOp<...>{}).
template <typename F>
void dispatch_run_op(gpuprim_dtype_t value_dtype, gpuprim_op_t op, const char *what, F &&f) {
    dispatch_dtype(value_dtype, [&](auto type) {
        using T = decltype(type);
        using V = wrapping_t<T>;  // integers by width
        switch (op) {
        case GPUPRIM_OP_SUM: return f(RunOp<V, GPUPRIM_OP_SUM>{});
        case GPUPRIM_OP_MIN: return f(RunOp<V, GPUPRIM_OP_MIN>{});
        case GPUPRIM_OP_MAX: return f(RunOp<V, GPUPRIM_OP_MAX>{});
        default: fail(GPUPRIM_ERROR_INTERNAL, "%s: op %d is not SUM, MIN or MAX", what, static_cast<int>(op));
        }
    });
}

// ReduceByKeyParams::value_flip for (value dtype, op).
inline unsigned long long value_flip(gpuprim_dtype_t value_dtype, gpuprim_op_t op) {
    return dispatch_dtype(value_dtype, [&](auto type) -> unsigned long long {
        using T = decltype(type);
        if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
            return op == GPUPRIM_OP_SUM ? 0 : 1ull << (8 * sizeof(T) - 1);
        else return 0;
    });
}

// A value (or result) with value_flip applied; floats pass as they are.
template <typename T>
__device__ __forceinline__ T flip_value(T x, unsigned long long flip) {
    if constexpr (std::is_integral_v<T>) return T(x ^ T(flip));
    else return x;
}

template <typename Acc>
__device__ __forceinline__ unsigned long long to_slot(Acc a) {
    static_assert(sizeof(Acc) == 4 || sizeof(Acc) == 8, "running values are 4 or 8 bytes");
    if constexpr (sizeof(Acc) == 8) return bit_cast<unsigned long long>(a);
    else return bit_cast<uint32_t>(a);
}
template <typename Acc>
__device__ __forceinline__ Acc from_slot(unsigned long long slot) {
    if constexpr (sizeof(Acc) == 8) return bit_cast<Acc>(slot);
    else return bit_cast<Acc>(static_cast<uint32_t>(slot));
}

// A running value from another lane (every lane of the mask calls).
template <typename Acc>
__device__ __forceinline__ Acc shuffle_up_value(Acc a, unsigned delta) {
    if constexpr (sizeof(Acc) == 8)
        return bit_cast<Acc>(__shfl_up_sync(0xffffffffu, bit_cast<unsigned long long>(a), delta));
    else return bit_cast<Acc>(__shfl_up_sync(0xffffffffu, bit_cast<uint32_t>(a), delta));
}
template <typename Acc>
__device__ __forceinline__ Acc shuffle_down_value(Acc a, unsigned delta) {
    if constexpr (sizeof(Acc) == 8)
        return bit_cast<Acc>(__shfl_down_sync(0xffffffffu, bit_cast<unsigned long long>(a), delta));
    else return bit_cast<Acc>(__shfl_down_sync(0xffffffffu, bit_cast<uint32_t>(a), delta));
}

// An index output or input of 4 or 8 bytes (lengths, run ids, positions).
__device__ __forceinline__ void store_index(void *to, uint32_t bytes, uint64_t at, uint64_t value) {
    if (bytes == 8) static_cast<uint64_t *>(to)[at] = value;
    else static_cast<uint32_t *>(to)[at] = static_cast<uint32_t>(value);
}
__device__ __forceinline__ uint64_t load_index(const void *from, uint32_t bytes, uint64_t at) {
    if (bytes == 8) return static_cast<const uint64_t *>(from)[at];
    return static_cast<const uint32_t *>(from)[at];
}

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
