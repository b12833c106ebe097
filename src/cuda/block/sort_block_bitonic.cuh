// Block-wide bitonic sort of blockDim.x * kItems items held in registers
// (small inputs: one block, no global memory traffic between steps).
//
// Network position i lives in thread i / kItems, slot i % kItems (blocked),
// so the compare-exchange partner i ^ j is in the same thread when j < kItems
// (register step: no data movement), in the same warp when j < 32 * kItems
// (shuffle step) and elsewhere in the block otherwise (one shared-memory
// round trip; two alternating buffers need one barrier per step). Few
// threads with several items each keep most steps in registers and shuffles.
// Items must be totally ordered: the caller makes equal keys distinct with
// their input index (stable), or sorts bare keys when equal keys are equal
// bit patterns and nothing travels with them (then order among them cannot
// be seen).
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

// A radix key and its input position; orders by key, then position.
template <typename K>
struct SortKeyIndex {
    K key;
    uint32_t index;
};

// 32-bit keys: key and index packed in one 64-bit word, one compare.
template <>
struct SortKeyIndex<uint32_t> {
    uint64_t packed;
};

__device__ __forceinline__ SortKeyIndex<uint32_t> sort_make_item(uint32_t key, uint32_t index) {
    return {(uint64_t(key) << 32) | index};
}
__device__ __forceinline__ SortKeyIndex<uint64_t> sort_make_item(uint64_t key, uint32_t index) {
    return {key, index};
}
__device__ __forceinline__ uint32_t sort_item_key(SortKeyIndex<uint32_t> item) {
    return uint32_t(item.packed >> 32);
}
__device__ __forceinline__ uint64_t sort_item_key(SortKeyIndex<uint64_t> item) { return item.key; }
__device__ __forceinline__ uint32_t sort_item_index(SortKeyIndex<uint32_t> item) {
    return uint32_t(item.packed);
}
__device__ __forceinline__ uint32_t sort_item_index(SortKeyIndex<uint64_t> item) { return item.index; }

__device__ __forceinline__ bool sort_item_less(SortKeyIndex<uint32_t> a, SortKeyIndex<uint32_t> b) {
    return a.packed < b.packed;
}
__device__ __forceinline__ bool sort_item_less(SortKeyIndex<uint64_t> a, SortKeyIndex<uint64_t> b) {
    return a.key < b.key || (a.key == b.key && a.index < b.index);
}
__device__ __forceinline__ SortKeyIndex<uint32_t> sort_item_shuffle_xor(SortKeyIndex<uint32_t> item,
                                                                        int mask) {
    return {__shfl_xor_sync(0xffffffffu, item.packed, mask)};
}
__device__ __forceinline__ SortKeyIndex<uint64_t> sort_item_shuffle_xor(SortKeyIndex<uint64_t> item,
                                                                        int mask) {
    return {__shfl_xor_sync(0xffffffffu, item.key, mask),
            __shfl_xor_sync(0xffffffffu, item.index, mask)};
}

// Bare radix keys (keys-only sorts): one compare, one shuffle per 32 bits.
__device__ __forceinline__ bool sort_item_less(uint32_t a, uint32_t b) { return a < b; }
__device__ __forceinline__ bool sort_item_less(uint64_t a, uint64_t b) { return a < b; }
__device__ __forceinline__ uint32_t sort_item_shuffle_xor(uint32_t item, int mask) {
    return __shfl_xor_sync(0xffffffffu, item, mask);
}
__device__ __forceinline__ uint64_t sort_item_shuffle_xor(uint64_t item, int mask) {
    return __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(item), mask);
}

template <typename Item, int kItems>
struct BlockBitonicSort {
    static_assert((kItems & (kItems - 1)) == 0 && kItems >= 2 && kItems <= 16, "power-of-two items");

    // Shared-memory slot of network position i: one pad every 16 items keeps
    // the blocked stores of a warp on distinct banks.
    __device__ __forceinline__ static uint32_t slot(uint32_t i) { return i + (i >> 4); }
    // Items of shared memory one buffer needs for a network of `network` items.
    __host__ __device__ static constexpr uint32_t buffer_items(uint32_t network) {
        return network + network / 16;
    }

    // Keeps the smaller (keep_min) or larger of mine and other.
    __device__ __forceinline__ static Item keep(Item mine, Item other, bool keep_min) {
        return sort_item_less(other, mine) == keep_min ? other : mine;
    }

    template <int kDistance>
    __device__ __forceinline__ static void register_step(Item (&items)[kItems], uint32_t first, uint32_t k) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if ((e & kDistance) == 0) {
                const bool ascending = ((first + e) & k) == 0;
                Item &low = items[e];
                Item &high = items[e | kDistance];
                if (sort_item_less(high, low) == ascending) {
                    const Item swapped = low;
                    low = high;
                    high = swapped;
                }
            }
        }
    }

    // Sorts the blockDim.x * kItems items ascending; thread t holds network
    // positions t * kItems .. t * kItems + kItems - 1. buffers: 2 *
    // buffer_items(network) items of shared memory. Every thread calls it.
    __device__ __forceinline__ static void sort(Item (&items)[kItems], Item *buffers) {
        const uint32_t network = blockDim.x * kItems;
        const uint32_t first = threadIdx.x * kItems;
        uint32_t parity = 0;
        for (uint32_t k = 2; k <= network; k <<= 1) {
            for (uint32_t j = k >> 1; j > 0; j >>= 1) {
                if (j < kItems) {
                    if (j == 1) register_step<1>(items, first, k);
                    if constexpr (kItems > 2) {
                        if (j == 2) register_step<2>(items, first, k);
                    }
                    if constexpr (kItems > 4) {
                        if (j == 4) register_step<4>(items, first, k);
                    }
                    if constexpr (kItems > 8) {
                        if (j == 8) register_step<8>(items, first, k);
                    }
                } else {
                    // kItems <= j < k: bits j and k of position first + e are
                    // those of first for every slot e, so one direction per
                    // thread (computed once, not per item).
                    const bool keep_min = ((first & j) == 0) == ((first & k) == 0);
                    if (j < 32 * kItems) {
                        const int lane_mask = int(j / kItems);
#pragma unroll
                        for (int e = 0; e < kItems; ++e)
                            items[e] = keep(items[e], sort_item_shuffle_xor(items[e], lane_mask), keep_min);
                    } else {
                        Item *buffer = buffers + parity * buffer_items(network);
                        parity ^= 1;
#pragma unroll
                        for (int e = 0; e < kItems; ++e) buffer[slot(first + e)] = items[e];
                        __syncthreads();
#pragma unroll
                        for (int e = 0; e < kItems; ++e)
                            items[e] = keep(items[e], buffer[slot((first + e) ^ j)], keep_min);
                    }
                }
            }
        }
    }
};

}  // namespace gpuprim::cuda
