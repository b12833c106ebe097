// SPDX-License-Identifier: Apache-2.0
// The stable merge of sorted runs (merge/merge.h). Rounds of pairwise
// merges: runs 0+1, 2+3, ... (an odd last run pairs with an empty one: a
// copy), ping-ponging between the output and the spare buffers; the rounds
// are counted first so that the last one writes the output. Every pair of a
// round is merged in one launch of two kernels, tiles of Shape::kTile
// outputs each (a tile belongs to one pair; the pairs' tiles are numbered in
// pair order):
// - partition: one thread per tile finds, by a merge-path binary search in
//   global memory, how many of the outputs before the tile come from the
//   pair's first run (ties: the first run first);
// - merge: a block per tile loads the tile's two input ranges (keys as
//   radix keys, core/key_transform.h, so a comparison is a shift and a
//   mask; values as they are) into shared memory, each thread finds its own
//   split of its kItems outputs by the same search in shared memory and
//   merges them in registers, then the outputs go back through shared
//   memory in output order and out to global memory coalesced.
// Keys and values are carried as bits of their byte width. Indices are
// 64-bit throughout. gpuprim_merge (merge_two) is one such round of one pair
// whose second run is read from a buffer of its own.
#include "cuda/merge/merge.h"

#include "core/checked_size.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/portable.h"
#include "cuda/util/check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace gpuprim::cuda {
namespace merge_detail {

// A tile: 512 threads of kItems outputs each, 15 for 4-byte elements and
// fewer for wider ones (keys and values together), as CUB's DeviceMerge
// tunes sm_80 and sm_90; registers for 3 blocks an SM. Measured on an H100
// (tools/kernel_check/check_merge 28 2: 2^28 u32 keys in two runs, CUB 3.6's
// DeviceMerge on the same buffers): keys 884 us (CUB 784), pairs u32/u32
// 1757 us (CUB 1575). The former 256 x 8 tile, with keys compared through
// the key transform at every step, a branching serial merge and values
// gathered from global memory, took 1648 and 2289 us; the same kernel with
// registers for 2 blocks an SM 1055 and 2052, for 4 (spilling) 1042 and 2100.
// What is left is instructions (ncu, 2^26 keys: 144 M against CUB's 80 M).
template <typename KeyBits, typename ValueBits, bool kValues>
struct MergeShape {
    static constexpr int kThreads = 512;
    static constexpr int kMinBlocks = 3;  // per SM: what __launch_bounds__ asks the register allocator for
    static constexpr int kElementBytes = int(sizeof(KeyBits)) + (kValues ? int(sizeof(ValueBits)) : 0);
    static constexpr int kItems = kElementBytes >= 60 ? 1 : (60 / kElementBytes < 15 ? 60 / kElementBytes : 15);
    static constexpr uint64_t kTile = uint64_t(kThreads) * kItems;
};

constexpr int kPartitionThreads = 256;
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
    // Unsigned keys, ascending, every bit: keys compare as they are (the
    // tiles' kernel skips the transform and the window: ncu, 2^24 u32 keys,
    // found it bound by instructions, 1.9x CUB's).
    bool plain;
};

inline KeyOrder key_order(KeyKind kind, bool descending, uint32_t begin_bit, uint32_t end_bit, uint32_t key_bytes) {
    const bool whole = begin_bit == 0 && end_bit == key_bytes * 8;
    return {kind, descending, begin_bit, end_bit, kind == KeyKind::Unsigned && !descending && whole};
}

template <typename KeyBits>
__device__ __forceinline__ uint64_t bits_of(KeyBits key, const KeyOrder &order) {
    return sort_bits(to_radix_key<KeyBits>(key, order.kind, order.descending), order.begin_bit, order.end_bit);
}

// The sort bits of a radix key already in shared memory: a shift and a mask.
template <typename KeyBits>
struct RadixWindow {
    uint32_t begin_bit;
    KeyBits mask;
    __device__ __forceinline__ KeyBits operator()(KeyBits radix_key) const {
        return KeyBits(radix_key >> begin_bit) & mask;
    }
};

template <typename KeyBits>
__device__ __forceinline__ RadixWindow<KeyBits> radix_window(const KeyOrder &order) {
    const uint32_t width = order.end_bit - order.begin_bit;
    const KeyBits all = KeyBits(~KeyBits(0));
    return {order.begin_bit, width >= sizeof(KeyBits) * 8 ? all : KeyBits((uint64_t(1) << width) - 1)};
}

