// SPDX-License-Identifier: Apache-2.0
// Block-wide stable ranking of one radix digit per item (the core of a
// Onesweep tile and of any shared-memory radix step).
//
// Items are in the warp-striped arrangement: item i of lane l in warp w is
// tile position w * 32 * kItems + i * 32 + l, so ranking the items of a warp
// in (i, lane) order and the warps in order keeps equal digits in tile order.
//
// 1. Each warp ranks its items among themselves: each lane ORs its bit into
//    a shared mask of its digit (AtomicOr) to find the lanes sharing it, the
//    highest of them adds the group size to the warp's private counter of
//    that digit (one shared atomic per group), and every lane's rank is the
//    old count plus its peers below it. (AtomicOrPacked instead lets every
//    peer read the count and the lowest peer write it back: no leader
//    election, no shuffle.)
// 2. Threads 0..255 (one per digit) turn the per-warp counts into per-warp
//    offsets (running sum over warps) and learn the tile's count of their
//    digit; the caller gets it then (Onesweep publishes it for look-back).
// 3. An exclusive scan over the 256 digit counts gives each digit's first
//    position in the tile; it is folded into the per-warp offsets, and each
//    item adds its warp's offset to its rank.
#pragma once

#include <cstdint>
#include <type_traits>

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

// How a warp finds the lanes that share a digit (a shape's kMatch). The
// numbers are those the tuning notes use.
enum class RadixMatch : int {
    AtomicOr = 2,  // each lane ORs its bit into a shared mask of its digit
    // AtomicOr with the mask next to the warp's count of the digit: one
    // 8-byte read gives both, and the lowest peer updates both with one store
    // (one shared-memory round trip per item instead of about three).
    AtomicOrPacked = 3,
};

constexpr int kRadixRankDigitBits = 8;
constexpr int kRadixRankDigits = 1 << kRadixRankDigitBits;

// kEarlyCounts: count the digits first (one shared atomic per item, none
// waiting on another), so the tile's counts are known, and handed to
// on_counts, before the items are ranked; the ranking then starts from each
// warp's final offsets. Onesweep publishes the counts that much earlier, and
// its look-back waits less for them.
template <int kThreads, int kItems, RadixMatch kMatch, bool kEarlyCounts = false>
struct BlockRadixRank {
    static_assert(kMatch == RadixMatch::AtomicOr || kMatch == RadixMatch::AtomicOrPacked, "a known match");
    static_assert(kThreads % 32 == 0, "whole warps");
    static_assert(kThreads >= kRadixRankDigits, "one thread per digit");
    static constexpr int kWarps = kThreads / 32;
    static constexpr int kDigitWarps = kRadixRankDigits / 32;

    static constexpr bool kMasks = kMatch == RadixMatch::AtomicOr;
    static constexpr bool kPacked = kMatch == RadixMatch::AtomicOrPacked;
    // Packed: word 2d is the match mask of digit d, word 2d + 1 its count.
    static constexpr int kCountStride = kPacked ? 2 : 1;
    static constexpr int kCountSlot = kPacked ? 1 : 0;

    struct Storage {
        alignas(8) uint32_t warp_counts[kWarps][kRadixRankDigits * kCountStride];
        uint32_t digit_warp_totals[kDigitWarps];
        uint32_t match_masks[kMasks ? kWarps : 1][kMasks ? kRadixRankDigits : 1];
    };

