// SPDX-License-Identifier: Apache-2.0
// What the look-back (engine/tile_lookback.cuh) of select / partition / runs
// (select/agent_select.cuh) and reduce-by-key
// (reduce_by_key/agent_reduce_by_key.cuh) carries, in engine/ as both share
// it.
//
// What a tile publishes is a SelectPrefix: the number of elements kept
// (64 bits: counts past 2^32 are fine) and, for the runs, the position of the
// last element kept (the start of the last run, which a later tile needs to
// know the length of a run that began before it). Both travel with the flag
// in one 16-byte status word, written and read in single accesses
// (store_slot_words / load_slot_words, util/tile_status.cuh, as the scan's
// 8-byte TileStatus), so a reader never sees a flag without its values.
//
// The slots are zeroed (kTileInvalid) by the driver before the launch: a
// memset of 16 bytes per tile, where the scan clears ahead inside its kernel
// (its watermark scheme); only inputs of more than one tile have slots.
//
// Counts add exactly in any order and marks combine associatively, so the
// look-back takes the newest inclusive prefix it finds and combines the
// aggregates after it, folding a window of aggregates only as it passes it.
#pragma once

#include "cuda/engine/tile_lookback.cuh"
#include "cuda/util/tile_status.cuh"

#include <cstdint>

namespace gpuprim::cuda {

// Elements kept by a range of tiles and where the last of them is.
struct SelectPrefix {
    uint64_t count;
    uint64_t mark;  // position of the last kept element + 1; 0: none kept
};

// older then newer, back to back.
__device__ __forceinline__ SelectPrefix combine(const SelectPrefix &older, const SelectPrefix &newer) {
    return {older.count + newer.count, newer.mark != 0 ? newer.mark : older.mark};
}

// One 16-byte word a tile: {(mark << 2) | flag, count}. Marks stay below
// 2^62 (select.cu refuses inputs of 2^61 elements or more).
struct SelectTileStatus {
    static constexpr uint64_t kSlotBytes = 16;
    unsigned long long *slots;

    __device__ __forceinline__ void store(uint64_t tile, uint32_t flag, const SelectPrefix &value) const {
        const unsigned long long head = (static_cast<unsigned long long>(value.mark) << 2) | flag;
        store_slot_words(slots + 2 * tile, head, value.count);
    }
    __device__ __forceinline__ void load(uint64_t tile, uint32_t &flag, SelectPrefix &value) const {
        unsigned long long head, count;
        load_slot_words(slots + 2 * tile, head, count);
        flag = static_cast<uint32_t>(head & 3u);
        value.mark = head >> 2;
        value.count = count;
    }
};

// The prefixes of lanes first_lane..31 of a window combined in tile order.
__device__ __forceinline__ SelectPrefix combine_lanes_from(const SelectPrefix &value, int first_lane, int lane) {
    unsigned long long count = lane >= first_lane ? value.count : 0;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) count += __shfl_xor_sync(0xffffffffu, count, offset);
    const unsigned marked = __ballot_sync(0xffffffffu, lane >= first_lane && value.mark != 0);
    const unsigned long long newest_mark =
        __shfl_sync(0xffffffffu, static_cast<unsigned long long>(value.mark), marked ? 31 - __clz(marked) : 0);
    return {count, marked ? newest_mark : 0};
}

// The look-back's Fold of select and reduce-by-key (engine/tile_lookback.cuh).
struct SelectPrefixFold {
    using Value = SelectPrefix;
    static constexpr bool kLeftFold = false;
    __device__ __forceinline__ static SelectPrefix empty() { return {0, 0}; }
    __device__ __forceinline__ static SelectPrefix combine(const SelectPrefix &older, const SelectPrefix &newer) {
        return cuda::combine(older, newer);
    }
    __device__ __forceinline__ static SelectPrefix fold_lanes_from(const SelectPrefix &value, int first, int lane) {
        return combine_lanes_from(value, first, lane);
    }
};

}  // namespace gpuprim::cuda
