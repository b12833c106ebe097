// SPDX-License-Identifier: Apache-2.0
// The Onesweep pass kernel and its agent, OnesweepAgent (radix_sort.cuh has the design).
#pragma once

#include "core/backend.h"
#include "core/key_transform.h"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/sort/radix_tile.cuh"
#include "cuda/util/ptx.cuh"
#include "cuda/util/trace_clock.cuh"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace radix_detail {
// ---------------------------------------------------------------------------
// One Onesweep pass over one portion.

struct OnesweepArgs {
    const void *keys[3];    // by BufferId
    const void *values[3];  // by BufferId
    uint32_t *lookback;     // tiles * 256 words
    const uint64_t *base_in;  // 256 global offsets of the portion's first key of each digit
    uint64_t *base_out;       // the same for the next portion, or null
    const RadixPlan *plan;
    uint32_t *tile_ticket;    // a zeroed counter word
    uint64_t count;           // keys in all portions
    uint64_t portion_begin;
    uint32_t portion_keys;
    uint32_t tiles;           // per launch (padding tiles included)
    uint32_t pass;
    DigitWindow window;       // the pass's digit (packed pairs: of the key half)
    uint32_t portion, portions;
    KeyKind kind;
    bool descending;
    bool keys_discarded;  // an argsort's sorted keys are not wanted (SortRequest)
    // Segmented sorts (SegmentTiles): where each tile lies, and base_in holds
    // 256 offsets per segment.
    const SegmentTile *segment_tiles;
#if defined(GPUPRIM_SORT_TRACE)
    unsigned long long *trace;  // per-tile timestamps (the checkers' builds only)
#endif
};

// Tracing (tools/kernel_check only): globaltimer stamps of thread 0 per (pass, portion,
// tile) at fixed slots: 0 ticket known, 1 digit counts published, 2 offsets
// known (look-back done, after the barrier), 3 keys stored, 4 tile done,
// 5 look-back begins, 6 digit 0's look-back done; slot 7 holds digit 0's
// look-back statistics.
#if defined(GPUPRIM_SORT_TRACE)
#define GPUPRIM_SORT_TRACE_AT(args, tile, slot, value)                                                   \
    do {                                                                                               \
        if (threadIdx.x == 0 && (args).trace) {                                                        \
            const uint64_t launch_ = uint64_t((args).pass) * (args).portions + (args).portion;          \
            (args).trace[(launch_ * (args).tiles + (tile)) * 8 + (slot)] = (value);                     \
        }                                                                                              \
    } while (0)
#else
#define GPUPRIM_SORT_TRACE_AT(args, tile, slot, value) ((void)0)
#endif

// Reverses data[0, count) in place, every thread of the grid taking pairs.
template <typename T>
__device__ void reverse_in_place(T *data, uint64_t count) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count / 2; i += stride) {
        const T low = data[i];
        data[i] = data[count - 1 - i];
        data[count - 1 - i] = low;
    }
}

// Keys and values both in place or both not: the pairs can move as packed
// elements (PackedPairs below).
inline bool placed_alike(const SortRequest &request) {
    return (request.keys_out == request.keys_in) == (request.values_out == request.values_in);
}

// How a pass's pairs travel (radix_onesweep_kernel's Pairs).
// SeparateValues: keys, and values if any, in buffers of their own; the
// values follow the keys in a phase of their own.
struct SeparateValues {
    static constexpr bool kPacked = false;
    static constexpr bool kMakeValues = false;
    static constexpr bool kWideOutput = false;
};
// PackedPairs: 4-byte keys with 4-byte values sorted as one 8-byte element,
// the radix key in the high half and the value in the low half (K =
// uint64_t, kValueBytes = 0, digits from bit 32 up). The input and output
// buffers are split (args.keys[id] holds the 4-byte keys, args.values[id] the
// values), the temporary one holds the packed elements: a pass moves each
// pair with one exchange and no separate value phase. The first executed
// pass reads the input and the last writes the output, so key transforms
// only meet split buffers.
struct PackedPairs {
    static constexpr bool kPacked = true;
    static constexpr bool kMakeValues = false;
    static constexpr bool kWideOutput = false;
};
// PackedArgsort: packed pairs whose values are the keys' positions, made in
// the first pass (an argsort), not read.
struct PackedArgsort {
    static constexpr bool kPacked = true;
    static constexpr bool kMakeValues = true;
    static constexpr bool kWideOutput = false;
};
// PackedArgsortWide: an argsort with 8-byte indices of fewer than 2^32 keys.
// The positions travel as PackedArgsort's 4-byte halves, and the last
// executed pass writes them to the output as 8-byte indices: a pair sort of
// 8-byte values would move twice the bytes in every pass. The passes before
// it that write the split output buffer use the first half of its values as
// 4-byte words (the last pass never reads the output: argsorts are out of
// place).
struct PackedArgsortWide {
    static constexpr bool kPacked = true;
    static constexpr bool kMakeValues = true;
    static constexpr bool kWideOutput = true;
};

