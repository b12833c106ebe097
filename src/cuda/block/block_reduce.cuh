// SPDX-License-Identifier: Apache-2.0
// Block-level reduction: each warp reduces by shuffles (or redux.sync), then
// the warp totals are combined in warp order. Fixed tree, so float sums are
// reproducible.
#pragma once

#include "cuda/warp/warp_reduce.cuh"

namespace gpuprim::cuda {

// The launch must use exactly kThreads threads: the number of warp totals is
// then a constant and their fold unrolls.
template <typename T, int kThreads>
struct BlockReduce {
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block of whole warps");
    static constexpr int kWarps = kThreads / 32;
    // Up to this many warp totals thread 0 folds one after another (a few
    // shared-memory loads and dependent ops); more go through warp 0's
    // shuffle tree, whose steps each cost a shuffle's latency.
    static constexpr int kSerialWarps = 8;

    struct TempStorage {
        T warp_totals[kWarps];
    };

    // Every thread of the block must call it; thread 0 receives the result
    // (other threads get unspecified values). Two calls on one TempStorage
    // must be separated by __syncthreads().
    template <typename Op>
    static __device__ __forceinline__ T reduce(T value, Op op, TempStorage &storage) {
        const unsigned lane = threadIdx.x % 32;
        const unsigned warp = threadIdx.x / 32;
        value = warp_reduce(value, op);
        if constexpr (kWarps == 1) return value;
        if (lane == 0) storage.warp_totals[warp] = value;
        __syncthreads();
        if constexpr (kWarps <= kSerialWarps) {
            if (threadIdx.x == 0) {
#pragma unroll
                for (int w = 1; w < kWarps; ++w) value = op(value, storage.warp_totals[w]);
            }
        } else if (warp == 0) {
            value = lane < kWarps ? storage.warp_totals[lane] : Op::identity();
            value = warp_reduce(value, op, kWarps);
        }
        return value;
    }
};

}  // namespace gpuprim::cuda
