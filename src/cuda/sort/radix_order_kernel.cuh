// SPDX-License-Identifier: Apache-2.0
// The Onesweep radix sort's order check (radix_sort.cuh): before the upfront
// histogram, find whether the input is already in the order asked for, so
// that such an input costs a read (and, out of place, a copy) instead of a
// sort.
#pragma once

#include "core/key_transform.h"
#include "cuda/sort/pass_sample.cuh"
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
    uint32_t *counters;     // env.zeroed_counters: kOrderBrokenWord, the sampled words
    PassWindows windows;    // each pass's digit, for the sample (pass_sample.cuh)
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
// Blocks of an unordered input also sample the last tile they checked
// (their first, on unordered data) for the histogram kernel's choice of each
// pass's ranking (pass_sample.cuh): the keys are in shared memory here, so
// the sample adds no load to the sort.
// The next tile is copied to shared memory (kAsync: cp.async, 4- and 8-byte
// keys) while this one is checked: a tile's loads alone did not keep enough
// bytes in flight (1.8 TB/s on an H100). kItems * sizeof(K) is a multiple of
// 16 (whole pieces per thread).
template <typename K, int kValueBytes, int kThreads, int kItems, int kTilesPerRound>
__global__ void __launch_bounds__(kThreads) radix_order_kernel(const OrderArgs args) {
    constexpr uint32_t kTile = uint32_t(kThreads) * kItems;
    constexpr bool kAsync = sizeof(K) >= 4;
    static_assert(!kAsync || (kItems * sizeof(K)) % 16 == 0, "whole 16-byte pieces per thread");
    __shared__ __align__(16) K staged[2][kTile];
    __shared__ K tile_before[2];  // the key before each staged tile
    __shared__ uint32_t block_broken;
    allow_next_grid();
    const K *keys = static_cast<const K *>(args.keys);
    const uint64_t n = args.count;
    const uint32_t lane = threadIdx.x % 32;
    auto tile_base = [&](uint64_t k) { return (uint64_t(blockIdx.x) + k * gridDim.x) * kTile; };
    // Stages tile k (if it exists) in buffer k % 2: each thread its own positions.
    auto stage = [&](uint64_t k) {
        const uint64_t base = tile_base(k);
        const int buffer = int(k % 2);
        if (base < n) {
            constexpr int kPieceKeys = 16 / int(sizeof(K));
            if (kAsync && base + kTile <= n && reinterpret_cast<uintptr_t>(keys) % 16 == 0) {
                // A whole aligned tile: 16-byte pieces (a quarter of the copies
                // of one per 4-byte key); any thread reads any key after a barrier.
#pragma unroll
                for (int i = 0; i < kItems / kPieceKeys; ++i) {
                    const uint32_t first = (uint32_t(i) * kThreads + threadIdx.x) * kPieceKeys;
                    copy_piece_to_shared_async(&staged[buffer][first], keys + base + first);
                }
            } else {
#pragma unroll
                for (int i = 0; i < kItems; ++i) {
                    const uint32_t position = uint32_t(i) * kThreads + threadIdx.x;
                    if (base + position < n) {
                        if constexpr (kAsync) copy_to_shared_async(&staged[buffer][position], keys + base + position);
                        else staged[buffer][position] = keys[base + position];
                    }
                }
            }
            if (threadIdx.x == 0) tile_before[buffer] = base > 0 ? keys[base - 1] : K(0);
        }
        cp_async_commit();  // always a group, so the wait counts stay fixed
    };

    if (threadIdx.x == 0) block_broken = load_relaxed(&args.counters[kOrderBrokenWord]);
    uint32_t broken = 0;  // what this warp knows broken
    // The block's warps, the word and the other blocks: what is broken. Every
    // thread of the block calls it.
    auto exchange = [&]() {
        if (lane == 0 && broken != 0) atomicOr(&block_broken, broken);
        __syncthreads();
        if (threadIdx.x == 0) {
            const uint32_t word = load_relaxed(&args.counters[kOrderBrokenWord]);
            if (block_broken & ~word) atomicOr(&args.counters[kOrderBrokenWord], block_broken);
            block_broken |= word;
        }
        __syncthreads();
    };
    // Rounds of tiles between exchanges of what is broken: the first is one
    // tile (unordered data stops after it), the others kTilesPerRound.
    uint64_t round_end = 1;
    stage(0);
    uint64_t checked = 0;  // the last tile checked: still staged when the loop ends
    for (uint64_t k = 0; tile_base(k) < n; ++k) {
        checked = k;
        __syncthreads();  // every thread is done with buffer (k + 1) % 2
        stage(k + 1);
        cp_async_wait<1>();  // tile k
        __syncthreads();
        broken |= block_broken;
        const uint64_t base = tile_base(k);
        const K *tile = staged[k % 2];
        uint32_t seen = 0;
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = uint32_t(i) * kThreads + threadIdx.x;
            if (position > 0 ? base + position < n : base > 0) {
                const K previous = position > 0 ? tile[position - 1] : tile_before[k % 2];
                const uint64_t current = uint64_t(to_radix_key<K>(tile[position], args.kind, args.descending)) & args.order_bits;
                const uint64_t before = uint64_t(to_radix_key<K>(previous, args.kind, args.descending)) & args.order_bits;
                seen |= before > current ? 1u : 2u;
            }
        }
        broken |= (__any_sync(0xffffffffu, seen & 1) ? 1u : 0u) | (__any_sync(0xffffffffu, seen & 2) ? 2u : 0u);
        if (broken != 3 && (args.keys_out != nullptr || args.values_out != nullptr)) {
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
                const uint32_t position = uint32_t(i) * kThreads + threadIdx.x;
                const uint64_t index = base + position;
                if (index < n) {
                    const uint64_t to = mirrored ? n - 1 - index : index;
                    if (args.keys_out) static_cast<K *>(args.keys_out)[to] = tile[position];
                    if constexpr (kValueBytes != 0) {
                        if (args.values_out) static_cast<V *>(args.values_out)[to] = value[i];
                    }
                }
            }
        }
        if (k + 1 == round_end) {
            round_end += kTilesPerRound;
            exchange();
            if (block_broken == 3) break;
        }
    }
    // The last round can end short of kTilesPerRound tiles: what it found
    // counts too (after a break this adds nothing).
    exchange();
    // Out of order: the sample for the ranking, from the last tile checked
    // (on unordered data the first). Here, not in the loop, so that it adds
    // no registers to the loop (an input in order runs no pass: no sample).
    if (block_broken == 3 && block_samples()) {
        const uint64_t base = tile_base(checked);
        sample_tile<K, kThreads, kTile>(staged[checked % 2], uint32_t(n - base < kTile ? n - base : kTile),
                                        args.kind, args.descending, args.windows, args.counters);
    }
    cp_async_wait<0>();  // no copy outlives the block
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
