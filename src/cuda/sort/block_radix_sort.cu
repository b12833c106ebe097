// SPDX-License-Identifier: Apache-2.0
// Small inputs, radix style: one block holds up to 4096 radix keys (4 a
// thread) and sorts them by 8-bit digits from the lowest, each pass ranking
// the digits stably (block/block_radix_rank.cuh, as a Onesweep tile does)
// and moving the keys, with their input positions when values follow, to
// their ranks in shared memory. Passes whose digit is the same for every
// key are skipped (one block-wide AND/OR of the keys first), so keys with
// few live bits sort in fewer passes. Values are gathered by position from
// a shared-memory copy at the end, so in-place calls are safe: everything is
// read before anything is written. A bit range [begin_bit, end_bit) ranks
// those bits only.
//
// Positions past the count are padding: their keys (all ones) and places
// (the tile's last ones) are known, so they are left out of the ranking,
// and whole warps of padding do no atomics.
#include "cuda/sort/block_sort.cuh"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/key_transform.h"
#include "cuda/block/block_radix_rank.cuh"
#include "cuda/sort/sort_policy.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace gpuprim::cuda {
namespace {

constexpr int kItems = kBlockSortItemsPerThread;
constexpr uint32_t kDigitBits = 8;

struct BlockRadixArgs {
    const void *keys_in;
    void *keys_out;         // NULL: an argsort that does not return the keys
    const void *values_in;  // NULL with value_bytes: an argsort (the values are the positions)
    void *values_out;
    uint32_t value_bytes;
    uint32_t count;
    uint32_t begin_bit, end_bit;
    KeyKind kind;
    bool descending;
};

template <int kThreads>
using Rank = BlockRadixRank<kThreads, kItems, RadixMatch::AtomicOr>;

// Dynamic shared memory: the rank's storage, the keys, their positions
// (kWithPositions), the staged values (value_bytes each).
template <typename K, int kThreads>
struct BlockRadixLayout {
    static constexpr uint32_t kTile = uint32_t(kThreads) * kItems;
    static constexpr size_t kRankBytes = (sizeof(typename Rank<kThreads>::Storage) + 15) / 16 * 16;
    static constexpr size_t kKeysBytes = (size_t(kTile) * sizeof(K) + 15) / 16 * 16;
    static constexpr size_t kPositionsBytes = size_t(kTile) * sizeof(uint16_t);
    static size_t bytes(bool with_positions, uint32_t count, uint32_t value_bytes) {
        return size_t(CheckedSize(count, "the block radix sort's staged values")
                          .times(value_bytes)
                          .plus(kRankBytes + kKeysBytes + (with_positions ? kPositionsBytes : 0))
                          .value());
    }
};

// Bits in which the radix keys of the block differ: one block-wide AND and
// OR. Every thread gets the result.
template <typename K, int kThreads>
__device__ __forceinline__ K differing_bits(const K (&keys)[kItems], uint32_t valid_items, K (&scratch)[2][kThreads / 32]) {
    K all = K(~K(0)), any = K(0);
#pragma unroll
    for (int i = 0; i < kItems; ++i)
        if (uint32_t(i) < valid_items) {
            all = K(all & keys[i]);
            any = K(any | keys[i]);
        }
    using Word = std::conditional_t<sizeof(K) == 8, unsigned long long, uint32_t>;
    Word all_word = Word(all), any_word = Word(any);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        all_word &= __shfl_xor_sync(kFullWarpMask, all_word, offset);
        any_word |= __shfl_xor_sync(kFullWarpMask, any_word, offset);
    }
    const uint32_t warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0) {
        scratch[0][warp] = K(all_word);
        scratch[1][warp] = K(any_word);
    }
    __syncthreads();
    K block_all = K(~K(0)), block_any = K(0);
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) {
        block_all = K(block_all & scratch[0][w]);
        block_any = K(block_any | scratch[1][w]);
    }
    return K(block_all ^ block_any);
}

