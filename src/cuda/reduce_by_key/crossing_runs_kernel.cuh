// SPDX-License-Identifier: Apache-2.0
// The results of the runs that cross tiles (reduce-by-key's second kernel,
// after the tile kernel has left every tile's record: reduce_by_key_params.cuh
// TileRecords). One warp per tile b whose records name an open run (a run
// begun in an earlier tile that ends in b): it finds the tile a where the
// run began (the nearest earlier tile with a head), then folds, in tile
// order, a's last piece, the whole tiles a+1..b-1 (each inside the run: its
// last piece is all of it) and b's open piece. The whole tiles are split
// into 32 consecutive chunks, each lane folding one in order, and the lanes
// joined in a fixed in-order tree: the association depends on a and b alone,
// so float sums are the same bits on every run.
#pragma once

#include "cuda/reduce_by_key/reduce_by_key_params.cuh"
#include "cuda/reduce_by_key/reduce_by_key_policy.cuh"
#include "cuda/reduce_by_key/run_ops.cuh"

#include <cstdint>

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

// The nearest tile before `tile` with a head (tile 0 always has one), by a
// whole warp, 32 tiles a step.
__device__ __forceinline__ uint32_t run_start_tile(const uint32_t *heads, uint32_t tile, int lane) {
    int64_t window_end = tile;  // the window is tiles [window_end - 32, window_end)
    while (window_end > 0) {
        const int64_t index = window_end - 32 + lane;
        const unsigned found = __ballot_sync(0xffffffffu, index >= 0 && heads[index] > 0);
        if (found) return uint32_t(window_end - 32 + (31 - __clz(found)));
        window_end -= 32;
    }
    return 0;  // not reached: tile 0 starts a run
}

template <typename Op>
__global__ void __launch_bounds__(CrossingRunsShape::kThreads)
    crossing_runs_kernel(const ReduceByKeyParams p) {
    using Acc = typename Op::Acc;
    const int lane = int(threadIdx.x) % 32;
    const uint64_t b = uint64_t(blockIdx.x) * CrossingRunsShape::kWarps + threadIdx.x / 32;
    if (b >= p.num_tiles) return;  // the whole warp
    const TileRecords &records = p.records;
    const unsigned long long run = records.open_runs[b];
    if (run == kNoRun) return;  // the whole warp
    const uint32_t a = run_start_tile(records.heads, uint32_t(b), lane);
    // Whole tiles a+1 .. b-1: lane l folds chunk l of them in order.
    const uint64_t whole = b - 1 - a;
    const uint64_t chunk = (whole + 31) / 32;
    const uint64_t from = a + 1 + uint64_t(lane) * chunk;
    const uint64_t to = from + chunk < b ? from + chunk : b;
    bool any = false;
    Acc folded{};
    for (uint64_t t = from; t < to; ++t) {
        const Acc v = from_slot<Acc>(records.last_values[t]);
        folded = any ? Op::combine(folded, v) : v;
        any = true;
    }
    // Lanes in order: lane l takes lane l + offset where l is a multiple of 2 * offset.
#pragma unroll
    for (unsigned offset = 1; offset < 32; offset *= 2) {
        const Acc other = shuffle_down_value(folded, offset);
        const bool other_any = __shfl_down_sync(0xffffffffu, int(any), offset) != 0;
        if ((unsigned(lane) & (2 * offset - 1)) == 0 && other_any) {
            folded = any ? Op::combine(folded, other) : other;
            any = true;
        }
    }
    if (lane == 0) {
        Acc total = from_slot<Acc>(records.last_values[a]);
        if (any) total = Op::combine(total, folded);
        total = Op::combine(total, from_slot<Acc>(records.open_values[b]));
        static_cast<typename Op::Value *>(p.results)[run] = flip_value(Op::store(total), p.value_flip);
    }
}

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