    // digit_of(i): the digit (< 256) of item i (recomputed where needed rather
    // than held in registers). On return ranks[i] is the item's
    // position in the tile ordered by digit, stably; threads < 256 get the
    // tile count of digit threadIdx.x and the count of smaller digits.
    // on_counts(count) runs in threads < 256 as soon as the counts are known.
    // Starts and ends with every thread of the block present; storage may be
    // reused after a __syncthreads().
    // With kEarlyCounts, a place(i, rank) functor instead of nullptr receives
    // each final rank as soon as it is known (ranks[] is then left unset):
    // the caller can store the item at once instead of holding every rank.
    // skewed (the same in every thread of the block; AtomicOr ranking only):
    // the digits are known to repeat a lot (one digit holding most items, or
    // few distinct ones), so lanes find their peers with match.any and every
    // shared atomic is one per group of equal digits. The AtomicOr match and
    // the early counts send every lane of a group to the same shared word,
    // which serializes: an H100 sorted u32 keys ANDed from 4 random words
    // 1.36x slower than uniform ones that way. match.any costs more the more
    // distinct digits a warp holds (3x the AtomicOr ranking on uniform
    // digits), so the caller decides per pass (Onesweep: from its histogram).
    // valid(i) (instead of nullptr; AtomicOr ranking without early counts,
    // not skewed): whether item i takes part. The others are neither counted
    // nor ranked (their ranks[i] are left meaningless), as if absent: a
    // block sorting fewer items than its tile leaves its padding out.
    template <bool kOneDigitTiles = false, typename DigitOf, typename OnCounts, typename Place = std::nullptr_t,
              typename Valid = std::nullptr_t>
    __device__ __forceinline__ static void rank(Storage &s, DigitOf &&digit_of,
                                                uint32_t (&ranks)[kItems], uint32_t &digit_count,
                                                uint32_t &digit_exclusive, OnCounts &&on_counts,
                                                Place &&place = nullptr, bool skewed = false,
                                                Valid &&valid = nullptr) {
        constexpr bool kPlace = !std::is_same_v<std::decay_t<Place>, std::nullptr_t>;
        constexpr bool kAllValid = std::is_same_v<std::decay_t<Valid>, std::nullptr_t>;
        static_assert(!kPlace || kEarlyCounts, "ranks are final only with early counts");
        static_assert(kAllValid || (kMasks && !kEarlyCounts), "valid(i): AtomicOr ranking without early counts");
        auto deliver = [&](int i, uint32_t rank) {
            if constexpr (kPlace) place(i, rank);
            else ranks[i] = rank;
        };
        const uint32_t warp = threadIdx.x / 32;
        const uint32_t lane = radix_lane_id();
        uint32_t *counts = s.warp_counts[warp];
#pragma unroll
        for (int d = 0; d < kRadixRankDigits * kCountStride / 32; ++d) {
            counts[d * 32 + lane] = 0;
            if constexpr (kMasks) s.match_masks[warp][d * 32 + lane] = 0;
        }
        __syncwarp();

        const bool match_any_peers = kMasks && skewed;
        if constexpr (kEarlyCounts) {
            count_digits(counts, digit_of, match_any_peers);
        } else if constexpr (!kAllValid) {
            rank_in_warp<false>(s, counts, warp, lane, digit_of, deliver, valid);
        } else {
            if (match_any_peers) rank_in_warp<true>(s, counts, warp, lane, digit_of, deliver);
            else rank_in_warp<false>(s, counts, warp, lane, digit_of, deliver);
        }
        __syncthreads();
        offsets_from_counts(s, warp, lane, on_counts, digit_count, digit_exclusive);
        if constexpr (kEarlyCounts) {
            if (match_any_peers) {
                // kOneDigitTiles: skewed digits often fill a whole tile with
                // one digit (the high bytes of Zipf keys); every rank is then
                // its tile position, and no lanes need matching (CUB's short
                // circuit). The check costs a barrier, so only skewed passes
                // make it.
                const uint32_t tile_items = uint32_t(kThreads * kItems);
                if (kOneDigitTiles &&
                    __syncthreads_or(threadIdx.x < kRadixRankDigits && digit_count == tile_items)) {
#pragma unroll
                    for (int i = 0; i < kItems; ++i) deliver(i, (warp * kItems + i) * 32 + lane);
                } else {
                    rank_in_warp<true>(s, counts, warp, lane, digit_of, deliver);
                }
            } else {
                rank_in_warp<false>(s, counts, warp, lane, digit_of, deliver);
            }
        } else {
#pragma unroll
            for (int i = 0; i < kItems; ++i) ranks[i] += counts[digit_of(i) * kCountStride + kCountSlot];
        }
    }

