// SPDX-License-Identifier: Apache-2.0
// Warp-level reduction by shuffles. The combination tree is fixed (lane i
// takes lane i + delta, lower lane on the left), so a float sum over a warp is
// the same every run.
#pragma once

#include "core/ops.h"

#include <type_traits>

namespace gpuprim::cuda {

// Shuffles by bit pattern: every 4- and 8-byte type in one shuffle; larger
// trivially copyable types of whole 4-byte words (a (key, position) pair of
// argreduce) one word at a time.
template <typename T>
__device__ __forceinline__ T shuffle_down(T value, unsigned delta) {
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
        return bit_cast<T>(__shfl_down_sync(0xffffffffu, bit_cast<bits_t<T>>(value), delta));
    } else {
        static_assert(sizeof(T) % 4 == 0 && std::is_trivially_copyable_v<T>,
                      "shuffle_down takes 4- or 8-byte types, or trivially copyable whole 4-byte words");
        constexpr int kWords = int(sizeof(T) / 4);
        uint32_t words[kWords];
        memcpy(words, &value, sizeof value);
#pragma unroll
        for (int w = 0; w < kWords; ++w) words[w] = __shfl_down_sync(0xffffffffu, words[w], delta);
        memcpy(&value, words, sizeof value);
        return value;
    }
}

// 4-byte integer SUM/MIN/MAX have a one-instruction warp reduction
// (redux.sync, sm_80+) in place of five shuffle steps; the sum wraps like SumOp.
template <typename T, typename Op>
constexpr bool kHasWarpRedux =
    std::is_integral_v<T> && sizeof(T) == 4 &&
    (std::is_same_v<Op, SumOp<T>> || std::is_same_v<Op, MinOp<T>> || std::is_same_v<Op, MaxOp<T>>);

template <typename T, typename Op>
__device__ __forceinline__ T warp_redux(T value) {
    using Redux = std::conditional_t<std::is_signed_v<T>, int, unsigned>;
    if constexpr (std::is_same_v<Op, SumOp<T>>)
        return static_cast<T>(__reduce_add_sync(0xffffffffu, static_cast<unsigned>(value)));
    else if constexpr (std::is_same_v<Op, MinOp<T>>)
        return static_cast<T>(__reduce_min_sync(0xffffffffu, static_cast<Redux>(value)));
    else
        return static_cast<T>(__reduce_max_sync(0xffffffffu, static_cast<Redux>(value)));
}

// All 32 lanes must call it; lane 0 receives the reduction of lanes
// [0, lanes), whose count must be the same in every lane. Lanes from `lanes`
// up to the next power of two must hold the operator's identity; the steps
// past that power of two are skipped (a block's 8 warp totals take 3 steps).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#  define GPUPRIM_HAS_WARP_REDUX 1
#else
#  define GPUPRIM_HAS_WARP_REDUX 0
#endif

template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T value, Op op, unsigned lanes = 32) {
    if constexpr (GPUPRIM_HAS_WARP_REDUX && kHasWarpRedux<T, Op>) {
        return warp_redux<T, Op>(value);
    } else {
#pragma unroll
        for (unsigned delta = 16; delta > 0; delta >>= 1)
            if (delta < lanes) value = op(value, shuffle_down(value, delta));
        return value;
    }
}

}  // namespace gpuprim::cuda