// How many of the first d outputs of the stable merge of radix keys a[0, na)
// and b[0, nb) (shared memory) come from a (ties: a first).
template <typename KeyBits, typename View>
__device__ __forceinline__ uint32_t merge_path_shared(const KeyBits *a, uint32_t na, const KeyBits *b, uint32_t nb,
                                                      uint32_t d, const View &view) {
    uint32_t low = d > nb ? d - nb : 0, high = d < na ? d : na;
    while (low < high) {
        const uint32_t middle = (low + high) / 2;
        if (view.compared(a[middle]) <= view.compared(b[d - 1 - middle])) low = middle + 1;
        else high = middle;
    }
    return low;
}

// How a tile sees keys: loaded as radix keys and compared through the
// window, or (kPlain, KeyOrder::plain) as they are.
template <typename KeyBits, bool kPlain>
struct KeyView {
    KeyOrder order;
    RadixWindow<KeyBits> window;
    __device__ __forceinline__ KeyBits loaded(KeyBits key) const {
        if constexpr (kPlain) return key;
        else return to_radix_key<KeyBits>(key, order.kind, order.descending);
    }
    __device__ __forceinline__ KeyBits stored(KeyBits radix_key) const {
        if constexpr (kPlain) return radix_key;
        else return from_radix_key<KeyBits>(radix_key, order.kind, order.descending);
    }
    __device__ __forceinline__ KeyBits compared(KeyBits radix_key) const {
        if constexpr (kPlain) return radix_key;
        else return window(radix_key);
    }
};

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

// A round's pairs: a table in device memory, or (gpuprim_merge's one pair)
// the pair itself, passed by value so that no upload precedes the kernels.
struct MergePairs {
    const MergePair *table;  // nullptr: only `one`
    uint32_t count;
    MergePair one;

    // The pair a tile of the round belongs to: the last pair whose
    // first_tile is at most tile (pairs without tiles share their first_tile
    // with the next).
    __device__ __forceinline__ MergePair of_tile(uint64_t tile) const {
        if (!table) return one;
        uint32_t low = 0, high = count;  // first pair with first_tile > tile
        while (low < high) {
            const uint32_t middle = low + (high - low) / 2;
            if (table[middle].first_tile <= tile) low = middle + 1;
            else high = middle;
        }
        return table[low - 1];
    }
};

template <typename KeyBits, uint64_t kTile>
__global__ void __launch_bounds__(kPartitionThreads)
    merge_partition_kernel(const KeyBits *keys, const KeyBits *keys_b, uint64_t b_origin, const MergePairs pairs,
                           uint64_t tiles, KeyOrder order, uint64_t *splits) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles; t += stride) {
        const MergePair pair = pairs.of_tile(t);
        const uint64_t d = (t - pair.first_tile) * kTile;
        splits[t] = merge_path(keys + pair.a_begin, pair.b_begin - pair.a_begin, keys_b + (pair.b_begin - b_origin),
                               pair.b_end - pair.b_begin, d, order);
    }
}

// What a round's tiles read and write (run b of a pair read at keys_b +
// (b_begin - b_origin), values_b likewise).
template <typename KeyBits, typename ValueBits>
struct MergeTileArgs {
    const KeyBits *keys_from;
    const ValueBits *values_from;
    const KeyBits *keys_b_from;
    const ValueBits *values_b_from;
    uint64_t b_origin;
    KeyBits *keys_to;
    ValueBits *values_to;
    const uint64_t *splits;
};

template <typename KeyBits, typename ValueBits, bool kValues>
struct MergeTileStorage {
    using Shape = MergeShape<KeyBits, ValueBits, kValues>;
    KeyBits keys[Shape::kTile + 1];  // + 1: the merge's read past the tile's last key
    ValueBits values[kValues ? Shape::kTile + 1 : 1];
    MergePair pair;
};

