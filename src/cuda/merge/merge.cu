// SPDX-License-Identifier: Apache-2.0
// The stable merge of sorted runs (merge/merge.h). Rounds of pairwise
// merges: runs 0+1, 2+3, ... (an odd last run pairs with an empty one: a
// copy), ping-ponging between the output and the spare buffers; the rounds
// are counted first so that the last one writes the output. Every pair of a
// round is merged in one launch of two kernels, tiles of kTile outputs each
// (a tile belongs to one pair; the pairs' tiles are numbered in pair order):
// - partition: one thread per tile finds, by a merge-path binary search in
//   global memory, how many of the outputs before the tile come from the
//   pair's first run (ties: the first run first);
// - merge: a block per tile loads the tile's two input ranges into shared
//   memory, each thread finds its own split of its kItems outputs by the same
//   search in shared memory and merges them sequentially; keys are stored
//   from shared memory, values gathered from global memory by each output's
//   source position.
// Keys compare by their sort bits (core/key_transform.h); keys and values
// are carried as bits of their byte width. Indices are 64-bit throughout.
#include "cuda/merge/merge.h"

#include "core/error.h"
#include "core/key_transform.h"
#include "core/portable.h"
#include "cuda/util/check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuprim::cuda {
namespace merge_detail {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr uint64_t kTile = uint64_t(kThreads) * kItems;
constexpr uint64_t kMostBlocks = 1u << 30;  // grid limit; the kernels loop past it

// One pair of a round: runs [a_begin, b_begin) and [b_begin, b_end) of the
// source merge to [a_begin, b_end) of the destination; its tiles are
// first_tile .. first_tile + ceil((b_end - a_begin) / kTile) - 1 of the round.
struct MergePair {
    uint64_t a_begin, b_begin, b_end, first_tile;
};

struct KeyOrder {
    KeyKind kind;
    bool descending;
    uint32_t begin_bit, end_bit;
};

template <typename KeyBits>
__device__ __forceinline__ uint64_t bits_of(KeyBits key, const KeyOrder &order) {
    return sort_bits(to_radix_key<KeyBits>(key, order.kind, order.descending), order.begin_bit, order.end_bit);
}

// How many of the first d outputs of the stable merge of a[0, na) and
// b[0, nb) come from a (ties: a first).
template <typename KeyBits>
__device__ __forceinline__ uint64_t merge_path(const KeyBits *a, uint64_t na, const KeyBits *b, uint64_t nb,
                                               uint64_t d, const KeyOrder &order) {
    uint64_t low = d > nb ? d - nb : 0, high = d < na ? d : na;
    while (low < high) {
        const uint64_t middle = low + (high - low) / 2;
        if (bits_of(a[middle], order) <= bits_of(b[d - 1 - middle], order)) low = middle + 1;
        else high = middle;
    }
    return low;
}

// The pair a tile of the round belongs to: the last pair whose first_tile
// is at most tile (pairs without tiles share their first_tile with the next).
__device__ __forceinline__ uint32_t pair_of_tile(const MergePair *pairs, uint32_t pair_count, uint64_t tile) {
    uint32_t low = 0, high = pair_count;  // first pair with first_tile > tile
    while (low < high) {
        const uint32_t middle = low + (high - low) / 2;
        if (pairs[middle].first_tile <= tile) low = middle + 1;
        else high = middle;
    }
    return low - 1;
}

template <typename KeyBits>
__global__ void __launch_bounds__(kThreads)
    merge_partition_kernel(const KeyBits *keys, const MergePair *pairs, uint32_t pair_count, uint64_t tiles,
                           KeyOrder order, uint64_t *splits) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles; t += stride) {
        const MergePair pair = pairs[pair_of_tile(pairs, pair_count, t)];
        const uint64_t d = (t - pair.first_tile) * kTile;
        splits[t] = merge_path(keys + pair.a_begin, pair.b_begin - pair.a_begin, keys + pair.b_begin,
                               pair.b_end - pair.b_begin, d, order);
    }
}

