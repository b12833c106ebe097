// SPDX-License-Identifier: Apache-2.0
// Per-architecture shape of the adjacent-difference kernel
// (src/cuda/adjacent_difference/). docs/tuning/adjacent_difference.md
// keeps the measurements and the leads.
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// Compile-time part, the same for every architecture, so the kernel is
// instantiated once per dtype.
// Threads per block.
constexpr int kDifferenceBlockThreads = 256;
// Elements a thread carries: 32 bytes of loads in flight a thread (two
// 16-byte vectors' worth), warp-striped, so each load instruction of a warp
// reads 32 consecutive elements.
template <typename T>
constexpr int kDifferenceItemsFor = sizeof(T) >= 8 ? 4 : sizeof(T) == 4 ? 8 : 16;

struct AdjacentDifferenceTuning {
    // The grid is at most sm_count * blocks_per_sm blocks, each warp taking
    // chunks of 32 * items elements round robin past that; 0: a warp a
    // chunk (up to the largest grid), as CUB's block a tile.
    int blocks_per_sm;
};

// Hopper (sm_90): a warp a chunk. Against 8 blocks of 256 threads an SM
// walking chunks, 4-8% faster at 2^24 for 2- to 8-byte elements and 15%
// for u8 (H100, with the read-only loads and unchecked whole chunks).
struct AdjacentDifferenceTuningSm90 {
    static AdjacentDifferenceTuning tuning() { return {0}; }
};

// Ampere/Ada (sm_80 code): 8 blocks of 256 threads fill an SM's 2,048
// threads; not measured.
struct AdjacentDifferenceTuningSm80 {
    static AdjacentDifferenceTuning tuning() { return {8}; }
};

// Newer than Hopper: Hopper's until measured.
using AdjacentDifferenceTuningNewer = AdjacentDifferenceTuningSm90;

// The adjacent difference's tuning for the device code's architecture (code_arch.h).
inline AdjacentDifferenceTuning adjacent_difference_tuning(int code_arch) {
    return with_arch_tuning<AdjacentDifferenceTuningSm80, AdjacentDifferenceTuningSm90,
                            AdjacentDifferenceTuningNewer>(code_arch,
                                                           [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