// Tile t of pair `pair`: load its two input ranges to shared memory, merge
// each thread's kItems outputs in registers, store them in output order.
template <bool kValues, typename KeyBits, typename ValueBits, typename View>
__device__ __forceinline__ void merge_tile(const MergeTileArgs<KeyBits, ValueBits> &args,
                                           MergeTileStorage<KeyBits, ValueBits, kValues> &s, const MergePair &pair,
                                           uint64_t t, const View &view) {
    using Shape = MergeShape<KeyBits, ValueBits, kValues>;
    constexpr int kThreads = Shape::kThreads, kItems = Shape::kItems;
    constexpr uint64_t kTile = Shape::kTile;
    const uint64_t na = pair.b_begin - pair.a_begin, nb = pair.b_end - pair.b_begin;
    const uint64_t d0 = (t - pair.first_tile) * kTile;
    const uint64_t d1 = d0 + kTile < na + nb ? d0 + kTile : na + nb;
    const uint64_t i0 = args.splits[t], j0 = d0 - i0;
    const uint64_t i1 = d1 == na + nb ? na : args.splits[t + 1];
    // Sorted runs: la + lb = d1 - d0. On runs that are not sorted (a
    // gpuprim_merge caller's error) the splits need not increase: the
    // ranges are clamped to the tile and the runs, so no read or write
    // leaves them (the tile may then write fewer outputs).
    const uint64_t tile_length = d1 - d0;
    const uint64_t a_room = na - i0, b_room = nb - j0;
    uint64_t la64 = i1 > i0 ? i1 - i0 : 0;
    la64 = la64 < tile_length ? la64 : tile_length;
    la64 = la64 < a_room ? la64 : a_room;
    const uint64_t lb64 = tile_length - la64 < b_room ? tile_length - la64 : b_room;
    const uint32_t la = uint32_t(la64), lb = uint32_t(lb64), length = la + lb;

    // Load: the tile's ranges of the two runs back to back (a thread's
    // loads all issued before the first is stored).
    {
        const KeyBits *a = args.keys_from + pair.a_begin + i0;
        const KeyBits *b = args.keys_b_from + (pair.b_begin - args.b_origin) + j0;
        KeyBits loaded[kItems];
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
            const uint32_t e = uint32_t(q) * kThreads + threadIdx.x;
            if (e < length) loaded[q] = e < la ? a[e] : b[e - la];
        }
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
            const uint32_t e = uint32_t(q) * kThreads + threadIdx.x;
            if (e < length) s.keys[e] = view.loaded(loaded[q]);
        }
    }
    if constexpr (kValues) {
        const ValueBits *va = args.values_from + pair.a_begin + i0;
        const ValueBits *vb = args.values_b_from + (pair.b_begin - args.b_origin) + j0;
        ValueBits loaded[kItems];
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
            const uint32_t e = uint32_t(q) * kThreads + threadIdx.x;
            if (e < length) loaded[q] = e < la ? va[e] : vb[e - la];
        }
#pragma unroll
        for (int q = 0; q < kItems; ++q) {
            const uint32_t e = uint32_t(q) * kThreads + threadIdx.x;
            if (e < length) s.values[e] = loaded[q];
        }
    }
    __syncthreads();

    // Merge: this thread's outputs [diagonal, diagonal + kItems) of the
    // tile, in registers. Branch free: the two candidates stay in
    // registers, a step reads the key that replaces the one taken (at most
    // at the tile's end: s.keys has a spare slot there, and the key read past
    // a run is never taken); past the tile's outputs the indices stop.
    const uint32_t diagonal = min(uint32_t(threadIdx.x) * kItems, length);
    uint32_t i = merge_path_shared(s.keys, la, s.keys + la, lb, diagonal, view);
    uint32_t j = diagonal - i;
    KeyBits key_a = s.keys[i], key_b = s.keys[la + j];
    KeyBits compared_a = view.compared(key_a), compared_b = view.compared(key_b);
    KeyBits merged[kItems];
    ValueBits merged_values[kValues ? kItems : 1];
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
        const bool take_b = j < lb && (i >= la || compared_b < compared_a);
        merged[q] = take_b ? key_b : key_a;
        if constexpr (kValues) merged_values[q] = s.values[take_b ? la + j : i];
        j += take_b;
        i += !take_b && i < la;
        const KeyBits next = s.keys[take_b ? la + j : i];
        const KeyBits next_compared = view.compared(next);
        key_a = take_b ? key_a : next;
        compared_a = take_b ? compared_a : next_compared;
        key_b = take_b ? next : key_b;
        compared_b = take_b ? next_compared : compared_b;
    }
    __syncthreads();

    // Store: back through shared memory in output order, then out coalesced.
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
        if (diagonal + q < length) {
            s.keys[diagonal + q] = merged[q];
            if constexpr (kValues) s.values[diagonal + q] = merged_values[q];
        }
    }
    __syncthreads();
    const uint64_t out = pair.a_begin + d0;
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
        const uint32_t e = uint32_t(q) * kThreads + threadIdx.x;
        if (e < length) {
            args.keys_to[out + e] = view.stored(s.keys[e]);
            if constexpr (kValues) args.values_to[out + e] = s.values[e];
        }
    }
}

