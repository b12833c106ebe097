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

// 8-byte values: {flag, value} in one aligned 16-byte word. Like CUB's tile
// state, this relies on aligned 16-byte accesses being single-copy atomic on
// the GPUs we run on (sm_70 and later).
template <typename T>
struct TileStatus<T, 8> {
    static constexpr uint64_t kSlotBytes = 16;
    unsigned long long *slots;  // two words per slot: flag, value

    __device__ __forceinline__ void store(uint64_t tile, uint32_t flag, T value) const {
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(slots + 2 * tile),
                     "l"(static_cast<unsigned long long>(flag)),
                     "l"(bit_cast<unsigned long long>(value))
                     : "memory");
    }
    __device__ __forceinline__ void load(uint64_t tile, uint32_t &flag, T &value) const {
        unsigned long long f, v;
        asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(f), "=l"(v)
                     : "l"(slots + 2 * tile)
                     : "memory");
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
