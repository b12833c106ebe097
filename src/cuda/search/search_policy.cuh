// SPDX-License-Identifier: Apache-2.0
// Shape of the searchsorted kernel (src/cuda/search/). Not yet measured on a
// GPU: docs/tuning/search.md is to keep the record.
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// Compile-time part, the same for every architecture: one kernel per key
// width, index width and side.
// Threads per block (at least two warps: warps 0 and 1 find a sorted
// tile's first and last bounds side by side).
constexpr int kSearchBlockThreads = 256;
static_assert(kSearchBlockThreads >= 64 && kSearchBlockThreads % 32 == 0, "two whole warps at least");
// Queries per thread: a tile is kSearchBlockThreads * this many queries.
// 8-byte keys take half as many, so the tile's shared memory (queries,
// the keys' window, the results) stays near 32 KiB for every width.
template <typename Bits>
constexpr int kSearchItemsFor = sizeof(Bits) == 8 ? 4 : 8;
// The keys a sorted tile merges with, in tiles of queries: a tile whose
// queries' bounds span more keys than this binary-searches inside the span.
constexpr int kSearchWindowTiles = 2;
// Evenly spaced keys a block keeps in shared memory for unordered queries
// (8 KiB): their search replaces the top levels of every binary search.
template <typename Bits>
constexpr int kSearchSamplesFor = sizeof(Bits) == 8 ? 1024 : 2048;

struct SearchTuning {
    // The grid is at most sm_count * blocks_per_sm blocks (fewer per SM when
    // fewer fit); blocks loop over the tiles.
    int blocks_per_sm;
};

// Hopper (sm_90): not measured; 4 blocks of ~32 KiB shared memory a SM.
struct SearchTuningSm90 {
    static SearchTuning tuning() { return {4}; }
};

// Ampere/Ada (sm_80 code): the same shape; not measured.
struct SearchTuningSm80 {
    static SearchTuning tuning() { return {4}; }
};

// Newer than Hopper: Hopper's until measured.
using SearchTuningNewer = SearchTuningSm90;

// Searchsorted's tuning for the device code's architecture (code_arch.h).
inline SearchTuning search_tuning(int code_arch) {
    return with_arch_tuning<SearchTuningSm80, SearchTuningSm90, SearchTuningNewer>(
        code_arch, [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