// kPlain: KeyOrder::plain, a kernel of its own (both views in one kernel
// spilled registers under the 40 that three blocks an SM leave).
template <typename KeyBits, typename ValueBits, bool kValues, bool kPlain>
__global__ void __launch_bounds__(MergeShape<KeyBits, ValueBits, kValues>::kThreads,
                                  MergeShape<KeyBits, ValueBits, kValues>::kMinBlocks)
    merge_tiles_kernel(const MergeTileArgs<KeyBits, ValueBits> args, const MergePairs pairs, uint64_t tiles,
                       KeyOrder order) {
    __shared__ MergeTileStorage<KeyBits, ValueBits, kValues> s;
    const KeyView<KeyBits, kPlain> view{order, radix_window<KeyBits>(order)};
    for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        if (threadIdx.x == 0) s.pair = pairs.of_tile(t);
        __syncthreads();
        const MergePair pair = s.pair;
        merge_tile<kValues>(args, s, pair, t, view);
        __syncthreads();  // before the next tile overwrites shared memory
    }
}

inline unsigned blocks_for(uint64_t items) { return unsigned(std::max<uint64_t>(1, std::min(items, kMostBlocks))); }

// One round: the partition, then the tiles. Run b of every pair is read at
// keys_b + (b_begin - b_origin) (values_b likewise): the source itself with
// b_origin 0, or a buffer of its own (gpuprim_merge: b_origin = count_a).
template <typename KeyBits, typename ValueBits, bool kValues>
void launch_round(const DeviceEnv &env, const KeyBits *keys_from, const ValueBits *values_from,
                  const KeyBits *keys_b, const ValueBits *values_b, uint64_t b_origin, KeyBits *keys_to,
                  ValueBits *values_to, const MergePairs &pairs, uint64_t tiles, uint64_t *splits,
                  const KeyOrder &order, const char *caller) {
    using Shape = MergeShape<KeyBits, ValueBits, kValues>;
    merge_partition_kernel<KeyBits, Shape::kTile>
        <<<blocks_for(ceil_div(tiles, uint64_t(kPartitionThreads))), kPartitionThreads, 0, env.stream>>>(
            keys_from, keys_b, b_origin, pairs, tiles, order, splits);
    check_launch(caller);
    const MergeTileArgs<KeyBits, ValueBits> args{keys_from, values_from, keys_b,  values_b,
                                                 b_origin,  keys_to,     values_to, splits};
    if (order.plain)
        merge_tiles_kernel<KeyBits, ValueBits, kValues, true>
            <<<blocks_for(tiles), Shape::kThreads, 0, env.stream>>>(args, pairs, tiles, order);
    else
        merge_tiles_kernel<KeyBits, ValueBits, kValues, false>
            <<<blocks_for(tiles), Shape::kThreads, 0, env.stream>>>(args, pairs, tiles, order);
    check_launch(caller);
}

// The rounds of the pairwise merge, walked from the caller's run_starts
// without host memory of their own: the distributed sort merges after the
// ranks traded their keys, where one rank failing an allocation alone would
// split them (its host memory is taken before the trade). Round r merges
// groups of 2^r input runs; group j starts at run_starts[min(j * 2^r, runs)],
// and pair i of the round is group 2i (a) with group 2i + 1 (b, empty for an
// odd group out).
class MergeRounds {
public:
    static constexpr uint32_t kMostRounds = 32;  // runs < 2^32

    MergeRounds(const uint64_t *run_starts, uint32_t runs, uint64_t tile) : starts_(run_starts), runs_(runs) {
        uint64_t pairs = 0;
        for (uint32_t groups = runs; groups > 1; groups = uint32_t(ceil_div(uint64_t(groups), uint64_t(2)))) {
            first_pair_[rounds_] = pairs;
            const uint32_t round_pairs = uint32_t(ceil_div(uint64_t(groups), uint64_t(2)));
            uint64_t tiles = 0;
            for (uint32_t i = 0; i < round_pairs; ++i) {
                const MergePair p = pair(rounds_, i, 0);
                tiles += ceil_div(p.b_end - p.a_begin, tile);
            }
            tiles_[rounds_] = tiles;
            pairs += round_pairs;
            ++rounds_;
        }
        first_pair_[rounds_] = pairs;
    }

