// SPDX-License-Identifier: Apache-2.0
// Warp-level building blocks of radix ranking: which lanes of a warp hold the
// same digit ("match"), and the lane masks used to count peers before a lane.
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

constexpr uint32_t kFullWarpMask = 0xffffffffu;

__device__ __forceinline__ uint32_t radix_lane_id() {
    uint32_t lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

__device__ __forceinline__ uint32_t radix_lanemask_lt() {
    uint32_t mask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}

// How a warp finds the lanes that share a digit.
enum class RadixMatch : int {
    Ballot = 0,    // one ballot per digit bit: cheap for 8-bit digits
    MatchAny = 1,  // the match.any instruction
    AtomicOr = 2,  // each lane ORs its bit into a shared mask of its digit
    // AtomicOr with the mask next to the warp's count of the digit: one
    // 8-byte read gives both, and the lowest peer updates both with one store
    // (one shared-memory round trip per item instead of about three).
    AtomicOrPacked = 3,
};

// Mask of the lanes (whole warp active) whose digit equals this lane's.
template <int kDigitBits, RadixMatch kMatch>
__device__ __forceinline__ uint32_t radix_warp_match(uint32_t digit) {
    static_assert(kMatch == RadixMatch::Ballot || kMatch == RadixMatch::MatchAny,
                  "AtomicOr needs shared masks (BlockRadixRank)");
    if constexpr (kMatch == RadixMatch::MatchAny) {
        return __match_any_sync(kFullWarpMask, digit);
    } else {
        uint32_t peers = kFullWarpMask;
#pragma unroll
        for (int bit = 0; bit < kDigitBits; ++bit) {
            const bool set = (digit >> bit) & 1u;
            const uint32_t lanes_set = __ballot_sync(kFullWarpMask, set);
            peers &= set ? lanes_set : ~lanes_set;
        }
        return peers;
    }
}

}  // namespace gpuprim::cuda