template <typename KeyBits, typename ValueBits, bool kValues>
__global__ void __launch_bounds__(kThreads)
    merge_tiles_kernel(const KeyBits *keys_from, const ValueBits *values_from, KeyBits *keys_to,
                       ValueBits *values_to, const MergePair *pairs, uint32_t pair_count, uint64_t tiles,
                       const uint64_t *splits, KeyOrder order) {
    __shared__ KeyBits shared_keys[kTile];
    __shared__ uint32_t shared_sources[kValues ? kTile : 1];
    __shared__ MergePair shared_pair;
    for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        if (threadIdx.x == 0) shared_pair = pairs[pair_of_tile(pairs, pair_count, t)];
        __syncthreads();
        const MergePair pair = shared_pair;
        const uint64_t na = pair.b_begin - pair.a_begin, nb = pair.b_end - pair.b_begin;
        const uint64_t tile_in_pair = t - pair.first_tile;
        const uint64_t d0 = tile_in_pair * kTile;
        const uint64_t d1 = d0 + kTile < na + nb ? d0 + kTile : na + nb;
        const uint64_t i0 = splits[t], j0 = d0 - i0;
        const uint64_t i1 = d1 == na + nb ? na : splits[t + 1], j1 = d1 - i1;
        const uint32_t la = uint32_t(i1 - i0), lb = uint32_t(j1 - j0), length = la + lb;

        // The tile's ranges of the two runs, back to back.
        const KeyBits *a = keys_from + pair.a_begin + i0, *b = keys_from + pair.b_begin + j0;
        for (uint32_t e = threadIdx.x; e < length; e += kThreads) shared_keys[e] = e < la ? a[e] : b[e - la];
        __syncthreads();

        // This thread's outputs [diagonal, diagonal + kItems) of the tile.
        const uint32_t diagonal = min(uint32_t(threadIdx.x) * kItems, length);
        uint32_t i = uint32_t(merge_path(shared_keys, la, shared_keys + la, lb, diagonal, order));
        uint32_t j = diagonal - i;
        KeyBits merged[kItems];
        uint32_t sources[kItems];
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
            if (diagonal + q < length) {
                const bool take_b =
                    i == la || (j < lb && bits_of(shared_keys[la + j], order) < bits_of(shared_keys[i], order));
                const uint32_t source = take_b ? la + j : i;
                merged[q] = shared_keys[source];
                sources[q] = source;
                if (take_b) ++j;
                else ++i;
            }
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
            if (diagonal + q < length) {
                shared_keys[diagonal + q] = merged[q];
                if constexpr (kValues) shared_sources[diagonal + q] = sources[q];
            }
        }
        __syncthreads();

        const uint64_t out = pair.a_begin + d0;
        for (uint32_t e = threadIdx.x; e < length; e += kThreads) {
            keys_to[out + e] = shared_keys[e];
            if constexpr (kValues) {
                const uint32_t source = shared_sources[e];
                const uint64_t from = source < la ? pair.a_begin + i0 + source : pair.b_begin + j0 + (source - la);
                values_to[out + e] = values_from[from];
            }
        }
        __syncthreads();  // before the next tile overwrites shared memory
    }
}

inline unsigned blocks_for(uint64_t items) { return unsigned(std::max<uint64_t>(1, std::min(items, kMostBlocks))); }

// The rounds' pairs, all rounds back to back, and their tile counts.
struct MergePlan {
    std::vector<MergePair> pairs;
    std::vector<uint32_t> round_begin;  // pairs of round r: [round_begin[r], round_begin[r + 1])
    std::vector<uint64_t> round_tiles;
    uint64_t most_tiles = 0;
};

inline MergePlan plan_merge(const uint64_t *run_starts, uint32_t runs) {
    MergePlan plan;
    std::vector<uint64_t> starts(run_starts, run_starts + runs + 1);
    while (starts.size() > 2) {  // more than one run
        plan.round_begin.push_back(uint32_t(plan.pairs.size()));
        std::vector<uint64_t> next;
        uint64_t tiles = 0;
        for (size_t r = 0; r + 1 < starts.size(); r += 2) {
            const bool alone = r + 2 >= starts.size();
            const MergePair pair{starts[r], starts[r + 1], alone ? starts[r + 1] : starts[r + 2], tiles};
            tiles += ceil_div(pair.b_end - pair.a_begin, kTile);
            plan.pairs.push_back(pair);
            next.push_back(pair.a_begin);
        }
        next.push_back(starts.back());
        starts.swap(next);
        plan.round_tiles.push_back(tiles);
        plan.most_tiles = std::max(plan.most_tiles, tiles);
    }
    plan.round_begin.push_back(uint32_t(plan.pairs.size()));
    return plan;
}

inline uint64_t aligned_256(uint64_t bytes) { return (bytes + 255) & ~uint64_t(255); }

