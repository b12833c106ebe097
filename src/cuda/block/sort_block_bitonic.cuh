// Block-wide bitonic sort of up to kThreads * kItems items held in registers
// (small inputs: one block, no global memory traffic between steps).
//
// Item i of the network lives in thread i % kThreads, slot i / kThreads, so
// the compare-exchange partner i ^ j is in the same thread when j >= kThreads
// (register step), in the same warp when j < 32 (shuffle step) and elsewhere
// in the block otherwise (one shared-memory round trip; two alternating
// buffers need one barrier per step). Items must be totally ordered (the
// caller makes equal keys distinct with their input index: stable).
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

template <typename Item, int kThreads, int kItems>
struct BlockBitonicSort {
    static_assert((kThreads & (kThreads - 1)) == 0 && kThreads >= 32, "power-of-two block");
    static_assert((kItems & (kItems - 1)) == 0, "power-of-two items per thread");

    // Keeps the smaller (keep_min) or larger of mine and other.
    __device__ __forceinline__ static Item keep(Item mine, Item other, bool keep_min) {
        const bool other_smaller = sort_item_less(other, mine);
        return other_smaller == keep_min ? other : mine;
    }

    template <int kSlotDistance>
    __device__ __forceinline__ static void register_step(Item (&items)[kItems], uint32_t network,
                                                         uint32_t k) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if ((e & kSlotDistance) == 0 && uint32_t(e | kSlotDistance) * kThreads < network) {
                const uint32_t i = uint32_t(e) * kThreads + threadIdx.x;
                const bool ascending = (i & k) == 0;
                Item &low = items[e];
                Item &high = items[e | kSlotDistance];
                if (sort_item_less(high, low) == ascending) {
                    const Item t = low;
                    low = high;
                    high = t;
                }
            }
        }
    }

    // Sorts items [0, network) ascending; network is a power of two
    // <= kThreads * kItems. buffers: 2 * network items of shared memory.
    // Every thread of the block calls it.
    __device__ __forceinline__ static void sort(Item (&items)[kItems], uint32_t network, Item *buffers) {
        uint32_t parity = 0;
        for (uint32_t k = 2; k <= network; k <<= 1) {
            for (uint32_t j = k >> 1; j > 0; j >>= 1) {
                if (j >= kThreads) {
                    if constexpr (kItems >= 2) {
                        if (j == kThreads) register_step<1>(items, network, k);
                    }
                    if constexpr (kItems >= 4) {
                        if (j == 2 * kThreads) register_step<2>(items, network, k);
                    }
                    if constexpr (kItems >= 8) {
                        if (j == 4 * kThreads) register_step<4>(items, network, k);
                    }
                    if constexpr (kItems >= 16) {
                        if (j == 8 * kThreads) register_step<8>(items, network, k);
                    }
                } else if (j >= 32) {
                    Item *buffer = buffers + parity * network;
                    parity ^= 1;
#pragma unroll
                    for (int e = 0; e < kItems; ++e) {
                        const uint32_t i = uint32_t(e) * kThreads + threadIdx.x;
                        if (uint32_t(e) * kThreads < network && i < network) buffer[i] = items[e];
                    }
                    __syncthreads();
#pragma unroll
                    for (int e = 0; e < kItems; ++e) {
                        const uint32_t i = uint32_t(e) * kThreads + threadIdx.x;
                        if (uint32_t(e) * kThreads < network && i < network)
                            items[e] = keep(items[e], buffer[i ^ j], ((i & j) == 0) == ((i & k) == 0));
                    }
                } else {
#pragma unroll
                    for (int e = 0; e < kItems; ++e) {
                        if (uint32_t(e) * kThreads < network) {
                            const uint32_t i = uint32_t(e) * kThreads + threadIdx.x;
                            const Item other = sort_item_shuffle_xor(items[e], int(j));
                            if (i < network)
                                items[e] = keep(items[e], other, ((i & j) == 0) == ((i & k) == 0));
                        }
                    }
                }
            }
        }
    }
};

}  // namespace gpuprim::cuda
