// SPDX-License-Identifier: Apache-2.0
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
#include <type_traits>

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

// The item that carries a radix key through a network: the bare key (Item
// is the key's type: keys only) or the key with its position.
template <typename Item, typename K>
__device__ __forceinline__ Item sort_item_of(K key, uint32_t index) {
    if constexpr (std::is_same_v<Item, K>) return key;
    else return sort_make_item(key, index);
}
template <typename K, typename Item>
__device__ __forceinline__ K sort_item_key_of(Item item) {
    if constexpr (std::is_same_v<Item, K>) return item;
    else return sort_item_key(item);
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

    // Positions a warp holds: merges up to this size stay inside a warp.
    static constexpr uint32_t kWarpItems = 32 * kItems;

    // Step at distance kJ (< kWarpItems) of the merge of size k: partners in
    // the same thread (kJ < kItems: compare-swap in registers) or in the same
    // warp (a shuffle). first (this thread's first position) is a multiple of
    // kItems, so bits kItems and up of a position are first's, and bits below
    // are the slot's: every direction is a compile-time bit test, or one test
    // of first per step.
    template <uint32_t kJ>
    __device__ __forceinline__ static void warp_step(Item (&items)[kItems], uint32_t first, uint32_t k) {
        if constexpr (kJ >= kItems) {
            const bool keep_min = ((first & kJ) == 0) == ((first & k) == 0);
#pragma unroll
            for (int e = 0; e < kItems; ++e)
                items[e] = keep(items[e], sort_item_shuffle_xor(items[e], int(kJ / kItems)), keep_min);
        } else {
#pragma unroll
            for (int e = 0; e < kItems; ++e) {
                if ((e & kJ) == 0) {
                    const bool ascending = k < kItems ? (uint32_t(e) & k) == 0 : (first & k) == 0;
                    Item &low = items[e];
                    Item &high = items[e | kJ];
                    if (sort_item_less(high, low) == ascending) {
                        const Item swapped = low;
                        low = high;
                        high = swapped;
                    }
                }
            }
        }
    }

    // Steps kJ, kJ / 2, ..., 1 of the merge of size k, those below k.
    template <uint32_t kJ>
    __device__ __forceinline__ static void warp_steps(Item (&items)[kItems], uint32_t first, uint32_t k) {
        if (kJ < k) warp_step<kJ>(items, first, k);
        if constexpr (kJ > 1) warp_steps<kJ / 2>(items, first, k);
    }

    // The merges of sizes kK, 2 * kK, ... up to min(limit, kWarpItems): all
    // within a warp, unrolled with constant sizes.
    template <uint32_t kK>
    __device__ __forceinline__ static void warp_merges_up_to(Item (&items)[kItems], uint32_t first, uint32_t limit) {
        if (kK > limit) return;
        warp_steps<kWarpItems / 2>(items, first, kK);
        if constexpr (kK < kWarpItems) warp_merges_up_to<kK * 2>(items, first, limit);
    }

    // Sorts each aligned group of `group` network positions (a power of two,
    // at least kItems, at most blockDim.x * kItems) on its own: the merges
    // stop at the group's size. The last merge's direction alternates from
    // group to group, as in any bitonic network: groups whose first position
    // has bit `group` set come out descending (the caller reads them from the
    // back). buffers: as for sort(), needed only when group > kWarpItems.
    // active: false for a thread whose group's result nobody reads (whole
    // warps: e.g. the groups past the first); it only meets the barriers,
    // so the block's issue slots go to the groups that count.
    __device__ __forceinline__ static void sort_groups(Item (&items)[kItems], Item *buffers, uint32_t group,
                                                       bool active = true) {
        const uint32_t network = blockDim.x * kItems;
        const uint32_t first = threadIdx.x * kItems;
        if (active) warp_merges_up_to<2>(items, first, group);
        uint32_t parity = 0;
        for (uint32_t k = 2 * kWarpItems; k <= group; k <<= 1) {
            for (uint32_t j = k >> 1; j >= kWarpItems; j >>= 1) {
                const bool keep_min = ((first & j) == 0) == ((first & k) == 0);
                Item *buffer = buffers + parity * buffer_items(network);
                parity ^= 1;
                if (active) {
#pragma unroll
                    for (int e = 0; e < kItems; ++e) buffer[slot(first + e)] = items[e];
                }
                __syncthreads();
                if (active) {
#pragma unroll
                    for (int e = 0; e < kItems; ++e)
                        items[e] = keep(items[e], buffer[slot((first + e) ^ j)], keep_min);
                }
            }
            if (active) warp_steps<kWarpItems / 2>(items, first, k);
        }
    }

    // Sorts the blockDim.x * kItems items ascending (a power of two, at
    // least kWarpItems); thread t holds network positions t * kItems ..
    // t * kItems + kItems - 1. buffers: 2 * buffer_items(network) items of
    // shared memory. Every thread calls it.
    __device__ __forceinline__ static void sort(Item (&items)[kItems], Item *buffers) {
        sort_groups(items, buffers, blockDim.x * kItems);  // one group: the whole block, ascending
    }
};

}  // namespace gpuprim::cuda
