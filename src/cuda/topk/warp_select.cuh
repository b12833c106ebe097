// SPDX-License-Identifier: Apache-2.0
// Top-k of short segments (up to WarpSelectPolicy::kMaxLength keys): one warp
// a segment, no block barriers. The warp holds the segment's select keys in
// registers (item e of lane l is position e * 32 + l, so loads coalesce),
// finds the k-th smallest by a radix select over 8-bit digits (a 256-bin
// count per warp in shared memory, lane l owning bins 8l..8l+7 for the
// scan), takes the keys below the chosen prefix and the first of the equal
// ones by position (ranks from ballots, in position order), and writes each
// chosen key at its rank among the chosen, counted against all of them.
#pragma once

#include "cuda/topk/select_common.cuh"
#include "cuda/topk/topk_policy.cuh"

namespace gpuprim::cuda::selection {

template <typename K>
__global__ void __launch_bounds__(WarpSelectPolicy::kWarps * 32) warp_select_kernel(const TopkArgs args) {
    if (args.bounds.skipped()) return;  // offsets failed a deferred check
    using R = SelectKey<K>;
    constexpr int kWarps = WarpSelectPolicy::kWarps;
    constexpr int kItems = WarpSelectPolicy::kMaxLength / 32;
    constexpr int kBins = 256;
    constexpr int kReplicas = WarpSelectPolicy::kReplicas;
    constexpr int kKeyBits = 8 * sizeof(K);
    __shared__ uint32_t all_bins[kWarps][kBins * kReplicas];
    __shared__ R all_chosen_keys[kWarps][WarpSelectPolicy::kMaxLength];
    __shared__ uint16_t all_chosen_positions[kWarps][WarpSelectPolicy::kMaxLength];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint32_t lower_lanes = (1u << lane) - 1;
    uint32_t *bins = all_bins[warp];
    R *chosen_keys = all_chosen_keys[warp];
    uint16_t *chosen_positions = all_chosen_positions[warp];
    const uint32_t replica = lane % kReplicas;

    for (uint64_t g = uint64_t(blockIdx.x) * kWarps + warp; g < args.groups; g += uint64_t(gridDim.x) * kWarps) {
        const uint64_t s = segment_of(args, g);
        const uint64_t begin = args.bounds.offset(s);
        const uint32_t length = uint32_t(args.bounds.offset(s + 1) - begin);
        const uint32_t wanted = uint32_t(args.k < length ? args.k : length);
        if (wanted == 0) continue;  // uniform over the warp
        const K *in = static_cast<const K *>(args.keys_in) + begin;
        K loaded[kItems];
#pragma unroll
        for (int e = 0; e < kItems; ++e)
            if (e * 32 + lane < int(length)) loaded[e] = in[e * 32 + lane];
        R keys[kItems];
#pragma unroll
        for (int e = 0; e < kItems; ++e)
            keys[e] = e * 32 + lane < int(length) ? select_key<K>(args, loaded[e]) : ~R(0);

        R prefix = 0, mask = 0;
        uint32_t remaining = wanted;
        for (int shift = kKeyBits - 8; shift >= 0; shift -= 8) {
#pragma unroll
            for (int b = 0; b < kBins * kReplicas / 32; ++b) bins[b * 32 + lane] = 0;
            __syncwarp();
#pragma unroll
            for (int e = 0; e < kItems; ++e)
                if (e * 32 + lane < int(length) && (keys[e] & mask) == prefix)
                    atomicAdd(&bins[uint32_t((keys[e] >> shift) & 0xFF) * kReplicas + replica], 1u);
            __syncwarp();
            uint32_t counts[8], mine = 0;
#pragma unroll
            for (int b = 0; b < 8; ++b) {
                counts[b] = 0;
#pragma unroll
                for (int r = 0; r < kReplicas; ++r) counts[b] += bins[(lane * 8 + b) * kReplicas + r];
                mine += counts[b];
            }
            uint32_t below = warp_exclusive_sum(mine);
            uint32_t found = 0, found_below = 0, found_count = 0;
#pragma unroll
            for (int b = 0; b < 8; ++b) {
                if (below < remaining && remaining <= below + counts[b]) {
                    found = lane * 8 + b;
                    found_below = below;
                    found_count = counts[b];
                }
                below += counts[b];
            }
            // One lane's bins hold rank `remaining` (found_count >= 1 there).
            const int holder = __ffs(__ballot_sync(0xffffffffu, found_count != 0)) - 1;
            found = __shfl_sync(0xffffffffu, found, holder);
            found_below = __shfl_sync(0xffffffffu, found_below, holder);
            found_count = __shfl_sync(0xffffffffu, found_count, holder);
            prefix |= R(found) << shift;
            mask |= R(0xFF) << shift;
            remaining -= found_below;
            __syncwarp();  // the bins are cleared next
            if (found_count == remaining) break;
        }

        // The chosen, in position order: below the prefix, or equal to it
        // and among the first `remaining` equal ones.
        uint32_t ties_before = 0, chosen = 0;
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            const bool valid = e * 32 + lane < int(length);
            const R masked = keys[e] & mask;
            const bool tie = valid && masked == prefix;
            const uint32_t tie_ballot = __ballot_sync(0xffffffffu, tie);
            const uint32_t tie_rank = ties_before + __popc(tie_ballot & lower_lanes);
            ties_before += __popc(tie_ballot);
            const bool take = valid && (masked < prefix || (tie && tie_rank < remaining));
            const uint32_t take_ballot = __ballot_sync(0xffffffffu, take);
            if (take) {
                const uint32_t slot = chosen + __popc(take_ballot & lower_lanes);
                chosen_keys[slot] = keys[e];
                chosen_positions[slot] = uint16_t(e * 32 + lane);
            }
            chosen += __popc(take_ballot);
        }
        __syncwarp();
        // Each chosen pair's rank among the chosen (key, then position).
        for (uint32_t i = lane; i < wanted; i += 32) {
            const R key = chosen_keys[i];
            const uint32_t position = chosen_positions[i];
            uint32_t rank = 0;
            for (uint32_t j = 0; j < wanted; ++j) {
                const R other = chosen_keys[j];
                rank += other < key || (other == key && chosen_positions[j] < position);
            }
            write_result<K>(args, s, rank, key, position);
        }
        __syncwarp();  // the chosen arrays are the next segment's
    }
}

}  // namespace gpuprim::cuda::selection
