// SPDX-License-Identifier: Apache-2.0
// Shape of the histogram kernel (src/cuda/histogram/). Not yet measured on
// a GPU: docs/tuning/histogram.md is to keep the record.
#pragma once

#include "cuda/util/code_arch.h"
#include "cuda/util/grid_limits.h"

#include <cstdint>

namespace gpuprim::cuda {

// Compile-time part, the same for every architecture: one kernel per dtype
// and bin rule (even or edges).
constexpr int kHistogramBlockThreads = 256;
// 16-byte vectors each thread loads back to back before binning them.
constexpr int kHistogramItems = 4;
// Up to this many bins, a block's shared counters are kHistogramBinColumns
// columns (agent_histogram.cuh: lane l counts in column l % columns), so
// equal values of a warp meet 4-way bank conflicts instead of 32-way: 8 KiB
// for 256 bins, little to clear and sum per block.
constexpr uint64_t kHistogramColumnBins = 256;
constexpr uint32_t kHistogramBinColumns = 8;
// 1-byte dtypes count their 256 values in a column per lane (32 KiB): no
// bank conflicts whatever the values.
constexpr uint32_t kHistogramValueColumns = 32;
static_assert(kHistogramBlockThreads % kHistogramValueColumns == 0, "whole warps: a lane's column is its thread's");
// Elements one launch covers at most: a block's shared (32-bit) counters
// then never wrap, whatever the grid.
constexpr uint64_t kHistogramLaunchElements = uint64_t(1) << 31;
// Rows one launch covers at most (the _rows calls): grid.y's limit.
constexpr uint64_t kHistogramLaunchRows = kMaxGridY;

struct HistogramTuning {
    // The grid is at most sm_count * blocks_per_sm blocks (fewer per SM when
    // fewer fit); threads loop over the input.
    int blocks_per_sm;
    // The same for the 1-byte dtypes' value counts (32 KiB a block).
    int value_blocks_per_sm;
    // A block keeps its own 32-bit counters (and, with edges, the edges'
    // keys) in shared memory when they take at most this many bytes; past it
    // every element is an atomic add to the counts in global memory.
    uint32_t shared_bytes;
};

// Hopper (sm_90). 96 KiB: 24,576 bins with even bins (65,536 take the
// global path), two blocks an SM at the limit. Value counts: 7 blocks of
// 32 KiB fit, the grid asks for up to 8 (docs/tuning/histogram.md).
struct HistogramTuningSm90 {
    static HistogramTuning tuning() { return {4, 8, 96u << 10}; }
};

// Ampere/Ada (sm_80 code): not measured; 48 KiB fits every sm_8x part.
struct HistogramTuningSm80 {
    static HistogramTuning tuning() { return {4, 8, 48u << 10}; }
};

// Newer than Hopper: Hopper's until measured.
using HistogramTuningNewer = HistogramTuningSm90;

// The histograms' tuning for the device code's architecture (code_arch.h).
inline HistogramTuning histogram_tuning(int code_arch) {
    return with_arch_tuning<HistogramTuningSm80, HistogramTuningSm90, HistogramTuningNewer>(
        code_arch, [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
