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

// ---- the fused kernel's steps ------------------------------------------------
// Block 0 clears the global digit counts and raises the flag the other
// blocks wait for before adding to them; every block clears its look-back
// rows of every pass.
template <int kPassCount, int kThreads>
__device__ __forceinline__ void clear_fused_counts(const FusedArgs &args, uint32_t tile, uint32_t tiles) {
    if (blockIdx.x == 0) {
        for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads) args.digit_counts[i] = 0;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) atomicExch(args.zeroed_flag, 1u);
    }
    for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads)
        args.lookback[(uint64_t(i / kDigits) * tiles + tile) * kDigits + i % kDigits] = 0;
}

// The tile's input keys in warp slots, as radix keys (past the end: all
// ones, which sort last).
template <typename K, int kItems>
__device__ __forceinline__ void load_radix_keys(K (&keys)[kItems], const FusedArgs &args, uint32_t tile_offset,
                                                uint32_t warp_first, bool full, uint32_t tile_keys) {
    read_warp_slots(keys, static_cast<const K *>(args.keys[kInputBuffer]) + tile_offset, warp_first, full,
                    tile_keys);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
        const uint32_t position = warp_first + i * 32;
        keys[i] = (full || position < tile_keys) ? to_radix_key<K>(keys[i], args.kind, args.descending) : ~K(0);
    }
}

// The tile's digit counts of every pass in shared memory; returns when
// block 0 has cleared the global counts they are added to.
template <int kPassCount, int kThreads, typename K, int kItems>
__device__ __forceinline__ void count_tile_digits(const FusedArgs &args, const K (&keys)[kItems],
                                                  uint32_t *histogram, uint32_t warp_first, bool full,
                                                  uint32_t tile_keys) {
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
}

// The passes' plan, the same in every block: which passes run (a digit
// that holds every key skips its pass) and between which buffers.
template <int kPassCount>
__device__ __forceinline__ void make_fused_plan(const FusedArgs &args, const bool (&digit_constant)[kPassCount],
                                                RadixPlan &plan) {
    bool varies[kMaxPasses];
    for (int p = 0; p < kPassCount; ++p) varies[p] = !digit_constant[p];
    make_radix_plan(kPassCount, varies, args.keys_in_place, args.has_values, args.values_in_place, plan);
}

// A pass's keys, already radix keys, from the buffer the pass before wrote
// (past the end: all ones).
template <typename K, int kItems>
__device__ __forceinline__ void load_pass_keys(K (&keys)[kItems], const K *key_source, uint32_t warp_first, bool full,
                                               uint32_t tile_keys) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
        const uint32_t position = warp_first + i * 32;
        keys[i] = (full || position < tile_keys) ? key_source[position] : ~K(0);
    }
}

// A pass's values: read (from the stage, or from global memory), exchanged
// into the keys' ranks, scattered to the keys' destinations.
template <typename Tile, typename V, int kItems>
__device__ __forceinline__ void move_fused_values(typename Tile::Storage &t, const V *value_source,
                                                  V *value_destination, const uint32_t (&ranks)[kItems],
                                                  const uint32_t (&out_digits)[Tile::kDigitWords],
                                                  uint32_t warp_first, bool full, uint32_t tile_keys) {
    V values[kItems];
    if constexpr (Tile::Storage::kStage) {
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

template <typename K, int kValueBytes, typename Shape>
__global__ void __launch_bounds__(Shape::kThreads) radix_fused_kernel(const FusedArgs args) {
    constexpr bool kHasValues = kValueBytes != 0;
    using V = RadixValue<kValueBytes>;
    using Storage = FusedStorage<K, V, Shape, kHasValues>;
    using Tile = RadixTile<K, V, Shape, kHasValues>;
    using Rank = typename Tile::Rank;
    constexpr int kThreads = Shape::kThreads;
    constexpr int kItems = Shape::kItems;
    constexpr uint32_t kTile = Shape::kTile;
    constexpr int kPassCount = kPasses<K>;
    static_assert(Rank::kWarps >= kPassCount, "the rank counters double as the tile histogram");

    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Storage &s = *reinterpret_cast<Storage *>(shared_bytes);
    auto &t = s.tile;
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();

    const uint32_t tile = blockIdx.x;
    const uint32_t tiles = gridDim.x;
    const uint32_t tile_offset = tile * kTile;
    const uint32_t tile_keys = min(kTile, args.count - tile_offset);
    const bool full = tile_keys == kTile;
    const uint32_t warp = threadIdx.x / 32;
    const uint32_t lane = radix_lane_id();
    const uint32_t warp_first = warp * 32 * kItems + lane;

    // Phase 0: clear the global counts and this block's look-back rows,
    // load the tile's keys, count their digits of every pass.
    clear_fused_counts<kPassCount, kThreads>(args, tile, tiles);
    uint32_t *histogram = &t.rank.warp_counts[0][0];
    for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads) histogram[i] = 0;
    K keys[kItems];
    load_radix_keys(keys, args, tile_offset, warp_first, full, tile_keys);
    __syncthreads();
    count_tile_digits<kPassCount, kThreads>(args, keys, histogram, warp_first, full, tile_keys);
    for (int i = threadIdx.x; i < kPassCount * kDigits; i += kThreads)
        if (histogram[i]) atomicAdd(&args.digit_counts[i], histogram[i]);
    if (threadIdx.x < kPassCount) s.digit_constant[threadIdx.x] = false;
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) *args.zeroed_flag = 0;  // every block is past its wait

    // Every block scans the counts and makes the same plan.
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
    RadixPlan plan;
    make_fused_plan<kPassCount>(args, s.digit_constant, plan);

    bool keys_loaded = true;  // phase 0 left the input's radix keys in registers
    for (int p = 0; p < kPassCount; ++p) {
        const PassPlan pass = plan.pass[p];
        if (!pass.active) continue;
        const DigitWindow window = args.windows.pass[p];
        const K *key_source = static_cast<const K *>(pick_buffer(args.keys, pass.key_source)) + tile_offset;
        K *key_destination = static_cast<K *>(const_cast<void *>(pick_buffer(args.keys, pass.key_destination)));
        const V *value_source = static_cast<const V *>(pick_buffer(args.values, pass.value_source)) + tile_offset;
        V *value_destination =
            static_cast<V *>(const_cast<void *>(pick_buffer(args.values, pass.value_destination)));
        uint32_t *lookback = args.lookback + uint64_t(p) * tiles * kDigits;
        uint32_t *tile_lookback = lookback + uint64_t(tile) * kDigits;
        constexpr LookbackCodes codes{1, 2};

        if constexpr (Storage::Tile::kStage) {
            Tile::stage_values(t, value_source, warp_first, full, tile_keys);
            cp_async_commit();
        }
        if (!keys_loaded) load_pass_keys(keys, key_source, warp_first, full, tile_keys);
        keys_loaded = false;

        uint32_t ranks[kItems];
        uint32_t digit_count = 0, digit_exclusive = 0;
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
        Tile::scatter_keys(t, window, full, tile_keys, out_digits, [&](uint32_t position, K key, uint32_t digit) {
            key_destination[t.global_base[digit] + position] =
                pass.transform_out ? from_radix_key<K>(key, args.kind, args.descending) : key;
        });
        if constexpr (kHasValues)
            move_fused_values<Tile>(t, value_source, value_destination, ranks, out_digits, warp_first, full,
                                    tile_keys);
        if (!pass.transform_out) grid.sync();  // the next pass reads what every tile wrote
        __syncthreads();
    }
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
