// SPDX-License-Identifier: Apache-2.0
// The radix tile agent: the shared memory of one tile and the steps of a
// pass over it that the Onesweep pass kernel (radix_onesweep_kernel.cuh) and
// the fused kernel (radix_fused_kernel.cuh) share: staging values, ranking
// keys into the exchange buffer, the per-digit decoupled look-back
// (lookback_exclusive), placing values at their ranks, the scatter of keys
// and values. The kernels keep what differs: where tiles come from (tickets
// and portions, or one tile per block), how keys are loaded, and where the
// scattered keys and values go (byte addresses per digit, or indexes).
#pragma once

#include "core/backend.h"
#include "cuda/block/block_radix_rank.cuh"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/util/ptx.cuh"

#include <cstdint>

namespace gpuprim::cuda {
namespace radix_detail {

template <typename K, typename V, typename Shape, bool kHasValues, bool kPacked = false>
struct OnesweepStorage {
    using Rank = BlockRadixRank<Shape::kThreads, Shape::kItems, Shape::kMatch, Shape::kEarlyCounts>;
    static constexpr int kTile = Shape::kTile;
    // cp.async copies 4, 8 or 16 bytes: narrower values are read directly.
    static constexpr bool kStage = kHasValues && Shape::kStageValues && sizeof(V) >= 4;
    typename Rank::Storage rank;
    uint64_t global_base[kDigits];  // global index of tile position 0 of each digit (fused kernel)
    // Byte address that tile position 0 of each digit would have in the
    // destination (modulo 2^64): a key's address is one multiply-add away.
    uint64_t key_address[kDigits];
    uint64_t value_address[kHasValues || kPacked ? kDigits : 1];
    uint32_t next_tile[2];  // ticket broadcast (two: read and written in turn)
    union alignas(16) Exchange {
        K keys[kTile];
        V values[kHasValues ? kTile : 1];
    } exchange;
    alignas(16) V staged_values[kStage ? kTile : 1];
    alignas(16) K staged_keys[Shape::kPrefetch ? kTile : 1];
};

// Sum of the counts of digit `digit` in tiles [0, tile) of this launch.
// stats (tracing only): windows read << 32 | windows that stopped at an unpublished word.
template <int kWindow>
__device__ __forceinline__ uint32_t lookback_exclusive(const uint32_t *lookback, uint32_t tile,
                                                       uint32_t digit, LookbackCodes codes,
                                                       [[maybe_unused]] uint64_t *stats = nullptr) {
    uint32_t exclusive = 0;
    int64_t next = int64_t(tile) - 1;  // tile >= 1; tile 0 is always inclusive
    while (true) {
#if defined(GPUPRIM_SORT_TRACE)
        if (stats) *stats += uint64_t(1) << 32;
#endif
        uint32_t word[kWindow];
#pragma unroll
        for (int q = 0; q < kWindow; ++q)
            word[q] = next - q >= 0 ? load_relaxed(lookback + (next - q) * kDigits + digit) : 0u;
        int consumed = kWindow;
#pragma unroll
        for (int q = 0; q < kWindow; ++q) {
            if (q < consumed) {
                const uint32_t status = word[q] >> 30;
                if (status == codes.inclusive) return exclusive + (word[q] & kLookbackValueMask);
                if (status == codes.aggregate) exclusive += word[q] & kLookbackValueMask;
                else consumed = q;  // not published yet: read again from here
            }
        }
#if defined(GPUPRIM_SORT_TRACE)
        if (stats && consumed < kWindow) *stats += 1;
#endif
        next -= consumed;
    }
}

// Selects without indexing the parameter array (which would copy it to the stack).
__device__ __forceinline__ const void *pick_buffer(const void *const (&buffers)[3], uint8_t id) {
    return id == kInputBuffer ? buffers[0] : id == kOutputBuffer ? buffers[1] : buffers[2];
}

template <typename K, typename V, typename Shape, bool kHasValues, bool kPacked = false>
struct RadixTile {
    using Storage = OnesweepStorage<K, V, Shape, kHasValues, kPacked>;
    using Rank = typename Storage::Rank;
    static constexpr int kThreads = Shape::kThreads;
    static constexpr int kItems = Shape::kItems;
    // Digits of the keys a thread stores, four to a register, for the values.
    static constexpr int kDigitWords = kHasValues ? (kItems + 3) / 4 : 1;

    // Copies the values at the positions this thread ranks (its warp's slots)
    // to s.staged_values, asynchronously (the caller commits the group).
    __device__ __forceinline__ static void stage_values(Storage &s, const V *source, uint32_t warp_first, bool full,
                                                        uint32_t tile_keys) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = warp_first + i * 32;
            if (full || position < tile_keys) copy_to_shared_async(&s.staged_values[position], source + position);
        }
    }

    // Ranks the keys by their digit in window (publish(count): the tile's
    // count of this thread's digit, see BlockRadixRank) and places them in
    // s.exchange.keys in rank order. skewed: see BlockRadixRank::rank.
    template <typename Publish>
    __device__ __forceinline__ static void rank_keys(Storage &s, const K (&keys)[kItems], DigitWindow window,
                                                     uint32_t (&ranks)[kItems], uint32_t &digit_count,
                                                     uint32_t &digit_exclusive, Publish &&publish,
                                                     bool skewed = false) {
        Rank::rank(
            s.rank, [&](int i) { return pass_digit<Shape::kMaskedDigits>(keys[i], window); }, ranks, digit_count,
            digit_exclusive, publish, nullptr, skewed);
#pragma unroll
        for (int i = 0; i < kItems; ++i) s.exchange.keys[ranks[i]] = keys[i];
    }

    // Places the values of this thread's slots at their ranks in
    // s.exchange.values (after a barrier: every key has left the buffer).
    __device__ __forceinline__ static void exchange_values(Storage &s, const V (&values)[kItems],
                                                           const uint32_t (&ranks)[kItems], uint32_t warp_first,
                                                           bool full, uint32_t tile_keys) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = warp_first + i * 32;
            if (full || position < tile_keys) s.exchange.values[ranks[i]] = values[i];
        }
    }

    // The keys of s.exchange.keys (digit order) this thread stores, at
    // positions threadIdx.x + i * kThreads: store(position, key, digit) for
    // each key of the tile, its digit kept in out_digits for the values.
    template <typename Store>
    __device__ __forceinline__ static void scatter_keys(const Storage &s, DigitWindow window, bool full, uint32_t tile_keys,
                                                        uint32_t (&out_digits)[kDigitWords], Store &&store) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = threadIdx.x + i * kThreads;
            if (full || position < tile_keys) {
                const K key = s.exchange.keys[position];
                const uint32_t digit = pass_digit<Shape::kMaskedDigits>(key, window);
                store(position, key, digit);
                if constexpr (kHasValues) out_digits[i / 4] |= digit << (8 * (i % 4));
            }
        }
    }

    // The values at the positions scatter_keys stored, with the same digits:
    // store(position, digit) for each (the value is s.exchange.values[position]).
    template <typename Store>
    __device__ __forceinline__ static void scatter_values(bool full, uint32_t tile_keys,
                                                          const uint32_t (&out_digits)[kDigitWords], Store &&store) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = threadIdx.x + i * kThreads;
            if (full || position < tile_keys) store(position, (out_digits[i / 4] >> (8 * (i % 4))) & 0xffu);
        }
    }
};

}  // namespace radix_detail
}  // namespace gpuprim::cuda
