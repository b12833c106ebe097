// SPDX-License-Identifier: Apache-2.0
// Tuning of reduce-by-key (reduce_by_key.cu, agent_reduce_by_key.cuh,
// crossing_runs_kernel.cuh) in one place; docs/tuning/reduce_by_key.md
// keeps the record of what was measured and lists the leads.
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// The tile, by the widths of the key and the running value: kThreads
// threads of kItems consecutive elements each (a blocked arrangement, so a
// thread folds its run pieces in element order). kItems is odd so that
// reading a thread's elements from the shared staging array (stride kItems
// words) meets no bank conflicts for 4-byte keys (2-way for 8-byte). Keys
// and running values of 8 bytes together (u32 keys, f32 sums) take 17
// (tiles of 4,352; CUB 3.6's sm_90 tuning takes 18 for u32/f32): tiles of
// 2,304 spent ~25 ns each on the H200, latency-bound at 904 GB/s against
// CUB's 2,260 (bench/RESULTS.md, twenty-seventh run). Wider ones keep 9,
// under the register limit of 3 blocks an SM. Shared memory: one 8-byte
// slot per element (keys, running values, then the runs' lengths): 34 KiB
// (18 KiB).
template <int kKeyBytes, int kAccBytes>
struct ReduceByKeyShape {
    static constexpr int kThreads = 256;
    static constexpr int kItems = kKeyBytes + kAccBytes <= 8 ? 17 : 9;
    static constexpr uint32_t kTileItems = uint32_t(kThreads) * kItems;
    static constexpr int kMinBlocks = 3;  // __launch_bounds__: up to 80 registers a thread
    static_assert(kThreads % 32 == 0 && kThreads / 32 <= 32, "whole warps, one warp's totals per lane");
};

// The crossing-runs kernel: one warp per tile, kWarps warps a block.
struct CrossingRunsShape {
    static constexpr int kWarps = 8;
    static constexpr int kThreads = kWarps * 32;
};

// What may differ by architecture, chosen at run time.
struct ReduceByKeyTuning {
    uint32_t poll_ns;  // back-off between two polls of a look-back window (ns)
};

// Hopper (sm_90): select's (and the scan's) back-off; not measured here.
struct ReduceByKeyTuningSm90 {
    static ReduceByKeyTuning tuning() { return {64}; }
};

// Ampere/Ada (the sm_80 code): not measured.
struct ReduceByKeyTuningSm80 {
    static ReduceByKeyTuning tuning() { return {64}; }
};

// Newer than Hopper: Hopper's until measured.
using ReduceByKeyTuningNewer = ReduceByKeyTuningSm90;

// Reduce-by-key's tuning for the device code's architecture (code_arch.h).
inline ReduceByKeyTuning reduce_by_key_tuning(int code_arch) {
    return with_arch_tuning<ReduceByKeyTuningSm80, ReduceByKeyTuningSm90, ReduceByKeyTuningNewer>(
        code_arch, [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
