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
template <typename Bits>
__device__ __forceinline__ Bits shuffle_bits_up(Bits x) {
    if constexpr (sizeof(Bits) == 8)
        return Bits(__shfl_up_sync(kFullWarp, static_cast<unsigned long long>(x), 1));
    else return Bits(__shfl_up_sync(kFullWarp, static_cast<uint32_t>(x), 1));
}
template <typename Bits>
__device__ __forceinline__ Bits shuffle_bits_down(Bits x) {
    if constexpr (sizeof(Bits) == 8)
        return Bits(__shfl_down_sync(kFullWarp, static_cast<unsigned long long>(x), 1));
    else return Bits(__shfl_down_sync(kFullWarp, static_cast<uint32_t>(x), 1));
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
// i where i == count - 1 or key[i + 1] != key[i]. The neighbours come from
// the lanes beside (the warp's previous or next round at its ends) and,
// for a warp's first and last key, from global memory (another warp's or
// tile's key).
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
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            // Every lane shuffles; only then do the lanes that need memory read it.
            const Bits up = shuffle_bits_up(keys[k]);
            const Bits from_previous_round = shuffle_bits(keys[k > 0 ? k - 1 : 0], 31);
            const Bits down = shuffle_bits_down(keys[k]);
            const Bits from_next_round = shuffle_bits(keys[k + 1 < kItems ? k + 1 : k], 0);
            const uint64_t i = spot.first + spot.local(k);
            const bool valid = spot.local(k) < spot.valid;
            Bits previous = lane > 0 ? up : from_previous_round;
            if (lane == 0 && k == 0 && valid && i > 0) previous = input[i - 1];
            Bits next = lane < 31 ? down : from_next_round;
            if (lane == 31 && k == kItems - 1 && valid && i + 1 < p.count) next = input[i + 1];
            const bool head = valid && (i == 0 || previous != keys[k]);
            const bool continues = valid && i + 1 < p.count && next == keys[k];
            keep[k] = p.non_trivial ? head && continues : head;
            tail[k] = p.non_trivial ? valid && !continues && !head : valid && !continues;
        }
    }
};

}  // namespace select_detail
}  // namespace gpuprim::cuda