// Whether a sort's pairs travel packed: 4-byte keys with 4-byte values, both
// in place or both not; or an argsort (no values_in) of 4-byte keys with
// 8-byte indices whose positions fit 4 bytes (PackedArgsortWide).
inline bool packs_pairs(const SortRequest &request) {
    if (request.key_bytes != 4 || !placed_alike(request)) return false;
    if (request.value_bytes == 4) return true;
    return request.value_bytes == 8 && request.values_in == nullptr && request.count - 1 <= uint64_t(UINT32_MAX);
}

// Where a launch's tiles lie (radix_onesweep_kernel's Tiles).
// PortionTiles: tile t of one portion of a flat input (radix_sort.cuh).
struct PortionTiles {
    static constexpr bool kSegmented = false;
};
// SegmentTiles: every segment sorted on its own in the same launches
// (segmented_radix_sort.cu). Tiles never straddle segments: each tile's
// place and segment come from args.segment_tiles, its digit offsets are its
// segment's (base_in + segment * 256), and a segment's first tile starts a
// new look-back chain as tile 0 does (its successors' look-back stops at its
// inclusive words and never reads further back).
struct SegmentTiles {
    static constexpr bool kSegmented = true;
};

// One block's part of a Onesweep pass: it draws tiles by ticket and, for
// each, loads the keys (load_keys), stages the values (stage_values), ranks
// the keys by their digit while publishing the tile's digit counts
// (rank_keys), looks back over the earlier tiles' counts for the digits'
// global offsets (look_back), then scatters the keys (scatter_keys) and the
// values (scatter_values). Full tiles compile without bounds checks (kFull).
template <typename K, int kValueBytes, typename Shape, typename Pairs, typename Tiles>
struct OnesweepAgent {
    static constexpr bool kHasValues = kValueBytes != 0;
    static constexpr bool kPacked = Pairs::kPacked;
    static constexpr bool kSegmented = Tiles::kSegmented;
    static_assert(!kPacked || (std::is_same_v<K, uint64_t> && !kHasValues), "packed pairs are 8-byte keys");
    using V = RadixValue<kValueBytes>;
    using Tile = RadixTile<K, V, Shape, kHasValues, kPacked>;
    using Storage = typename Tile::Storage;
    using Rank = typename Tile::Rank;
    static constexpr int kThreads = Shape::kThreads;
    static constexpr int kItems = Shape::kItems;
    static constexpr uint32_t kTile = Shape::kTile;
    static constexpr bool kStage = Storage::kStage;
    static constexpr bool kPrefetch = Shape::kPrefetch;

    Storage &s;
    const OnesweepArgs &args;
    const PassPlan plan;
    const LookbackCodes codes;
    const K *const key_source;
    K *const key_destination;
    const V *const value_source;
    V *const value_destination;
    const DigitWindow window;
    // Packed pairs: which of the two buffers is split (the other is packed).
    const bool split_source;
    const bool split_destination;
    const uint32_t real_tiles;  // the others pad a short last portion
    const uint32_t warp_first;  // tile position of this thread's item 0

    // The tile in hand (its ticket, place, look-back words).
    uint32_t tile = 0;
    uint32_t parity = 0;  // which s.next_tile slot the next ticket goes to
    uint32_t tile_keys = 0;
    uint64_t tile_begin = 0;
    uint32_t *tile_lookback = nullptr;
    bool chain_start = false;  // publishes no aggregate, reads none

