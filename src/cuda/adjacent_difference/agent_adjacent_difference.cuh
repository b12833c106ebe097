// SPDX-License-Identifier: Apache-2.0
// The adjacent-difference kernels and their agent's named steps
// (adjacent_difference.cu has the design and launches them).
//
// A warp takes a chunk of 32 * kItems consecutive elements, read warp-striped
// (item j of lane l is element base + 32 * j + l, so each load instruction
// reads 32 consecutive elements). The element before lane l's item j is lane
// l - 1's item j, and before lane 0's item j it is lane 31's item j - 1: both
// from registers by a shuffle. Only the element before the chunk comes from
// memory: the input itself out of place, or, in place, the copy that
// save_chunk_befores_kernel made before any chunk was written over.
#pragma once

#include "core/ops.h"
#include "cuda/adjacent_difference/adjacent_difference_policy.cuh"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim::cuda {
namespace difference_detail {

constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// A 1-, 2-, 4- or 8-byte element as the word a shuffle moves (bits only).
template <typename T>
using ShuffleWord = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;

template <typename T>
__device__ __forceinline__ ShuffleWord<T> word_of(T value) {
    bits_t<T> bits;
    memcpy(&bits, &value, sizeof bits);
    return static_cast<ShuffleWord<T>>(bits);
}

template <typename T>
__device__ __forceinline__ T element_of(ShuffleWord<T> word) {
    const bits_t<T> bits = static_cast<bits_t<T>>(word);
    T value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

template <typename T>
struct DifferenceAgent {
    static constexpr int kItems = kDifferenceItemsFor<T>;
    static constexpr uint64_t kChunk = 32 * uint64_t(kItems);

    const T *input;
    T *output;
    uint64_t count;
    // In place: element c of it is the element before chunk c + 1 (nullptr
    // out of place: read from input).
    const T *saved_befores;
    unsigned lane;

    // One input element: out of place through the read-only path (ld.global.nc,
    // as CUB's LOAD_LDG), in place as a plain load (the kernel writes it).
    __device__ __forceinline__ T load(uint64_t index) const {
        return saved_befores ? input[index] : bit_cast<T>(__ldg(reinterpret_cast<const bits_t<T> *>(input + index)));
    }

    // Step 1: the chunk's elements, warp-striped; past count, zeros (never
    // stored). kWhole: the chunk ends at or before count (no check an item).
    template <bool kWhole>
    __device__ __forceinline__ void load_chunk(uint64_t base, T (&items)[kItems]) const {
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            const uint64_t index = base + 32 * uint64_t(j) + lane;
            items[j] = kWhole || index < count ? load(index) : T{};
        }
    }

    // Step 2: the element before the chunk, for lane 0 (chunk 0 has none).
    __device__ __forceinline__ T element_before_chunk(uint64_t chunk, uint64_t base) const {
        if (chunk == 0 || lane != 0) return T{};
        return saved_befores ? saved_befores[chunk - 1] : load(base - 1);
    }

    // Step 3: each item minus the element before it, from the neighbours'
    // registers; position 0 keeps its element.
    __device__ __forceinline__ void differences(uint64_t base, T before_chunk, T (&items)[kItems]) const {
        const DifferenceOp<T> op;
        T last_of_previous_row = before_chunk;  // lane 0's "before" for row j
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            const T left = element_of<T>(__shfl_up_sync(kFullWarp, word_of(items[j]), 1));
            const T row_last = element_of<T>(__shfl_sync(kFullWarp, word_of(items[j]), 31));
            const T previous = lane == 0 ? last_of_previous_row : left;
            if (base + 32 * uint64_t(j) + lane != 0) items[j] = op(items[j], previous);
            last_of_previous_row = row_last;
        }
    }

    // Step 4: the chunk's results, warp-striped, up to count.
    template <bool kWhole>
    __device__ __forceinline__ void store_chunk(uint64_t base, const T (&items)[kItems]) const {
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            const uint64_t index = base + 32 * uint64_t(j) + lane;
            if (kWhole || index < count) output[index] = items[j];
        }
    }

    // One chunk. In place, each element is read and written by the same
    // lane, in that order, and its neighbour comes from a register, so no
    // lane reads what another has written; only the element before the
    // chunk is read from another warp's share, hence the saved copies.
    // Every chunk but the last is whole: its loads and stores go unchecked
    // (the branch is the same for the whole warp).
    __device__ __forceinline__ void run_chunk(uint64_t chunk) const {
        const uint64_t base = chunk * kChunk;
        T items[kItems];
        const bool whole = base + kChunk <= count;
        if (whole) load_chunk<true>(base, items);
        else load_chunk<false>(base, items);
        const T before = element_before_chunk(chunk, base);
        differences(base, before, items);
        if (whole) store_chunk<true>(base, items);
        else store_chunk<false>(base, items);
    }
};

// Chunks go to warps round robin; the loop's bounds are the same for every
// lane of a warp, so the shuffles always have the whole warp.
template <typename T>
__global__ void __launch_bounds__(kDifferenceBlockThreads)
    adjacent_difference_kernel(const T *input, T *output, uint64_t count, const T *saved_befores) {
    using Agent = DifferenceAgent<T>;
    const Agent agent{input, output, count, saved_befores, threadIdx.x % 32u};
    const uint64_t chunks = ceil_div(count, Agent::kChunk);
    const uint64_t warps_per_block = kDifferenceBlockThreads / 32;
    const uint64_t warps = uint64_t(gridDim.x) * warps_per_block;
    for (uint64_t chunk = blockIdx.x * warps_per_block + threadIdx.x / 32; chunk < chunks; chunk += warps)
        agent.run_chunk(chunk);
}

// In place, before the kernel above: saved_befores[c - 1] = the element
// before chunk c, for 0 < c < chunks.
template <typename T>
__global__ void __launch_bounds__(kDifferenceBlockThreads)
    save_chunk_befores_kernel(const T *input, uint64_t chunks, T *saved_befores) {
    constexpr uint64_t kChunk = DifferenceAgent<T>::kChunk;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t c = 1 + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride)
        saved_befores[c - 1] = input[c * kChunk - 1];
}

}  // namespace difference_detail
}  // namespace gpuprim::cuda