template <typename KeyBits, typename ValueBits, bool kValues>
void merge_by_width(const DeviceEnv &env, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                    void *spare_keys, void *spare_values) {
    const uint64_t n = request.count;
    if (n == 0) return;
    if (runs <= 1) {
        check(cudaMemcpyAsync(request.keys_out, request.keys_in, n * sizeof(KeyBits), cudaMemcpyDeviceToDevice,
                              env.stream),
              "merge_sorted_runs copy of one run's keys");
        if (kValues)
            check(cudaMemcpyAsync(request.values_out, request.values_in, n * sizeof(ValueBits),
                                  cudaMemcpyDeviceToDevice, env.stream),
                  "merge_sorted_runs copy of one run's values");
        return;
    }
    const MergePlan plan = plan_merge(run_starts, runs);
    const uint32_t rounds = uint32_t(plan.round_tiles.size());
    const uint64_t pair_bytes = aligned_256(plan.pairs.size() * sizeof(MergePair));
    const uint64_t split_bytes = aligned_256((plan.most_tiles + 1) * sizeof(uint64_t));
    char *block = static_cast<char *>(env.workspace->reserve(pair_bytes + split_bytes));
    auto *pairs = reinterpret_cast<MergePair *>(block);
    auto *splits = reinterpret_cast<uint64_t *>(block + pair_bytes);
    check(cudaMemcpyAsync(pairs, plan.pairs.data(), plan.pairs.size() * sizeof(MergePair), cudaMemcpyHostToDevice,
                          env.stream),
          "merge_sorted_runs upload of the merge plan");

    const KeyOrder order{request.key_kind, request.descending, request.begin_bit, sort_end_bit(request)};
    const auto *keys_from = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_from = static_cast<const ValueBits *>(request.values_in);
    for (uint32_t round = 0; round < rounds; ++round) {
        // The last round writes the output; the ones before alternate.
        const bool to_out = (rounds - 1 - round) % 2 == 0;
        auto *keys_to = static_cast<KeyBits *>(to_out ? request.keys_out : spare_keys);
        auto *values_to = static_cast<ValueBits *>(to_out ? request.values_out : spare_values);
        const uint64_t tiles = plan.round_tiles[round];
        const MergePair *round_pairs = pairs + plan.round_begin[round];
        const uint32_t pair_count = plan.round_begin[round + 1] - plan.round_begin[round];
        if (tiles > 0) {
            merge_partition_kernel<KeyBits><<<blocks_for(ceil_div(tiles, uint64_t(kThreads))), kThreads, 0,
                                              env.stream>>>(keys_from, round_pairs, pair_count, tiles, order, splits);
            check_launch("merge_sorted_runs partition launch");
            merge_tiles_kernel<KeyBits, ValueBits, kValues><<<blocks_for(tiles), kThreads, 0, env.stream>>>(
                keys_from, values_from, keys_to, values_to, round_pairs, pair_count, tiles, splits, order);
            check_launch("merge_sorted_runs merge launch");
        }
        keys_from = keys_to;
        values_from = values_to;
    }
}

template <typename KeyBits>
void merge_by_value_width(const DeviceEnv &env, const SortRequest &request, const uint64_t *run_starts,
                          uint32_t runs, void *spare_keys, void *spare_values) {
    switch (request.value_bytes) {
    case 0: return merge_by_width<KeyBits, uint8_t, false>(env, request, run_starts, runs, spare_keys, spare_values);
    case 1: return merge_by_width<KeyBits, uint8_t, true>(env, request, run_starts, runs, spare_keys, spare_values);
    case 2: return merge_by_width<KeyBits, uint16_t, true>(env, request, run_starts, runs, spare_keys, spare_values);
    case 4: return merge_by_width<KeyBits, uint32_t, true>(env, request, run_starts, runs, spare_keys, spare_values);
    case 8: return merge_by_width<KeyBits, uint64_t, true>(env, request, run_starts, runs, spare_keys, spare_values);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: %u-byte values", request.value_bytes);
}

}  // namespace merge_detail

void merge_sorted_runs(const DeviceEnv &env, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                       void *spare_keys, void *spare_values) {
    using namespace merge_detail;
    if (request.values_are_indices) fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: generated indices");
    if (runs == 0 && request.count == 0) return;
    if (runs == 0 || run_starts[0] != 0 || run_starts[runs] != request.count)
        fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: the runs do not cover the %llu elements",
             static_cast<unsigned long long>(request.count));
    for (uint32_t r = 0; r < runs; ++r)
        if (run_starts[r + 1] < run_starts[r])
            fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: run %u ends before it starts", r);
    switch (request.key_bytes) {
    case 1: return merge_by_value_width<uint8_t>(env, request, run_starts, runs, spare_keys, spare_values);
    case 2: return merge_by_value_width<uint16_t>(env, request, run_starts, runs, spare_keys, spare_values);
    case 4: return merge_by_value_width<uint32_t>(env, request, run_starts, runs, spare_keys, spare_values);
    case 8: return merge_by_value_width<uint64_t>(env, request, run_starts, runs, spare_keys, spare_values);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: %u-byte keys", request.key_bytes);
}

}  // namespace gpuprim::cuda