    uint32_t rounds() const { return rounds_; }
    uint64_t total_pairs() const { return first_pair_[rounds_]; }
    uint64_t first_pair(uint32_t round) const { return first_pair_[round]; }
    uint32_t pairs_in(uint32_t round) const { return uint32_t(first_pair_[round + 1] - first_pair_[round]); }
    uint64_t tiles_in(uint32_t round) const { return tiles_[round]; }

    // Pair i of a round, its tiles numbered from first_tile.
    MergePair pair(uint32_t round, uint32_t i, uint64_t first_tile) const {
        return MergePair{group_start(round, 2 * uint64_t(i)), group_start(round, 2 * uint64_t(i) + 1),
                         group_start(round, 2 * uint64_t(i) + 2), first_tile};
    }

private:
    uint64_t group_start(uint32_t round, uint64_t group) const {
        return starts_[std::min<uint64_t>(group << round, runs_)];
    }

    const uint64_t *starts_;
    uint32_t runs_;
    uint32_t rounds_ = 0;
    uint64_t first_pair_[kMostRounds + 1] = {};
    uint64_t tiles_[kMostRounds] = {};
};

// Uploads every round's pairs (with their first tiles) to `to`, through a
// buffer on the stack: an asynchronous copy from pageable memory returns once
// the source is staged, so the buffer is free again when it returns.
inline void upload_merge_pairs(const DeviceEnv &env, const MergeRounds &rounds, uint64_t tile, MergePair *to) {
    constexpr uint32_t kStaged = 64;
    MergePair staged[kStaged];
    uint32_t filled = 0;
    uint64_t uploaded = 0;
    auto flush = [&] {
        check(cudaMemcpyAsync(to + uploaded, staged, filled * sizeof(MergePair), cudaMemcpyHostToDevice, env.stream),
              "merge_sorted_runs upload of the merge plan");
        uploaded += filled;
        filled = 0;
    };
    for (uint32_t round = 0; round < rounds.rounds(); ++round) {
        uint64_t first_tile = 0;
        for (uint32_t i = 0; i < rounds.pairs_in(round); ++i) {
            staged[filled] = rounds.pair(round, i, first_tile);
            first_tile += ceil_div(staged[filled].b_end - staged[filled].a_begin, tile);
            if (++filled == kStaged) flush();
        }
    }
    if (filled > 0) flush();
}

inline uint64_t aligned_256(uint64_t bytes) { return (bytes + 255) & ~uint64_t(255); }