// Moves an element of value_bytes bytes (1, 2, 4 or 8).
__device__ __forceinline__ void copy_value(void *to, uint64_t to_index, const void *from, uint64_t from_index,
                                           uint32_t value_bytes) {
    switch (value_bytes) {
    case 1: static_cast<uint8_t *>(to)[to_index] = static_cast<const uint8_t *>(from)[from_index]; break;
    case 2: static_cast<uint16_t *>(to)[to_index] = static_cast<const uint16_t *>(from)[from_index]; break;
    case 4: static_cast<uint32_t *>(to)[to_index] = static_cast<const uint32_t *>(from)[from_index]; break;
    default: static_cast<uint64_t *>(to)[to_index] = static_cast<const uint64_t *>(from)[from_index]; break;
    }
}

__device__ __forceinline__ void store_position(void *to, uint64_t index, uint32_t position, uint32_t value_bytes) {
    if (value_bytes == 4) static_cast<uint32_t *>(to)[index] = position;
    else static_cast<uint64_t *>(to)[index] = position;
}

// K: the keys' unsigned type (their radix keys sort as unsigned).
// kWithPositions: values follow (given, or an argsort's positions).
template <typename K, int kThreads, bool kWithPositions>
__global__ void __launch_bounds__(kThreads) block_radix_sort_kernel(const BlockRadixArgs args) {
    using Layout = BlockRadixLayout<K, kThreads>;
    using RankT = Rank<kThreads>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    auto &rank_storage = *reinterpret_cast<typename RankT::Storage *>(shared_bytes);
    K *shared_keys = reinterpret_cast<K *>(shared_bytes + Layout::kRankBytes);
    uint16_t *positions = reinterpret_cast<uint16_t *>(shared_bytes + Layout::kRankBytes + Layout::kKeysBytes);
    unsigned char *staged_values =
        shared_bytes + Layout::kRankBytes + Layout::kKeysBytes + (kWithPositions ? Layout::kPositionsBytes : 0);
    __shared__ K reduce_scratch[2][kThreads / 32];

    // Warp-striped: item i of lane l in warp w is tile position
    // w * 32 * kItems + i * 32 + l (the rank keeps that order among equals).
    const uint32_t lane = radix_lane_id(), warp = threadIdx.x / 32;
    const uint32_t warp_first = warp * 32 * kItems + lane;
    const uint32_t count = args.count;
    const K *keys_in = static_cast<const K *>(args.keys_in);
    K keys[kItems];
    uint32_t valid_items = 0;  // items 0..valid_items-1 of this thread are keys, the rest padding
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
        const uint32_t position = warp_first + uint32_t(i) * 32;
        const bool valid = position < count;
        keys[i] = valid ? to_radix_key<K>(keys_in[position], args.kind, args.descending) : K(~K(0));
        valid_items += valid;
    }
    uint16_t item_positions[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) item_positions[i] = uint16_t(warp_first + uint32_t(i) * 32);
    if constexpr (kWithPositions) {
        if (args.values_in)
            for (uint32_t i = threadIdx.x; i < count; i += kThreads)
                copy_value(staged_values, i, args.values_in, i, args.value_bytes);
    }
    const K differing = differing_bits<K, kThreads>(keys, valid_items, reduce_scratch);  // its barrier: all read

    // The passes over [begin_bit, end_bit) whose digit varies.
    uint32_t live_passes = 0;
    for (uint32_t shift = args.begin_bit; shift < args.end_bit; shift += kDigitBits) {
        const uint32_t width = min(kDigitBits, args.end_bit - shift);
        if ((uint64_t(differing) >> shift) & ((1u << width) - 1u)) ++live_passes;
    }
    if (live_passes == 0) {  // already in order: the input order is the sorted one
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = warp_first + uint32_t(i) * 32;
            shared_keys[position] = keys[i];
            if constexpr (kWithPositions) positions[position] = uint16_t(position);
        }
        __syncthreads();
    }
    for (uint32_t shift = args.begin_bit; live_passes != 0; shift += kDigitBits) {
        const uint32_t width = min(kDigitBits, args.end_bit - shift);
        const uint32_t mask = (1u << width) - 1u;
        if (((uint64_t(differing) >> shift) & mask) == 0) continue;  // a constant digit: a stable no-op
        uint32_t ranks[kItems];
        uint32_t digit_count, digit_exclusive;
        RankT::rank(
            rank_storage, [&](int i) { return uint32_t(uint64_t(keys[i]) >> shift) & mask; }, ranks, digit_count,
            digit_exclusive, [](uint32_t) {}, nullptr, false, [&](int i) { return uint32_t(i) < valid_items; });
        // Padding keeps its place: the last ones, after every key.
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t place = uint32_t(i) < valid_items ? ranks[i] : warp_first + uint32_t(i) * 32;
            shared_keys[place] = keys[i];
            if constexpr (kWithPositions) positions[place] = item_positions[i];
        }
        __syncthreads();
        if (--live_passes == 0) break;
        // The next pass reads the tile in this order (the rank's first
        // barrier orders these reads before the next pass's stores).
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            keys[i] = shared_keys[warp_first + uint32_t(i) * 32];
            if constexpr (kWithPositions) item_positions[i] = positions[warp_first + uint32_t(i) * 32];
        }
    }

    K *keys_out = static_cast<K *>(args.keys_out);
    for (uint32_t i = threadIdx.x; i < count; i += kThreads) {
        if (keys_out) keys_out[i] = from_radix_key<K>(shared_keys[i], args.kind, args.descending);
        if constexpr (kWithPositions) {
            if (args.values_in) copy_value(args.values_out, i, staged_values, positions[i], args.value_bytes);
            else store_position(args.values_out, i, positions[i], args.value_bytes);
        }
    }
}