    __device__ __forceinline__ OnesweepAgent(Storage &storage, const OnesweepArgs &launch, const PassPlan &pass_plan)
        : s(storage),
          args(launch),
          plan(pass_plan),
          codes(lookback_codes(pass_plan.launch_index * launch.portions + launch.portion)),
          key_source(static_cast<const K *>(pick_buffer(launch.keys, pass_plan.key_source))),
          key_destination(static_cast<K *>(const_cast<void *>(pick_buffer(launch.keys, pass_plan.key_destination)))),
          value_source(static_cast<const V *>(pick_buffer(launch.values, pass_plan.value_source))),
          value_destination(static_cast<V *>(const_cast<void *>(pick_buffer(launch.values, pass_plan.value_destination)))),
          window{(kPacked ? 32u : 0u) + launch.window.shift, launch.window.mask},
          split_source(pass_plan.key_source != kTempBuffer),
          split_destination(pass_plan.key_destination != kTempBuffer),
          real_tiles(kSegmented ? launch.tiles : (launch.portion_keys + kTile - 1) / kTile),
          warp_first(threadIdx.x / 32 * 32 * kItems + radix_lane_id()) {}

    // An inactive pass of an input strictly against the order: the order
    // check wrote what is out of place; the first launch reverses what is in
    // place.
    __device__ __forceinline__ static void reverse_reversed_input(const OnesweepArgs &args) {
        if (kSegmented || args.pass != 0 || args.portion != 0 || args.plan->input_order != kReversed) return;
        using SplitKey = std::conditional_t<kPacked, uint32_t, K>;  // packed pairs: split buffers
        using SplitValue = std::conditional_t<kPacked, uint32_t, V>;
        if (args.keys[kInputBuffer] == args.keys[kOutputBuffer])
            reverse_in_place(static_cast<SplitKey *>(const_cast<void *>(args.keys[kOutputBuffer])), args.count);
        if ((kHasValues || kPacked) && args.values[kInputBuffer] != nullptr &&
            args.values[kInputBuffer] == args.values[kOutputBuffer])
            reverse_in_place(static_cast<SplitValue *>(const_cast<void *>(args.values[kOutputBuffer])), args.count);
    }

    // Every block draws tickets until one is past the last tile; the final
    // draw of the launch (tiles + blocks - 1) resets the counter.
    __device__ __forceinline__ uint32_t draw_ticket() const {
        const uint32_t ticket = atomicAdd(args.tile_ticket, 1u);
        if (ticket == args.tiles + gridDim.x - 1) atomicExch(args.tile_ticket, 0u);
        return ticket;
    }
    __device__ __forceinline__ uint32_t keys_of(uint32_t t) const {
        if constexpr (kSegmented) return args.segment_tiles[t].keys;
        else return min(kTile, args.portion_keys - t * kTile);
    }
    __device__ __forceinline__ uint64_t begin_of(uint32_t t) const {
        if constexpr (kSegmented) return args.segment_tiles[t].begin;
        else return args.portion_begin + uint64_t(t) * kTile;
    }

