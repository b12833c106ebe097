// SPDX-License-Identifier: Apache-2.0
// What a tile of select keeps (agent_select.cuh), one rule a kernel:
// - CompareRule<T>: the keys compared with the scalars by value
//   (core/keep_rule.h, the comparisons both backends share), the kind
//   switched once per tile, not per key;
// - FlagRule<Bits>: flags[i] != 0, the flags' width switched once per tile;
// - RunRule<Bits>: the first key of each run of equal bits (non_trivial:
//   of each run of 2 or more), and which keys end such a run (the tails,
//   whose positions give the runs' lengths).
// A rule sees the keys of one thread: key k at position
// spot.first + spot.local(k) of the input, valid where spot.local(k) <
// spot.valid (a partial last tile); it sets keep[k] (and tail[k]) false
// past the input.
#pragma once

#include "core/element_traits.h"
#include "core/keep_rule.h"
#include "core/ops.h"

#include <cstdint>

namespace gpuprim::cuda {
namespace select_detail {

constexpr unsigned kFullWarp = 0xffffffffu;

// Where a thread's keys lie in its tile: a warp reads 32 consecutive keys a
// round, kItems rounds over its own kItems * 32 keys.
struct TileSpot {
    uint64_t first;   // the tile's first position in the input
    uint32_t valid;   // keys of the tile inside the input
    uint32_t base;    // warp * kItems * 32 + lane
    __device__ __forceinline__ uint32_t local(int k) const { return base + uint32_t(k) * 32; }
};

// A key's bits from another lane of the warp (every lane calls).
template <typename Bits>
__device__ __forceinline__ Bits shuffle_bits(Bits x, int source) {
    if constexpr (sizeof(Bits) == 8)
        return Bits(__shfl_sync(kFullWarp, static_cast<unsigned long long>(x), source));
    else return Bits(__shfl_sync(kFullWarp, static_cast<uint32_t>(x), source));
}
template <typename T>
struct CompareRule {
    using Bits = bits_t<T>;
    static constexpr bool kRuns = false;
    static constexpr bool kNeedsKeys = true;  // to compare, even when no keys go out
    KeepTest<T> test;

    template <gpuprim_keep_t kKind, int kItems>
    __device__ __forceinline__ void compare_all(const TileSpot &spot, const Bits (&keys)[kItems],
                                                bool (&keep)[kItems]) const {
#pragma unroll
        for (int k = 0; k < kItems; ++k)
            keep[k] = spot.local(k) < spot.valid &&
                      compare_keeps<kKind>(keep_value(bit_cast<T>(keys[k])), test.scalar, test.scalar_high);
    }

    template <typename Params, int kItems>
    __device__ __forceinline__ void flag(const Params &, const TileSpot &spot, const Bits (&keys)[kItems],
                                         bool (&keep)[kItems], bool (&)[kItems]) const {
        switch (test.kind) {
        case GPUPRIM_KEEP_LESS: return compare_all<GPUPRIM_KEEP_LESS>(spot, keys, keep);
        case GPUPRIM_KEEP_LESS_EQUAL: return compare_all<GPUPRIM_KEEP_LESS_EQUAL>(spot, keys, keep);
        case GPUPRIM_KEEP_GREATER: return compare_all<GPUPRIM_KEEP_GREATER>(spot, keys, keep);
        case GPUPRIM_KEEP_GREATER_EQUAL: return compare_all<GPUPRIM_KEEP_GREATER_EQUAL>(spot, keys, keep);
        case GPUPRIM_KEEP_EQUAL: return compare_all<GPUPRIM_KEEP_EQUAL>(spot, keys, keep);
        case GPUPRIM_KEEP_NOT_EQUAL: return compare_all<GPUPRIM_KEEP_NOT_EQUAL>(spot, keys, keep);
        case GPUPRIM_KEEP_IN_RANGE: return compare_all<GPUPRIM_KEEP_IN_RANGE>(spot, keys, keep);
        case GPUPRIM_KEEP_NAN: return compare_all<GPUPRIM_KEEP_NAN>(spot, keys, keep);
        case GPUPRIM_KEEP_NOT_NAN: return compare_all<GPUPRIM_KEEP_NOT_NAN>(spot, keys, keep);
        default:  // FLAGGED goes through FlagRule (select.cu)
#pragma unroll
            for (int k = 0; k < kItems; ++k) keep[k] = false;
        }
    }
};

template <typename KeyBits>
struct FlagRule {
    using Bits = KeyBits;
    static constexpr bool kRuns = false;
    static constexpr bool kNeedsKeys = false;  // loaded only when keys go out

