// SPDX-License-Identifier: Apache-2.0
// Tuning of select / partition / unique / run-length encode (select.cu,
// agent_select.cuh) in one place; docs/tuning/select.md keeps the record of
// what was measured and lists the leads.
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// The tile, fixed at compile time by the key's byte width (every
// architecture shares it, so each key width compiles once): kThreads
// threads of kItems keys each. A warp owns kItems * 32 consecutive keys and
// reads them 32 at a time (one coalesced access per round), so its ranks
// come from ballots in key order. Shared memory: one 8-byte slot per key of
// the tile (the staging of kept keys, values, positions, lengths): 32 KiB
// for 4096 4-byte keys, below the 48 KiB of static shared memory, 6 blocks
// an SM on an H100.
template <int kKeyBytes, bool kRuns>
struct SelectShape {
    static constexpr int kThreads = 256;
    static constexpr int kItems = kKeyBytes == 8 ? 12 : 16;
    // What __launch_bounds__ asks the register allocator for: 64 registers
    // a thread at 4 blocks of 256, where the runs' kernels (neighbours,
    // tails, lengths) spilled 48-60 bytes a thread (ptxas, sm_90): they ask
    // for 3 (80 registers).
    static constexpr int kMinBlocks = kRuns ? 3 : 4;
    static constexpr uint32_t kTileItems = uint32_t(kThreads) * kItems;
    static_assert(kThreads % 32 == 0 && kThreads / 32 <= 32, "whole warps, one warp's summaries per lane");
};

// What may differ by architecture, chosen at run time.
struct SelectTuning {
    // Back-off between two polls of a look-back window (ns), as the scan's.
    uint32_t poll_ns;
};

// Hopper (sm_90): the scan's look-back back-off (docs/tuning/scan.md: 0 to
// 200 ns within noise of each other); not measured here.
struct SelectTuningSm90 {
    static SelectTuning tuning() { return {64}; }
};

// Ampere/Ada (the sm_80 code): not measured.
struct SelectTuningSm80 {
    static SelectTuning tuning() { return {64}; }
};

// Newer than Hopper: Hopper's until measured.
using SelectTuningNewer = SelectTuningSm90;

// Select's tuning for the device code's architecture (code_arch.h).
inline SelectTuning select_tuning(int code_arch) {
    return with_arch_tuning<SelectTuningSm80, SelectTuningSm90, SelectTuningNewer>(
        code_arch, [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
