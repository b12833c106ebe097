// SPDX-License-Identifier: Apache-2.0
// The fused radix sort kernel for middle sizes: histogram and every pass in
// one cooperative launch (radix_sort.cuh has the design).
#pragma once

#include "core/key_transform.h"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/sort/radix_tile.cuh"
#include "cuda/util/ptx.cuh"

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace radix_detail {
// ---------------------------------------------------------------------------
// Middle sizes: the whole sort in one cooperative launch, one tile per block,
// every block resident. The histogram phase and the passes are separated by
// grid barriers instead of kernel boundaries; within a pass the tiles find
// their offsets by the same decoupled look-back (all tiles run at once, so a
// wide look-back window finds every predecessor in one or two reads).

struct FusedArgs {
    const void *keys[3];    // by BufferId
    const void *values[3];  // by BufferId
    uint32_t count;         // <= blocks * tile
    KeyKind kind;
    bool descending;
    bool keys_in_place, has_values, values_in_place;
    uint32_t *digit_counts;  // passes * 256, cleared by block 0
    uint32_t *lookback;      // passes * blocks * 256, each block clears its rows
    uint32_t *zeroed_flag;   // a zeroed counter word
    PassWindows windows;     // each pass's digit; empty windows are not counted
};

template <typename K, typename V, typename Shape, bool kHasValues>
struct FusedStorage {
    using Tile = OnesweepStorage<K, V, Shape, kHasValues>;
    Tile tile;
    uint32_t digit_offset[kPasses<K>][kDigits];  // exclusive scan of each pass's counts
    uint32_t scan_totals[kDigits / 32];
    bool digit_constant[kPasses<K>];
};

// One block's tile through the fused sort: count its digits of every pass
// (load_input_keys, count_digits), turn the grid's counts into digit offsets
// and the plan (scan_counts, make_plan), then each pass: rank the keys
// (rank_keys), look back for the digits' offsets (look_back), scatter the
// keys and the values (scatter_keys, scatter_values).
template <typename K, int kValueBytes, typename Shape>
struct FusedAgent {
    static constexpr bool kHasValues = kValueBytes != 0;
    using V = RadixValue<kValueBytes>;
    using Storage = FusedStorage<K, V, Shape, kHasValues>;
    using Tile = RadixTile<K, V, Shape, kHasValues>;
    using Rank = typename Tile::Rank;
    static constexpr int kThreads = Shape::kThreads;
    static constexpr int kItems = Shape::kItems;
    static constexpr uint32_t kTile = Shape::kTile;
    static constexpr int kPassCount = kPasses<K>;
    static_assert(Rank::kWarps >= kPassCount, "the rank counters double as the tile histogram");

    Storage &s;
    typename Storage::Tile &t;
    const FusedArgs &args;
    const uint32_t tile;
    const uint32_t tiles;
    const uint32_t tile_offset;
    const uint32_t tile_keys;
    const bool full;
    const uint32_t warp;
    const uint32_t lane;
    const uint32_t warp_first;  // tile position of this thread's item 0

    __device__ __forceinline__ FusedAgent(Storage &storage, const FusedArgs &launch)
        : s(storage),
          t(storage.tile),
          args(launch),
          tile(blockIdx.x),
          tiles(gridDim.x),
          tile_offset(blockIdx.x * kTile),
          tile_keys(min(kTile, launch.count - tile_offset)),
          full(tile_keys == kTile),
          warp(threadIdx.x / 32),
          lane(radix_lane_id()),
          warp_first(warp * 32 * kItems + lane) {}

    // Phase 0, first: clear the global counts (block 0, which then raises
    // the zeroed flag), this block's look-back rows and its histogram.
    __device__ __forceinline__ uint32_t *clear_counts() {
        if (blockIdx.x == 0) {
            for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads) args.digit_counts[i] = 0;
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) atomicExch(args.zeroed_flag, 1u);
        }
        for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads)
            args.lookback[(uint64_t(i / kDigits) * tiles + tile) * kDigits + i % kDigits] = 0;
        uint32_t *histogram = &t.rank.warp_counts[0][0];
        for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads) histogram[i] = 0;
        return histogram;
    }

    // The input's radix keys of this thread's slots; missing keys rank last.
    __device__ __forceinline__ void load_input_keys(K (&keys)[kItems]) const {
        read_warp_slots(keys, static_cast<const K *>(args.keys[kInputBuffer]) + tile_offset, warp_first, full,
                        tile_keys);
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = warp_first + i * 32;
            keys[i] = (full || position < tile_keys) ? to_radix_key<K>(keys[i], args.kind, args.descending) : ~K(0);
        }
    }

    // Phase 0, then: the tile's digits of every pass counted in shared
    // memory and added to the global counts (once block 0 has zeroed them).
    __device__ __forceinline__ void count_digits(uint32_t *histogram, const K (&keys)[kItems]) {
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = warp_first + i * 32;
            if (full || position < tile_keys) {
#pragma unroll
                for (int p = 0; p < kPassCount; ++p)
                    if (args.windows.pass[p].mask != 0)
                        atomicAdd(&histogram[p * kDigits + digit_of(keys[i], args.windows.pass[p])], 1u);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            while (load_relaxed(args.zeroed_flag) == 0) {
            }
            __threadfence();
        }
        __syncthreads();
        for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads)
            if (histogram[i]) atomicAdd(&args.digit_counts[i], histogram[i]);
        if (threadIdx.x < kPassCount) s.digit_constant[threadIdx.x] = false;
    }

    // Every block scans the counts (the same in every block): each pass's
    // digit offsets, and whether one digit holds every key.
    __device__ __forceinline__ void scan_counts() {
        for (int p = 0; p < kPassCount; ++p) {
            uint32_t count = 0;
            // An empty window's digit is 0 for every key.
            if (threadIdx.x < kDigits)
                count = args.windows.pass[p].mask != 0 ? __ldcg(&args.digit_counts[p * kDigits + threadIdx.x])
                                                       : (threadIdx.x == 0 ? args.count : 0u);
            uint32_t inclusive = count;
#pragma unroll
            for (int offset = 1; offset < 32; offset <<= 1) {
                const uint32_t other = __shfl_up_sync(kFullWarpMask, inclusive, offset);
                if (lane >= uint32_t(offset)) inclusive += other;
            }
            if (threadIdx.x < kDigits && lane == 31) s.scan_totals[warp] = inclusive;
            __syncthreads();
            if (threadIdx.x < kDigits) {
                uint32_t exclusive = inclusive - count;
                for (uint32_t w = 0; w < warp; ++w) exclusive += s.scan_totals[w];
                s.digit_offset[p][threadIdx.x] = exclusive;
                if (count == args.count) s.digit_constant[p] = true;
            }
            __syncthreads();
        }
    }

    __device__ __forceinline__ RadixPlan make_plan() const {
        RadixPlan plan;
        bool varies[kMaxPasses];
        for (int p = 0; p < kPassCount; ++p) varies[p] = !s.digit_constant[p];
        make_radix_plan(kPassCount, varies, args.keys_in_place, args.has_values, args.values_in_place, plan);
        return plan;
    }

    // One active pass over the tile; keys_loaded: the keys are in registers
    // (phase 0's radix keys, for the first active pass).
    __device__ __forceinline__ void run_pass(int p, const PassPlan &pass, K (&keys)[kItems], bool keys_loaded) {
        const DigitWindow window = args.windows.pass[p];
        const K *key_source = static_cast<const K *>(pick_buffer(args.keys, pass.key_source)) + tile_offset;
        const V *value_source = static_cast<const V *>(pick_buffer(args.values, pass.value_source)) + tile_offset;
        uint32_t *lookback = args.lookback + uint64_t(p) * tiles * kDigits;
        if constexpr (Storage::Tile::kStage) {
            Tile::stage_values(t, value_source, warp_first, full, tile_keys);
            cp_async_commit();
        }
        if (!keys_loaded) {
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                keys[i] = (full || position < tile_keys) ? key_source[position] : ~K(0);
            }
        }
        uint32_t ranks[kItems];
        uint32_t digit_count = 0, digit_exclusive = 0;
        uint32_t *tile_lookback = lookback + uint64_t(tile) * kDigits;
        constexpr LookbackCodes codes{1, 2};
        Tile::rank_keys(t, keys, window, ranks, digit_count, digit_exclusive, [&](uint32_t count) {
            if (tile > 0) store_relaxed(tile_lookback + threadIdx.x, (codes.aggregate << 30) | count);
        });
        if (threadIdx.x < kDigits) {
            const uint32_t digit = threadIdx.x;
            const uint32_t before =
                tile > 0 ? lookback_exclusive<Shape::kLookbackWindow>(lookback, tile, digit, codes) : 0u;
            store_relaxed(tile_lookback + digit, (codes.inclusive << 30) | (before + digit_count));
            t.global_base[digit] = uint64_t(s.digit_offset[p][digit]) + before - digit_exclusive;
        }
        __syncthreads();
        uint32_t out_digits[Tile::kDigitWords] = {};
        scatter_keys(pass, window, out_digits);
        if constexpr (kHasValues) scatter_values(pass, value_source, ranks, out_digits);
    }

    __device__ __forceinline__ void scatter_keys(const PassPlan &pass, DigitWindow window,
                                                 uint32_t (&out_digits)[Tile::kDigitWords]) {
        K *key_destination = static_cast<K *>(const_cast<void *>(pick_buffer(args.keys, pass.key_destination)));
        Tile::scatter_keys(t, window, full, tile_keys, out_digits, [&](uint32_t position, K key, uint32_t digit) {
            key_destination[t.global_base[digit] + position] =
                pass.transform_out ? from_radix_key<K>(key, args.kind, args.descending) : key;
        });
    }

    __device__ __forceinline__ void scatter_values(const PassPlan &pass, const V *value_source,
                                                   const uint32_t (&ranks)[kItems],
                                                   const uint32_t (&out_digits)[Tile::kDigitWords]) {
        V *value_destination = static_cast<V *>(const_cast<void *>(pick_buffer(args.values, pass.value_destination)));
        V values[kItems];
        if constexpr (Storage::Tile::kStage) {
            cp_async_wait<0>();
            read_warp_slots(values, t.staged_values, warp_first, full, tile_keys);
        } else {
            read_warp_slots(values, value_source, warp_first, full, tile_keys);
        }
        __syncthreads();
        Tile::exchange_values(t, values, ranks, warp_first, full, tile_keys);
        __syncthreads();
        Tile::scatter_values(full, tile_keys, out_digits, [&](uint32_t position, uint32_t digit) {
            value_destination[t.global_base[digit] + position] = t.exchange.values[position];
        });
    }
};

template <typename K, int kValueBytes, typename Shape>
__global__ void __launch_bounds__(Shape::kThreads) radix_fused_kernel(const FusedArgs args) {
    using Agent = FusedAgent<K, kValueBytes, Shape>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    Agent agent(*reinterpret_cast<typename Agent::Storage *>(shared_bytes), args);

    // Phase 0: the digit counts of every pass, over the grid.
    uint32_t *histogram = agent.clear_counts();
    K keys[Agent::kItems];
    agent.load_input_keys(keys);
    agent.count_digits(histogram, keys);
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) *args.zeroed_flag = 0;  // every block is past its wait

    // Every block makes the same plan.
    agent.scan_counts();
    const RadixPlan plan = agent.make_plan();
    bool keys_loaded = true;  // phase 0 left the input's radix keys in registers
    for (int p = 0; p < Agent::kPassCount; ++p) {
        const PassPlan pass = plan.pass[p];
        if (!pass.active) continue;
        agent.run_pass(p, pass, keys, keys_loaded);
        keys_loaded = false;
        if (!pass.transform_out) grid.sync();  // the next pass reads what every tile wrote
        __syncthreads();
    }
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