template <typename KeyBits, typename ValueBits, bool kValues>
void merge_by_width(const DeviceEnv &env, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                    void *spare_keys, void *spare_values) {
    const uint64_t n = request.count;
    if (n == 0) return;
    if (runs <= 1) {
        if (env.measuring) return;
        check(cudaMemcpyAsync(request.keys_out, request.keys_in, n * sizeof(KeyBits), cudaMemcpyDeviceToDevice,
                              env.stream),
              "merge_sorted_runs copy of one run's keys");
        if (kValues)
            check(cudaMemcpyAsync(request.values_out, request.values_in, n * sizeof(ValueBits),
                                  cudaMemcpyDeviceToDevice, env.stream),
                  "merge_sorted_runs copy of one run's values");
        return;
    }
    using Shape = MergeShape<KeyBits, ValueBits, kValues>;
    const MergeRounds plan(run_starts, runs, Shape::kTile);
    // Sized by n and the number of runs, never by the runs' lengths (a round
    // has at most n / tile + one tile a pair), so that a query, given any
    // runs of the same count, measures what the merge takes (the distributed
    // sort reserves it before the ranks exchange their keys).
    const uint64_t most_tiles = ceil_div(n, Shape::kTile) + runs;
    const uint64_t pair_bytes = aligned_256(checked_mul(plan.total_pairs(), sizeof(MergePair), "merge pairs"));
    const uint64_t split_bytes = aligned_256(checked_mul(most_tiles + 1, sizeof(uint64_t), "merge splits"));
    char *block = static_cast<char *>(env.workspace->reserve(pair_bytes + split_bytes));
    if (env.measuring) return;
    auto *pairs = reinterpret_cast<MergePair *>(block);
    auto *splits = reinterpret_cast<uint64_t *>(block + pair_bytes);
    upload_merge_pairs(env, plan, Shape::kTile, pairs);

    const KeyOrder order =
        key_order(request.key_kind, request.descending, request.begin_bit, sort_end_bit(request), request.key_bytes);
    const auto *keys_from = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_from = static_cast<const ValueBits *>(request.values_in);
    const uint32_t rounds = plan.rounds();
    for (uint32_t round = 0; round < rounds; ++round) {
        // The last round writes the output; the ones before alternate.
        const bool to_out = (rounds - 1 - round) % 2 == 0;
        auto *keys_to = static_cast<KeyBits *>(to_out ? request.keys_out : spare_keys);
        auto *values_to = static_cast<ValueBits *>(to_out ? request.values_out : spare_values);
        const uint64_t tiles = plan.tiles_in(round);
        const MergePair *round_pairs = pairs + plan.first_pair(round);
        const uint32_t pair_count = plan.pairs_in(round);
        if (tiles > 0) {
            launch_round<KeyBits, ValueBits, kValues>(env, keys_from, values_from, keys_from, values_from, 0,
                                                      keys_to, values_to, MergePairs{round_pairs, pair_count, {}},
                                                      tiles, splits, order, "merge_sorted_runs");
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

// gpuprim_merge: one pair, a = [0, count_a) of keys_a and b = [count_a,
// count_a + count_b) read from keys_b, one round straight to the output.
template <typename KeyBits, typename ValueBits, bool kValues>
void merge_two_by_width(const DeviceEnv &env, const MergeRequest &request) {
    using Shape = MergeShape<KeyBits, ValueBits, kValues>;
    const uint64_t total = request.count_a + request.count_b;
    if (total == 0) return;
    const uint64_t tiles = ceil_div(total, Shape::kTile);
    const MergePairs pairs{nullptr, 1, MergePair{0, request.count_a, total, 0}};
    const uint64_t split_bytes = checked_mul(tiles + 1, sizeof(uint64_t), "merge splits");
    auto *splits = static_cast<uint64_t *>(env.workspace->reserve(split_bytes));
    if (env.measuring) return;
    const KeyOrder order = key_order(request.key_kind, request.descending, 0, request.key_bytes * 8, request.key_bytes);
    launch_round<KeyBits, ValueBits, kValues>(
        env, static_cast<const KeyBits *>(request.keys_a), static_cast<const ValueBits *>(request.values_a),
        static_cast<const KeyBits *>(request.keys_b), static_cast<const ValueBits *>(request.values_b),
        request.count_a, static_cast<KeyBits *>(request.keys_out), static_cast<ValueBits *>(request.values_out),
        pairs, tiles, splits, order, "merge launch");
}

template <typename KeyBits>
void merge_two_by_value_width(const DeviceEnv &env, const MergeRequest &request) {
    switch (request.value_bytes) {
    case 0: return merge_two_by_width<KeyBits, uint8_t, false>(env, request);
    case 1: return merge_two_by_width<KeyBits, uint8_t, true>(env, request);
    case 2: return merge_two_by_width<KeyBits, uint16_t, true>(env, request);
    case 4: return merge_two_by_width<KeyBits, uint32_t, true>(env, request);
    case 8: return merge_two_by_width<KeyBits, uint64_t, true>(env, request);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge: %u-byte values", request.value_bytes);
}

}  // namespace merge_detail

void merge_two(const DeviceEnv &env, const MergeRequest &request) {
    using namespace merge_detail;
    switch (request.key_bytes) {
    case 1: return merge_two_by_value_width<uint8_t>(env, request);
    case 2: return merge_two_by_value_width<uint16_t>(env, request);
    case 4: return merge_two_by_value_width<uint32_t>(env, request);
    case 8: return merge_two_by_value_width<uint64_t>(env, request);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge: %u-byte keys", request.key_bytes);
}

void merge_sorted_runs(const DeviceEnv &env, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                       void *spare_keys, void *spare_values) {
    using namespace merge_detail;
    if (!merge_runs_are_valid(request, run_starts, runs)) return;
    switch (request.key_bytes) {
    case 1: return merge_by_value_width<uint8_t>(env, request, run_starts, runs, spare_keys, spare_values);
    case 2: return merge_by_value_width<uint16_t>(env, request, run_starts, runs, spare_keys, spare_values);
    case 4: return merge_by_value_width<uint32_t>(env, request, run_starts, runs, spare_keys, spare_values);
    case 8: return merge_by_value_width<uint64_t>(env, request, run_starts, runs, spare_keys, spare_values);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: %u-byte keys", request.key_bytes);
}

}  // namespace gpuprim::cuda