    // Ranks each item among the warp's items of its digit, counting on from
    // counts[digit] (zero, or with kEarlyCounts the warp's final offset), and
    // hands deliver(i, rank) each item's rank.
    // valid (AtomicOr only): as rank()'s; the lanes of absent items only keep
    // the warp's steps, and a warp with none present skips the item.
    template <bool kMatchAnyPeers, typename DigitOf, typename Deliver, typename Valid = std::nullptr_t>
    __device__ __forceinline__ static void rank_in_warp(Storage &s, uint32_t *counts, uint32_t warp, uint32_t lane,
                                                        DigitOf &digit_of, Deliver &deliver,
                                                        const Valid &valid = nullptr) {
        constexpr bool kAllValid = std::is_same_v<Valid, std::nullptr_t>;
        static_assert(kAllValid || (kMasks && !kMatchAnyPeers), "valid(i): AtomicOr ranking only");
        const uint32_t lanes_below = radix_lanemask_lt();
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            bool present = true;
            if constexpr (!kAllValid) {
                present = valid(i);
                if (!__any_sync(kFullWarpMask, present)) continue;  // a warp of padding: nothing to rank
            }
            const uint32_t digit = present ? digit_of(i) : 0u;
            if constexpr (kMatchAnyPeers) {  // the lowest peer writes the new count
                const uint32_t peers = __match_any_sync(kFullWarpMask, digit);
                uint32_t *count = &counts[digit * kCountStride + kCountSlot];
                const uint32_t before = *count;
                const uint32_t below = __popc(peers & lanes_below);
                deliver(i, before + below);
                __syncwarp();  // every peer has read the count
                if (below == 0) *count = before + __popc(peers);
                __syncwarp();
            } else if constexpr (kPacked) {
                // No leader election or shuffle: every peer reads the mask and
                // the count before the item, the lowest peer writes both.
                uint32_t *pair = &counts[2 * digit];
                atomicOr(pair, 1u << lane);
                __syncwarp();
                const uint2 state = *reinterpret_cast<const uint2 *>(pair);
                const uint32_t below = __popc(state.x & lanes_below);
                deliver(i, state.y + below);
                __syncwarp();  // every peer has read the pair
                if (below == 0) *reinterpret_cast<uint2 *>(pair) = make_uint2(0u, state.y + __popc(state.x));
                __syncwarp();
            } else {
                uint32_t *mask = &s.match_masks[warp][digit];
                if (present) atomicOr(mask, 1u << lane);
                __syncwarp();
                const uint32_t peers = present ? *mask : 0u;
                const uint32_t leader = present ? 31 - __clz(peers) : 0u;
                uint32_t before = 0;
                if (present && lane == leader) before = atomicAdd(&counts[digit], __popc(peers));
                before = __shfl_sync(kFullWarpMask, before, leader);
                deliver(i, before + __popc(peers & lanes_below));
                // Every lane has read its mask (the shuffle waited for all):
                // clear it for the next item.
                if (present && lane == leader) s.match_masks[warp][digit] = 0;
                __syncwarp();
            }
        }
    }

    // kEarlyCounts: the warp's count of each digit, before any rank.
    template <typename DigitOf>
    __device__ __forceinline__ static void count_digits(uint32_t *counts, DigitOf &digit_of, bool match_any_peers) {
        if (match_any_peers) {  // one add per group of equal digits
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t digit = digit_of(i);
                const uint32_t peers = __match_any_sync(kFullWarpMask, digit);
                if ((peers & radix_lanemask_lt()) == 0)
                    atomicAdd(&counts[digit * kCountStride + kCountSlot], __popc(peers));
            }
        } else {
#pragma unroll
            for (int i = 0; i < kItems; ++i) atomicAdd(&counts[digit_of(i) * kCountStride + kCountSlot], 1u);
        }
    }

    // Steps 2 and 3 above: the per-warp counts become per-warp offsets of
    // each digit in the tile; threads < 256 learn their digit's tile count
    // (handed to on_counts at once) and the count of smaller digits.
    template <typename OnCounts>
    __device__ __forceinline__ static void offsets_from_counts(Storage &s, uint32_t warp, uint32_t lane,
                                                               OnCounts &on_counts, uint32_t &digit_count,
                                                               uint32_t &digit_exclusive) {
        uint32_t count = 0, inclusive = 0;
        if (threadIdx.x < kRadixRankDigits) {
            const uint32_t digit = threadIdx.x;
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
                const uint32_t c = s.warp_counts[w][digit * kCountStride + kCountSlot];
                s.warp_counts[w][digit * kCountStride + kCountSlot] = count;
                count += c;
            }
            on_counts(count);
            inclusive = count;
#pragma unroll
            for (int offset = 1; offset < 32; offset <<= 1) {
                const uint32_t other = __shfl_up_sync(kFullWarpMask, inclusive, offset);
                if (lane >= uint32_t(offset)) inclusive += other;
            }
            if (lane == 31) s.digit_warp_totals[warp] = inclusive;
        }
        __syncthreads();

        if (threadIdx.x < kRadixRankDigits) {
            const uint32_t digit = threadIdx.x;
            uint32_t exclusive = inclusive - count;
#pragma unroll
            for (int w = 0; w < kDigitWarps; ++w)
                if (uint32_t(w) < warp) exclusive += s.digit_warp_totals[w];
#pragma unroll
            for (int w = 0; w < kWarps; ++w) s.warp_counts[w][digit * kCountStride + kCountSlot] += exclusive;
            digit_count = count;
            digit_exclusive = exclusive;
        }
        __syncthreads();
    }
};

}  // namespace gpuprim::cuda
