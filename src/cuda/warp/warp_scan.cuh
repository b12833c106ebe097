// SPDX-License-Identifier: Apache-2.0
// Warp-level scan building blocks: shuffle scans and folds across the 32
// lanes of a warp, plus the operator traits the scan kernels share.
#pragma once

#include "core/ops.h"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

constexpr int kWarpLanes = 32;
constexpr unsigned kWarpLaneMask = 0xffffffffu;

// Float SUM is the one operator here that is not exactly associative: scans
// of it combine in an order fixed by the code (never by timing) so results
// are bitwise reproducible. Its neutral element is -0.0, not the +0.0
// identity: -0.0 + x == x for every x (including -0.0), so padding with it
// or starting a fold from it never changes a value.
template <typename T, typename Op>
struct ScanOpTraits {
    static constexpr bool kOrdered =
        std::is_floating_point_v<T> && std::is_same_v<Op, SumOp<T>>;
    // Host and device: the host starts launches from it too
    // (scan/dispatch_scan.cuh's three-pass narrow scan).
    GPUPRIM_HD static T neutral() {
        if constexpr (kOrdered) return T(-0.0);
        else return Op::identity();
    }
};

// Kogge-Stone inclusive scan of N independent values per lane across the warp
// (N scans at once, interleaved for instruction-level parallelism).
template <int N, typename T, typename Op>
__device__ __forceinline__ void warp_inclusive_scan(T (&x)[N], Op op, int lane) {
#pragma unroll
    for (int d = 1; d < kWarpLanes; d <<= 1) {
        T up[N];
#pragma unroll
        for (int k = 0; k < N; ++k) up[k] = __shfl_up_sync(kWarpLaneMask, x[k], d);
        if (lane >= d) {
#pragma unroll
            for (int k = 0; k < N; ++k) x[k] = op(up[k], x[k]);
        }
    }
}

// Reduction across the warp for exactly associative and commutative
// operators (integer SUM, MIN, MAX); every lane gets the result.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce_exact(T x, Op op) {
#pragma unroll
    for (int d = kWarpLanes / 2; d > 0; d >>= 1) x = op(x, __shfl_xor_sync(kWarpLaneMask, x, d));
    return x;
}

// acc op v[first] op v[first+1] ... op v[31], folded strictly left to right,
// where v[k] is lane k's value. Every lane computes the same chain, so no
// broadcast is needed afterwards.
template <typename T, typename Op>
__device__ __forceinline__ T warp_fold_ordered(T acc, T value, int first, Op op) {
#pragma unroll
    for (int k = 0; k < kWarpLanes; ++k) {
        const T v = __shfl_sync(kWarpLaneMask, value, k);
        if (k >= first) acc = op(acc, v);
    }
    return acc;
}

}  // namespace gpuprim::cuda