    template <typename Flag, int kItems>
    __device__ __forceinline__ static void read_flags(const void *flags, const TileSpot &spot, bool (&keep)[kItems]) {
        const Flag *tile_flags = static_cast<const Flag *>(flags) + spot.first;
        Flag loaded[kItems];
#pragma unroll
        for (int k = 0; k < kItems; ++k) loaded[k] = spot.local(k) < spot.valid ? tile_flags[spot.local(k)] : Flag(0);
#pragma unroll
        for (int k = 0; k < kItems; ++k) keep[k] = loaded[k] != 0;
    }

    template <typename Params, int kItems>
    __device__ __forceinline__ void flag(const Params &p, const TileSpot &spot, const Bits (&)[kItems],
                                         bool (&keep)[kItems], bool (&)[kItems]) const {
        switch (p.flag_bytes) {
        case 1: return read_flags<uint8_t>(p.flags, spot, keep);
        case 2: return read_flags<uint16_t>(p.flags, spot, keep);
        case 4: return read_flags<uint32_t>(p.flags, spot, keep);
        default: return read_flags<uint64_t>(p.flags, spot, keep);
        }
    }
};

// A run starts at i where i == 0 or key[i - 1] != key[i] (bits) and ends at
// i where i == count - 1 or key[i + 1] != key[i]. So one flag a key says
// both: "differs", the key differs from the one before it (or is the first,
// or lies past the input). A key heads a run when it differs and ends one
// when the key after it differs: round k's ballot of the flags, shifted by
// one lane, gives the tails (lane 31 takes lane 0 of the next round, and the
// warp's last key the key after the warp). The key before each comes from
// one rotating shuffle a round (lane 0 takes lane 31's key of the round
// before); the keys just outside the warp come from global memory, read
// before any key is used so that they load beside the keys.
template <typename KeyBits>
struct RunRule {
    using Bits = KeyBits;
    static constexpr bool kRuns = true;
    static constexpr bool kNeedsKeys = true;

    template <typename Params, int kItems>
    __device__ __forceinline__ void flag(const Params &p, const TileSpot &spot, const Bits (&keys)[kItems],
                                         bool (&keep)[kItems], bool (&tail)[kItems]) const {
        const Bits *input = static_cast<const Bits *>(p.keys);
        const int lane = int(spot.base % 32);
        const uint32_t warp_first = spot.base - uint32_t(lane);  // the warp's first key in the tile
        const uint32_t warp_last = warp_first + uint32_t(kItems) * 32 - 1;
        const uint64_t first_position = spot.first + warp_first;
        Bits before_warp{}, after_warp{};
        if (lane == 0 && first_position > 0 && warp_first < spot.valid) before_warp = input[first_position - 1];
        const bool warp_last_valid = warp_last < spot.valid;
        const bool has_after = warp_last_valid && spot.first + warp_last + 1 < p.count;
        if (lane == 31 && has_after) after_warp = input[spot.first + warp_last + 1];

        bool differs[kItems];
        uint32_t differs_mask[kItems];
        Bits rotated_before = before_warp;  // lane 0: the key before its key of round k
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const Bits rotated = shuffle_bits(keys[k], (lane + 31) % 32);  // lane 0 gets lane 31's
            const Bits previous = lane > 0 ? rotated : rotated_before;
            rotated_before = rotated;
            const bool valid = spot.local(k) < spot.valid;
            const bool input_start = k == 0 && lane == 0 && first_position == 0;
            differs[k] = !valid || input_start || previous != keys[k];
            differs_mask[k] = __ballot_sync(kFullWarp, differs[k]);
        }
        // The warp's last key (lane 31, round kItems - 1) against the key after the warp.
        const bool after_differs = !has_after || after_warp != keys[kItems - 1];
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            bool next_differs;
            if (lane < 31) next_differs = (differs_mask[k] >> (lane + 1)) & 1u;
            else if (k + 1 < kItems) next_differs = differs_mask[k + 1] & 1u;
            else next_differs = after_differs;
            const bool valid = spot.local(k) < spot.valid;
            const bool head = valid && differs[k];
            const bool ends = valid && next_differs;
            keep[k] = p.non_trivial ? head && !next_differs : head;
            tail[k] = p.non_trivial ? ends && !differs[k] : ends;
        }
    }
};

}  // namespace select_detail
}  // namespace gpuprim::cuda
