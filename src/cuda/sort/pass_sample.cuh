// SPDX-License-Identifier: Apache-2.0
// The sample that ranks each radix pass (pass_ranking.h): runs of 32
// consecutive keys, taken by the order check (radix_order_kernel.cuh) from
// a tile it has staged, counted into the counter words the histogram
// kernel's last block reads (radix_histogram_kernel.cuh).
#pragma once

#include "core/key_transform.h"
#include "cuda/sort/radix_plan.cuh"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace radix_detail {

// Runs of 32 consecutive keys a block samples for each pass, spread over a
// tile it checked: one run a warp, at most this many a pass. In the order
// check the keys are in shared memory already, so the sample costs a warp
// one match.any and no load; in the histogram kernel, where it had to load
// its keys, it cost sorts of 2^19-2^20 keys 2-6% (bench/RESULTS.md, run 110).
constexpr int kSampleRuns = 2;

// Blocks that sample at most (every ceil(grid / this)-th block): enough
// keys for the estimate (16,384 a pass; 8,192 for 8-byte keys, one run a
// pass), and few atomics on the counter words, which the order check's
// blocks also read to decide when to stop.
constexpr uint32_t kSampleBlocks = 256;

__device__ __forceinline__ bool block_samples() {
    const uint32_t stride = (gridDim.x + kSampleBlocks - 1) / kSampleBlocks;
    return blockIdx.x % stride == 0;
}

// One warp: for each of the run's `valid` keys (the rest of the 32 lanes
// are past the input), whether an earlier key of the run has the same lower
// digits (those of the passes before `pass`), and whether the last such key
// has the same digit of this pass too; added to the counter words the last
// histogram block reads (neighbour_agreement). Fixed keys, counted in a
// fixed order: the same plan every run. `window` is the pass's digit,
// `low_bit` the first bit the sort orders by.
template <typename K>
__device__ __forceinline__ void sample_pass_neighbours(const K *run, uint32_t valid, KeyKind kind, bool descending,
                                                       DigitWindow window, uint32_t low_bit, int pass,
                                                       uint32_t *counters) {
    using Word = std::conditional_t<sizeof(K) == 8, unsigned long long, unsigned>;
    constexpr uint32_t kWordBits = 8 * sizeof(Word);
    if (window.mask == 0) return;  // a constant digit: the pass never runs
    // The sorted bits below this pass's digit. Lanes past the keys take all
    // ones, which no key's lower bits are (they never reach this digit).
    const Word lower_mask =
        (window.shift >= kWordBits ? ~Word(0) : (Word(1) << window.shift) - 1) & ~((Word(1) << low_bit) - 1);
    const uint32_t lane = threadIdx.x % 32;
    const bool is_key = lane < valid;
    const K radix_key = radix_key_map<K>(kind, descending)(is_key ? run[lane] : K(0));
    const Word lower = is_key ? Word(radix_key) & lower_mask : ~Word(0);
    const uint32_t digit = digit_of(radix_key, window);
    const uint32_t earlier_peers = __match_any_sync(0xffffffffu, lower) & ((1u << lane) - 1);
    const int neighbour = earlier_peers != 0 ? 31 - __clz(earlier_peers) : int(lane);
    const uint32_t neighbour_digit = __shfl_sync(0xffffffffu, digit, neighbour);
    const bool has_neighbour = is_key && earlier_peers != 0;
    const uint32_t neighbours = __popc(__ballot_sync(0xffffffffu, has_neighbour));
    const uint32_t agreements = __popc(__ballot_sync(0xffffffffu, has_neighbour && neighbour_digit == digit));
    if (lane == 0 && valid != 0) {
        if (pass == 0) atomicAdd(&counters[kSampledKeysWord], valid);
        if (neighbours != 0) atomicAdd(&counters[kSampledNeighboursWord + pass], neighbours);
        if (agreements != 0) atomicAdd(&counters[kSampledAgreementsWord + pass], agreements);
    }
}

// A block's sample of a tile of kTile keys, `valid` of them in the input:
// warp w takes pass w % passes on run w / passes, up to kSampleRuns runs
// spread over the tile (fewer where the block has fewer warps than that
// many runs of every pass; every pass gets at least one).
template <typename K, int kThreads, uint32_t kTile>
__device__ __forceinline__ void sample_tile(const K *tile, uint32_t valid, KeyKind kind, bool descending,
                                            const PassWindows &windows, uint32_t *counters) {
    constexpr int kPassCount = kPasses<K>;
    constexpr int kWarps = kThreads / 32;
    static_assert(kWarps >= kPassCount, "a warp per pass at least");
    constexpr int kRuns = kWarps / kPassCount < kSampleRuns ? kWarps / kPassCount : kSampleRuns;
    static_assert(kTile / kRuns >= 32, "whole runs");
    const int warp = int(threadIdx.x / 32);
    const int run = warp / kPassCount;
    if (run >= kRuns) return;
    const uint32_t start = uint32_t(run) * (kTile / kRuns);
    const uint32_t run_valid = valid > start ? (valid - start < 32 ? valid - start : 32) : 0;
    const int pass = warp % kPassCount;
    // The window by constant indices: an index known only at run time into
    // the kernel's parameters copies them to the stack (128 bytes a thread;
    // the order check took 8-22 us longer so).
    DigitWindow window = windows.pass[0];
#pragma unroll
    for (int p = 1; p < kPassCount; ++p)
        if (p == pass) window = windows.pass[p];
    sample_pass_neighbours<K>(tile + start, run_valid, kind, descending, window, windows.pass[0].shift, pass, counters);
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