    // Copies tile t's keys to shared memory, each thread the positions it ranks.
    __device__ __forceinline__ void prefetch_keys(uint32_t t) {
        if (t < real_tiles) {
            const K *source = key_source + begin_of(t);
            const uint32_t count = keys_of(t);
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                if (position < count) copy_to_shared_async(&s.staged_keys[position], source + position);
            }
        }
        cp_async_commit();  // always a group, so wait counts stay fixed
    }

    // The tickets, in turn, until the launch's tiles are gone.
    __device__ __forceinline__ void run() {
        if constexpr (kPrefetch) {
            if (threadIdx.x == 0) s.next_tile[0] = draw_ticket();
            __syncthreads();
            tile = s.next_tile[0];
            prefetch_keys(tile);
        }
        while (true) {
            if constexpr (!kPrefetch) {
                __syncthreads();  // the previous tile is done with shared memory
                if (threadIdx.x == 0) s.next_tile[0] = draw_ticket();
                __syncthreads();
                tile = s.next_tile[0];
            }
            if (tile >= args.tiles) return;
            parity ^= 1;
            tile_lookback = args.lookback + uint64_t(tile) * kDigits;
            if (tile >= real_tiles) {
                publish_padding_tile();
                continue;
            }
            [[maybe_unused]] const uint32_t traced_tile = tile;
            GPUPRIM_SORT_TRACE_AT(args, traced_tile, 0, global_timer_ns());
            tile_keys = keys_of(tile);
            tile_begin = begin_of(tile);
            chain_start = tile == 0;
            if constexpr (kSegmented) chain_start = args.segment_tiles[tile].first != 0;
            if (tile_keys == kTile) process_tile<true>();
            else process_tile<false>();
            GPUPRIM_SORT_TRACE_AT(args, traced_tile, 4, global_timer_ns());
        }
    }

    // A padding tile of a short last portion: its words say "inclusive, none".
    __device__ __forceinline__ void publish_padding_tile() {
        for (int d = threadIdx.x; d < kDigits; d += kThreads) store_relaxed(tile_lookback + d, codes.inclusive << 30);
        if constexpr (kPrefetch) {
            if (threadIdx.x == 0) s.next_tile[parity] = draw_ticket();
            __syncthreads();
            tile = s.next_tile[parity];
        }
    }

    template <bool kFull>
    __device__ __forceinline__ void process_tile() {
        [[maybe_unused]] const uint32_t traced_tile = tile;
        if constexpr (kPrefetch) {
            if (threadIdx.x == 0) s.next_tile[parity] = draw_ticket();  // read after the next barrier
        }
        K keys[kItems];
        load_keys<kFull>(keys);
        const bool staged_in_pieces = stage_values<kFull>();
        to_rank_order<kFull>(keys);
        uint32_t ranks[kItems];
        uint32_t digit_count = 0, digit_exclusive = 0;
        rank_keys(keys, ranks, digit_count, digit_exclusive);
        GPUPRIM_SORT_TRACE_AT(args, traced_tile, 5, global_timer_ns());
        if (threadIdx.x < kDigits) look_back(digit_count, digit_exclusive);
        __syncthreads();
        GPUPRIM_SORT_TRACE_AT(args, traced_tile, 2, global_timer_ns());
        if constexpr (kPrefetch) {
            tile = s.next_tile[parity];
            prefetch_keys(tile);  // each thread overwrites only the keys it has read
        }
        [[maybe_unused]] uint32_t out_digits[Tile::kDigitWords] = {};
        scatter_keys<kFull>(out_digits);
        GPUPRIM_SORT_TRACE_AT(args, traced_tile, 3, global_timer_ns());
        if constexpr (kHasValues) scatter_values<kFull>(ranks, out_digits, staged_in_pieces);
    }

    // This thread's keys of the tile (warp-striped), as stored.
    template <bool kFull>
    __device__ __forceinline__ void load_keys(K (&keys)[kItems]) const {
        if constexpr (kPrefetch) {
            cp_async_wait<0>();  // this tile's keys
            read_warp_slots(keys, s.staged_keys, warp_first, kFull, tile_keys);
        } else if constexpr (kPacked) {
            if (split_source) load_split_pairs<kFull>(keys);
            else read_warp_slots(keys, key_source + tile_begin, warp_first, kFull, tile_keys);
        } else {
            read_warp_slots(keys, key_source + tile_begin, warp_first, kFull, tile_keys);
        }
    }

    // Packed pairs from split buffers: the radix key high, the value low.
    template <bool kFull>
    __device__ __forceinline__ void load_split_pairs(K (&keys)[kItems]) const {
        uint32_t high[kItems], low[kItems];
        const uint32_t *key_words = reinterpret_cast<const uint32_t *>(key_source) + tile_begin;
        read_warp_slots(high, key_words, warp_first, kFull, tile_keys);
        // An argsort's first pass (from the input) makes the values; a later
        // pass from the split output buffer reads them.
        if (Pairs::kMakeValues && plan.key_source == kInputBuffer) {
#pragma unroll
            for (int i = 0; i < kItems; ++i) low[i] = uint32_t(tile_begin + warp_first + i * 32);
        } else {
            const uint32_t *value_words =
                static_cast<const uint32_t *>(pick_buffer(args.values, plan.key_source)) + tile_begin;
            read_warp_slots(low, value_words, warp_first, kFull, tile_keys);
        }
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t radix_high =
                plan.transform_in ? to_radix_key<uint32_t>(high[i], args.kind, args.descending) : high[i];
            keys[i] = (uint64_t(radix_high) << 32) | low[i];
        }
    }

    // The values' copies go out after the key loads: the keys are needed
    // first. Values of a full tile whose source is 16-byte aligned are
    // staged in 16-byte pieces (a quarter of the copy instructions of one per
    // 4-byte value); any thread may then read any value, after a barrier
    // (returns true). Otherwise, and always with kPrefetch (whose next tile
    // starts staging without a barrier), each thread copies exactly the
    // values it will read.
    template <bool kFull>
    __device__ __forceinline__ bool stage_values() {
        bool staged_in_pieces = false;
        if constexpr (kStage) {
            const V *source = value_source + tile_begin;
            if constexpr (kFull && !kPrefetch) {
                staged_in_pieces = reinterpret_cast<uintptr_t>(source) % kValuePieceBytes == 0;
            }
            if (staged_in_pieces) {
                constexpr int kPieceValues = kValuePieceBytes / int(sizeof(V));
                static_assert(kTile % (kThreads * kPieceValues) == 0, "whole pieces per thread");
#pragma unroll
                for (int i = 0; i < int(kTile) / (kThreads * kPieceValues); ++i) {
                    const uint32_t first = (threadIdx.x + i * kThreads) * kPieceValues;
                    copy_piece_to_shared_async(&s.staged_values[first], source + first);
                }
            } else {
                Tile::stage_values(s, source, warp_first, kFull, tile_keys);
            }
            cp_async_commit();
        }
        return staged_in_pieces;
    }

    // Radix keys (the first executed pass transforms); the missing keys of a
    // short tile rank last (largest digit, last position).
    template <bool kFull>
    __device__ __forceinline__ void to_rank_order(K (&keys)[kItems]) const {
        if (!kPacked && plan.transform_in) {
#pragma unroll
            for (int i = 0; i < kItems; ++i) keys[i] = to_radix_key<K>(keys[i], args.kind, args.descending);
        }
        if constexpr (!kFull) {
#pragma unroll
            for (int i = 0; i < kItems; ++i)
                if (warp_first + i * 32 >= tile_keys) keys[i] = ~K(0);
        }
    }

    // Ranks the keys into s.exchange.keys; threads < 256 publish their
    // digit's tile count for the later tiles' look-back as soon as it is known.
    __device__ __forceinline__ void rank_keys(const K (&keys)[kItems], uint32_t (&ranks)[kItems],
                                              uint32_t &digit_count, uint32_t &digit_exclusive) {
        auto publish = [&](uint32_t count) {
            if (!chain_start) store_relaxed(tile_lookback + threadIdx.x, (codes.aggregate << 30) | count);
            GPUPRIM_SORT_TRACE_AT(args, tile, 1, global_timer_ns());
        };
        if constexpr (Shape::kEarlyCounts && !kHasValues) {
            // Each key goes to the exchange as soon as its rank is final (no
            // rank array held: fewer live registers).
            auto rank_digit = [&](int i) { return pass_digit<Shape::kMaskedDigits>(keys[i], window); };
            // Packed pairs spill more with the one-digit check (sm_90, 384x22: STACK 8 -> 24).
            Rank::template rank<!kPacked>(
                s.rank, rank_digit, ranks, digit_count, digit_exclusive, publish,
                [&](int i, uint32_t rank) { s.exchange.keys[rank] = keys[i]; }, plan.skewed != 0);
        } else {
            Tile::rank_keys(s, keys, window, ranks, digit_count, digit_exclusive, publish, plan.skewed != 0);
        }
    }

    // Thread `digit` (< 256): the digit's offset before this tile (look-back),
    // published as inclusive, and the destination addresses of tile position
    // 0 of the digit; the last real tile hands the next portion its offsets.
    __device__ __forceinline__ void look_back(uint32_t digit_count, uint32_t digit_exclusive) {
        const uint32_t digit = threadIdx.x;
        uint64_t base_in;
        if constexpr (kSegmented) base_in = args.base_in[uint64_t(args.segment_tiles[tile].segment) * kDigits + digit];
        else base_in = args.base_in[digit];
        [[maybe_unused]] uint64_t stats = 0;
        const uint32_t before =
            !chain_start ? lookback_exclusive<Shape::kLookbackWindow>(args.lookback, tile, digit, codes, &stats) : 0u;
        store_relaxed(tile_lookback + digit, (codes.inclusive << 30) | (before + digit_count));
        GPUPRIM_SORT_TRACE_AT(args, tile, 6, global_timer_ns());
        GPUPRIM_SORT_TRACE_AT(args, tile, 7, stats);
        const uint64_t base = base_in + before;
        const uint64_t first_index = base - digit_exclusive;  // of tile position 0, modulo 2^64
        if constexpr (kPacked) {
            // Split: 4-byte keys and values; packed: 8-byte elements.
            s.key_address[digit] =
                reinterpret_cast<uint64_t>(key_destination) + first_index * (split_destination ? 4 : 8);
            const uint64_t value_bytes = Pairs::kWideOutput && plan.transform_out ? 8 : 4;
            s.value_address[digit] =
                reinterpret_cast<uint64_t>(pick_buffer(args.values, plan.key_destination)) + first_index * value_bytes;
        } else {
            s.key_address[digit] = reinterpret_cast<uint64_t>(key_destination) + first_index * sizeof(K);
            if constexpr (kHasValues)
                s.value_address[digit] = reinterpret_cast<uint64_t>(value_destination) + first_index * sizeof(V);
        }
        if (args.base_out != nullptr && tile == real_tiles - 1) args.base_out[digit] = base + digit_count;
    }

    // Stores the ranked keys at their digits' addresses (the last executed
    // pass transforms back; packed pairs into a split buffer store both halves).
    template <bool kFull>
    __device__ __forceinline__ void scatter_keys(uint32_t (&out_digits)[Tile::kDigitWords]) const {
        if constexpr (kPacked) {
            // The last pass writes the output, a split buffer (see PackedPairs).
            if (!split_destination) scatter_keys_as<kFull, false, false>(out_digits);
            else if (plan.transform_out) scatter_keys_as<kFull, true, true>(out_digits);
            else scatter_keys_as<kFull, false, true>(out_digits);
        } else {
            if (plan.transform_out) scatter_keys_as<kFull, true, false>(out_digits);
            else scatter_keys_as<kFull, false, false>(out_digits);
        }
    }

    template <bool kFull, bool kTransform, bool kSplit>
    __device__ __forceinline__ void scatter_keys_as(uint32_t (&out_digits)[Tile::kDigitWords]) const {
        Tile::scatter_keys(s, window, kFull, tile_keys, out_digits, [&](uint32_t position, K key, uint32_t digit) {
            if constexpr (kSplit) {
                const uint32_t high = uint32_t(uint64_t(key) >> 32);
                // An argsort whose keys are not returned: its last pass writes the positions only.
                if (!(Pairs::kMakeValues && kTransform && args.keys_discarded))
                    *reinterpret_cast<uint32_t *>(s.key_address[digit] + uint64_t(position) * 4) =
                        kTransform ? from_radix_key<uint32_t>(high, args.kind, args.descending) : high;
                // kTransform: the last executed pass (plan.transform_out).
                if constexpr (Pairs::kWideOutput && kTransform)
                    *reinterpret_cast<uint64_t *>(s.value_address[digit] + uint64_t(position) * 8) = uint32_t(key);
                else
                    *reinterpret_cast<uint32_t *>(s.value_address[digit] + uint64_t(position) * 4) = uint32_t(key);
            } else {
                K *address = reinterpret_cast<K *>(s.key_address[digit] + uint64_t(position) * sizeof(K));
                *address = kTransform ? from_radix_key<K>(key, args.kind, args.descending) : key;
            }
        });
    }

    // The values follow their keys: into the exchange at the keys' ranks
    // (from the staged copies or from global memory), then out to the
    // addresses of the digits scatter_keys kept.
    template <bool kFull>
    __device__ __forceinline__ void scatter_values(const uint32_t (&ranks)[kItems],
                                                   const uint32_t (&out_digits)[Tile::kDigitWords],
                                                   bool staged_in_pieces) {
        if constexpr (kStage) cp_async_wait<kPrefetch ? 1 : 0>();  // this thread's copies
        if (staged_in_pieces) {
            __syncthreads();  // every thread's pieces have landed; all keys have left the exchange buffer
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                s.exchange.values[ranks[i]] = s.staged_values[position];
            }
        } else {
            V values[kItems];
            if constexpr (kStage)  // each thread reads only what it copied
                read_warp_slots(values, s.staged_values, warp_first, kFull, tile_keys);
            else
                read_warp_slots(values, value_source + tile_begin, warp_first, kFull, tile_keys);
            __syncthreads();  // all keys have left the exchange buffer
            Tile::exchange_values(s, values, ranks, warp_first, kFull, tile_keys);
        }
        __syncthreads();
        Tile::scatter_values(kFull, tile_keys, out_digits, [&](uint32_t position, uint32_t digit) {
            V *address = reinterpret_cast<V *>(s.value_address[digit] + uint64_t(position) * sizeof(V));
            *address = s.exchange.values[position];
        });
    }
};

// One Onesweep pass over one portion (or over the tiles of every segment).
template <typename K, int kValueBytes, typename Shape, typename Pairs = SeparateValues,
          typename Tiles = PortionTiles>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    radix_onesweep_kernel(const OnesweepArgs args) {
    using Agent = OnesweepAgent<K, kValueBytes, Shape, Pairs, Tiles>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    wait_for_previous_grid();
    allow_next_grid();
    const PassPlan plan = args.plan->pass[args.pass];
    if (!plan.active) {
        Agent::reverse_reversed_input(args);
        return;
    }
    Agent(*reinterpret_cast<typename Agent::Storage *>(shared_bytes), args, plan).run();
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
