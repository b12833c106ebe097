// SPDX-License-Identifier: Apache-2.0
// Per-architecture tuning of the segmented scan and reduce
// (src/cuda/segmented_scan/segmented_scan.cu), by element width. Compile-time
// configurations: architectures that share one share its instantiations.
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// kThreads threads per block, kItems consecutive elements per thread (a tile
// of kThreads * kItems elements: 16 KB of 4- and 8-byte elements, 8 and 4 KB
// of the narrow ones, whose running values are 32-bit like a 4-byte tile's);
// kMinBlocks resident blocks per SM the register allocator must allow; how
// many 32-tile windows of aggregates a float sum's look-back keeps before it
// waits for an inclusive value instead of reading further back (exact
// operators fold the windows they pass and walk without limit:
// engine/tile_lookback.cuh); the back-off between look-back polls (ns).
template <int Threads, int Items, int MinBlocks, int MaxSavedWindows, uint32_t PollNs>
struct SegmentedScanConfig {
    static constexpr int kThreads = Threads;
    static constexpr int kItems = Items;
    static constexpr int kTileItems = Threads * Items;
    static constexpr int kMinBlocks = MinBlocks;
    static constexpr int kMaxSavedWindows = MaxSavedWindows;
    static constexpr uint32_t kPollNs = PollNs;
    static_assert(Threads % 32 == 0 && Threads / 32 <= 32, "whole warps; warp 0 scans the warp totals");
    static_assert(32 % Items == 0, "a thread's head flags lie in one 32-bit word of the tile's bitmap");
};

// Hopper (sm_90). Not measured yet: the geometry of the flat scan's
// one-tile-per-block kernels (16 KB tiles, several blocks per SM so that
// tiles waiting on their look-back leave the SM busy).
template <int kElementBytes>
struct SegmentedScanTuningSm90 {
    using Config = SegmentedScanConfig<256, kElementBytes == 8 ? 8 : 16, 3, 8, 64>;
};

// Ampere and newer than Hopper: Hopper's until measured (the same instantiations).
template <int kElementBytes>
using SegmentedScanTuningSm80 = SegmentedScanTuningSm90<kElementBytes>;
template <int kElementBytes>
using SegmentedScanTuningNewer = SegmentedScanTuningSm90<kElementBytes>;

// Calls f(Tuning{}) with the segmented scan's tuning for the device code's
// architecture (code_arch.h).
template <int kElementBytes, typename F>
void with_segmented_scan_tuning(int code_arch, F &&f) {
    with_arch_tuning<SegmentedScanTuningSm80<kElementBytes>, SegmentedScanTuningSm90<kElementBytes>,
                     SegmentedScanTuningNewer<kElementBytes>>(code_arch, f);
}

}  // namespace gpuprim::cuda