// 256 threads up to 1024 keys (the rank's least: a thread a digit), else
// 1024: two instantiations a key width, at most half a tile of padding past
// 1024 keys.
uint32_t threads_for(uint64_t count) { return count <= 256 * kItems ? 256 : 1024; }

template <typename K, int kThreads, bool kWithPositions>
void launch(const DeviceEnv &env, const BlockRadixArgs &args) {
    const size_t shared = BlockRadixLayout<K, kThreads>::bytes(kWithPositions, args.count,
                                                                kWithPositions && args.values_in ? args.value_bytes : 0);
    auto kernel = block_radix_sort_kernel<K, kThreads, kWithPositions>;
    if (resident_blocks(env, reinterpret_cast<const void *>(kernel), kThreads, shared, "block radix sort shared memory") == 0)
        fail(GPUPRIM_ERROR_INTERNAL, "block radix sort: %u keys do not fit this device's shared memory", args.count);
    if (env.measuring) return;
    kernel<<<1, kThreads, shared, env.stream>>>(args);
    check_launch("block radix sort launch");
}

template <typename K>
void launch_by_shape(const DeviceEnv &env, const BlockRadixArgs &args, bool with_positions) {
    const bool small = threads_for(args.count) == 256;
    if (with_positions) small ? launch<K, 256, true>(env, args) : launch<K, 1024, true>(env, args);
    else small ? launch<K, 256, false>(env, args) : launch<K, 1024, false>(env, args);
}

}  // namespace

bool block_radix_sort_fits(const DeviceEnv &env, const SortRequest &request) {
    if (request.count > uint64_t(kBlockSortMaxThreads) * kItems) return false;
    const bool small = threads_for(request.count) == 256, with_positions = request.value_bytes != 0;
    const uint32_t count = uint32_t(request.count);
    const uint32_t staged_bytes = request.values_in ? request.value_bytes : 0;
    // Dynamic and static shared memory of the kernel launch() would run.
    const size_t shared = dispatch_width(request.key_bytes, "block radix sort: unsupported key width", [&](auto key_bits) {
        using K = decltype(key_bits);
        return small ? BlockRadixLayout<K, 256>::bytes(with_positions, count, staged_bytes) + 2 * 8 * sizeof(K)
                     : BlockRadixLayout<K, 1024>::bytes(with_positions, count, staged_bytes) + 2 * 32 * sizeof(K);
    });
    return shared <= std::max<size_t>(48 * 1024, env.max_shared_per_block_optin);
}

void block_radix_sort(const DeviceEnv &env, const SortRequest &request) {
    BlockRadixArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.values_in = request.values_in;
    args.values_out = request.values_out;
    args.value_bytes = request.value_bytes;
    args.count = uint32_t(request.count);
    args.begin_bit = request.begin_bit;
    args.end_bit = sort_end_bit(request);
    args.kind = request.key_kind;
    args.descending = request.descending;
    dispatch_width(request.key_bytes, "block radix sort: unsupported key width", [&](auto key_bits) {
        launch_by_shape<decltype(key_bits)>(env, args, request.value_bytes != 0);
    });
}

}  // namespace gpuprim::cuda
