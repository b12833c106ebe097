// SPDX-License-Identifier: Apache-2.0
// The status word of a tile in a single-pass scan's decoupled look-back
// (engine/tile_lookback.cuh; the flat and the segmented scan): a flag
// (invalid, aggregate, inclusive) and a value in one single-copy-atomic
// access, so a reader never sees a flag without its value.
#pragma once

#include "core/ops.h"

#include <cstdint>

namespace gpuprim::cuda {

enum TileFlag : uint32_t { kTileInvalid = 0, kTileAggregate = 1, kTileInclusive = 2 };

template <typename T, int Bytes = int(sizeof(T))>
struct TileStatus;

// 4-byte values: flag in the high half, value bits in the low half of one
// 64-bit word written and read in single accesses.
template <typename T>
struct TileStatus<T, 4> {
    static constexpr uint64_t kSlotBytes = 8;
    unsigned long long *slots;

    __device__ __forceinline__ void store(uint64_t tile, uint32_t flag, T value) const {
        const unsigned long long word =
            (static_cast<unsigned long long>(flag) << 32) | bit_cast<uint32_t>(value);
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + tile), "l"(word)
                     : "memory");
    }
    __device__ __forceinline__ void load(uint64_t tile, uint32_t &flag, T &value) const {
        unsigned long long word;
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(slots + tile) : "memory");
        flag = static_cast<uint32_t>(word >> 32);
        value = bit_cast<T>(static_cast<uint32_t>(word));
    }
    __device__ __forceinline__ void clear(uint64_t tile) const {
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slots + tile), "l"(0ull) : "memory");
    }
};

// A 16-byte slot (two 64-bit words) written and read in single accesses.
// Like CUB's tile state, this relies on aligned 16-byte accesses being
// single-copy atomic on the GPUs we run on (sm_70 and later), so a reader
// never sees one word without the other.
__device__ __forceinline__ void store_slot_words(unsigned long long *slot, unsigned long long first,
                                                 unsigned long long second) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(first), "l"(second) : "memory");
}
__device__ __forceinline__ void load_slot_words(const unsigned long long *slot, unsigned long long &first,
                                                unsigned long long &second) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(first), "=l"(second) : "l"(slot) : "memory");
}

// 8-byte values: {flag, value} in one 16-byte slot.
template <typename T>
struct TileStatus<T, 8> {
    static constexpr uint64_t kSlotBytes = 16;
    unsigned long long *slots;  // two words per slot: flag, value

    __device__ __forceinline__ void store(uint64_t tile, uint32_t flag, T value) const {
        store_slot_words(slots + 2 * tile, flag, bit_cast<unsigned long long>(value));
    }
    __device__ __forceinline__ void load(uint64_t tile, uint32_t &flag, T &value) const {
        unsigned long long f, v;
        load_slot_words(slots + 2 * tile, f, v);
        flag = static_cast<uint32_t>(f);
        value = bit_cast<T>(v);
    }
    __device__ __forceinline__ void clear(uint64_t tile) const {
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %1};" ::"l"(slots + 2 * tile),
                     "l"(0ull)
                     : "memory");
    }
};

}  // namespace gpuprim::cuda
