// SPDX-License-Identifier: Apache-2.0
// The decoupled look-back of select / partition / runs (select/agent_select.cuh)
// and reduce-by-key (reduce_by_key/agent_reduce_by_key.cuh), in engine/ as both share it:
// each tile publishes what it kept, then finds what every earlier tile kept
// together by reading the status words of the tiles before it, a warp-wide
// window (32 tiles) per poll.
//
// What a tile publishes is a SelectPrefix: the number of elements kept
// (64 bits: counts past 2^32 are fine) and, for the runs, the position of the
// last element kept (the start of the last run, which a later tile needs to
// know the length of a run that began before it). Both travel with the flag
// in one 16-byte status word, written and read in single accesses (like the
// scan's 8-byte TileStatus, util/tile_status.cuh: aligned 16-byte accesses
// are single-copy atomic on sm_70 and later), so a reader never sees a flag
// without its values.
//
// The slots are zeroed (kTileInvalid) by the driver before the launch: a
// memset of 16 bytes per tile, where the scan clears ahead inside its kernel
// (its watermark scheme); only inputs of more than one tile have slots.
//
// Counts add exactly in any order, so the look-back takes the newest
// inclusive prefix it finds and adds the aggregates after it, and a window
// of aggregates only is folded at once, not kept: no saved windows.
#pragma once

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
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(slots + 2 * tile), "l"(head),
                     "l"(static_cast<unsigned long long>(value.count))
                     : "memory");
    }
    __device__ __forceinline__ void load(uint64_t tile, uint32_t &flag, SelectPrefix &value) const {
        unsigned long long head, count;
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(head), "=l"(count)
                     : "l"(slots + 2 * tile)
                     : "memory");
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

// What tiles 0..tile-1 kept together (tile > 0), by one whole warp, once
// this tile's aggregate is published. Older tiles never wait on newer ones,
// and tickets are taken in launch order, so the polls end.
__device__ __forceinline__ SelectPrefix look_back(const SelectTileStatus &status, uint32_t tile, int lane,
                                                  uint32_t poll_ns) {
    SelectPrefix newer{0, 0};  // the aggregates between the window and this tile
    int64_t window_end = tile;  // the window is tiles [window_end - 32, window_end)
    for (;;) {
        const int64_t index = window_end - 32 + lane;
        uint32_t flag = kTileInclusive;  // tiles before 0: an empty inclusive prefix
        SelectPrefix value{0, 0};
        if (index >= 0) status.load(static_cast<uint64_t>(index), flag, value);
        const unsigned invalid = __ballot_sync(0xffffffffu, flag == kTileInvalid);
        const unsigned inclusive = __ballot_sync(0xffffffffu, flag == kTileInclusive);
        const int newest_inclusive = inclusive ? 31 - __clz(inclusive) : -1;
        const int newest_invalid = invalid ? 31 - __clz(invalid) : -1;
        if (newest_inclusive > newest_invalid)
            return combine(combine_lanes_from(value, newest_inclusive, lane), newer);
        if (invalid == 0) {  // aggregates only, all final: fold them and read further back
            newer = combine(combine_lanes_from(value, 0, lane), newer);
            window_end -= 32;
            continue;
        }
        if (poll_ns) __nanosleep(poll_ns);  // a tile after the newest inclusive prefix is not out yet
    }
}

}  // namespace gpuprim::cuda
