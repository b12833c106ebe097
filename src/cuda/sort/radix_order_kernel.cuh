// SPDX-License-Identifier: Apache-2.0
// The Onesweep radix sort's order check (radix_sort.cuh): before the upfront
// histogram, find whether the input is already in the order asked for, so
// that such an input costs a read (and, out of place, a copy) instead of a
// sort.
#pragma once

#include "core/key_transform.h"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/util/ptx.cuh"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace radix_detail {

struct OrderArgs {
    const void *keys;
    uint64_t count;
    KeyKind kind;
    bool descending;
    uint64_t order_bits;    // the radix-key bits the sort orders by
    void *keys_out;         // null: keys in place
    const void *values_in;  // null: the values are the positions (an argsort's)
    void *values_out;       // null: no values, or values in place
    uint32_t *counters;     // env.zeroed_counters: kOrderBrokenWord
};

struct NoValues {};  // keys without values

// Checks every key's sort bits against its predecessor's: the input is
// sorted (none smaller) or strictly reversed (every one smaller; equal keys
// would have to keep their order, so a tie rules it out). Blocks OR what
// they find into kOrderBrokenWord (bit 0: not sorted, bit 1: not reversed)
// every kTilesPerRound tiles and stop as soon as both are broken: on
// unordered data, after their first round, so the check costs about one
// round a block. Meanwhile each warp copies its keys (and values) to where an
// order it has not seen broken would put them (out of place only; reversed:
// mirrored): if the input turns out in order, no warp saw it broken, so every
// key has reached its place and this kernel was the whole sort; otherwise
// the copies are overwritten by the passes. The histogram kernel reads the
// word (radix_histogram_kernel); the pass kernels then do nothing
// (RadixPlan::input_order) but reverse in-place buffers.
template <typename K, int kValueBytes, int kThreads, int kItems, int kTilesPerRound>
__global__ void __launch_bounds__(kThreads) radix_order_kernel(const OrderArgs args) {
    constexpr int kWarps = kThreads / 32;
    __shared__ uint32_t block_broken;
    // Each warp's last keys of a tile (two tiles, alternating): lane 0's
    // predecessors, so that no key is loaded twice.
    __shared__ K warp_last[2][kWarps][kItems];
    __shared__ K tile_before[2];  // the key before the tile
    allow_next_grid();
    const K *keys = static_cast<const K *>(args.keys);
    const uint64_t n = args.count;
    constexpr uint64_t kTile = uint64_t(kThreads) * kItems;
    const uint32_t lane = threadIdx.x % 32;
    const uint32_t warp = threadIdx.x / 32;
    if (threadIdx.x == 0) block_broken = load_relaxed(&args.counters[kOrderBrokenWord]);
    __syncthreads();
    uint32_t broken = block_broken;  // what this warp knows broken
    uint32_t parity = 0;
    const uint64_t stride = uint64_t(gridDim.x) * kTile;
    // The first round is one tile (unordered data stops after it), the
    // others kTilesPerRound.
    int tiles = 1;
    for (uint64_t round = uint64_t(blockIdx.x) * kTile; round < n; round += stride * tiles, tiles = kTilesPerRound) {
#pragma unroll 1
        for (int t = 0; t < tiles; ++t) {
            const uint64_t base = round + t * stride;
            if (base >= n) break;
            K key[kItems];
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                key[i] = index < n ? keys[index] : K(0);
            }
            if (threadIdx.x == 0) tile_before[parity] = base > 0 ? keys[base - 1] : K(0);
            if (lane == 31) {
#pragma unroll
                for (int i = 0; i < kItems; ++i) warp_last[parity][warp][i] = key[i];
            }
            __syncthreads();  // (alternating buffers: the tile before last is done with them)
            uint32_t seen = 0;
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                const uint64_t current = uint64_t(to_radix_key<K>(key[i], args.kind, args.descending)) & args.order_bits;
                // The predecessor: the lane below, or for lane 0 the previous
                // warp's last key (of the row before, for warp 0).
                uint64_t before = __shfl_up_sync(0xffffffffu, current, 1);
                if (lane == 0) {
                    const K previous = warp > 0 ? warp_last[parity][warp - 1][i]
                                                : (i > 0 ? warp_last[parity][kWarps - 1][i - 1] : tile_before[parity]);
                    before = uint64_t(to_radix_key<K>(previous, args.kind, args.descending)) & args.order_bits;
                }
                if (index > 0 && index < n) seen |= before > current ? 1u : 2u;
            }
            parity ^= 1;
            broken |= (__any_sync(0xffffffffu, seen & 1) ? 1u : 0u) | (__any_sync(0xffffffffu, seen & 2) ? 2u : 0u);
            // (No leaving the round early: its tiles have block barriers.)
            if (broken == 3 || (args.keys_out == nullptr && args.values_out == nullptr)) continue;
            const bool mirrored = (broken & 1) != 0;
            // The values' loads all before any store (they cannot alias).
            using V = std::conditional_t<kValueBytes == 0, NoValues, typename UnsignedBits<kValueBytes ? kValueBytes : 4>::type>;
            [[maybe_unused]] V value[kItems];
            if constexpr (kValueBytes != 0) {
                if (args.values_out) {
#pragma unroll
                    for (int i = 0; i < kItems; ++i) {
                        const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                        value[i] = !args.values_in ? V(index)
                                   : index < n     ? static_cast<const V *>(args.values_in)[index]
                                                   : V(0);
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                if (index < n) {
                    const uint64_t to = mirrored ? n - 1 - index : index;
                    if (args.keys_out) static_cast<K *>(args.keys_out)[to] = key[i];
                    if constexpr (kValueBytes != 0) {
                        if (args.values_out) static_cast<V *>(args.values_out)[to] = value[i];
                    }
                }
            }
        }
        // The block's warps, the word and the other blocks: what is broken.
        if (lane == 0 && broken != 0) atomicOr(&block_broken, broken);
        __syncthreads();
        if (threadIdx.x == 0) {
            const uint32_t word = load_relaxed(&args.counters[kOrderBrokenWord]);
            if (block_broken & ~word) atomicOr(&args.counters[kOrderBrokenWord], block_broken);
            block_broken |= word;
        }
        __syncthreads();
        broken = block_broken;
        if (broken == 3) break;
    }
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
