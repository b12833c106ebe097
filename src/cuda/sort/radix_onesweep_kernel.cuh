// SPDX-License-Identifier: Apache-2.0
// The Onesweep pass kernel (radix_sort.cuh has the design).
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
    unsigned long long *trace;  // per-tile timestamps in tracing dev builds; else unused
    // Segmented sorts (kSegmented): where each tile lies, and base_in holds
    // 256 offsets per segment.
    const SegmentTile *segment_tiles;
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
// elements (see radix_onesweep_kernel, kPacked).
inline bool placed_alike(const SortRequest &request) {
    return (request.keys_out == request.keys_in) == (request.values_out == request.values_in);
}

// kPacked: 4-byte keys with 4-byte values sorted as one 8-byte element, the
// radix key in the high half and the value in the low half (K = uint64_t,
// kValueBytes = 0, digits from bit 32 up). The input and output buffers are
// split (args.keys[id] holds the 4-byte keys, args.values[id] the values),
// the temporary one holds the packed elements: a pass moves each pair with
// one exchange and no separate value phase. The first executed pass reads the
// input and the last writes the output, so key transforms only meet split
// buffers.
//
// kSegmented: every segment sorted on its own in the same launches
// (segmented_radix_sort.cu). Tiles never straddle segments: each tile's
// place and segment come from args.segment_tiles, its digit offsets are its
// segment's (base_in + segment * 256), and a segment's first tile starts a
// new look-back chain as tile 0 does (its successors' look-back stops at its
// inclusive words and never reads further back).
//
// kMakePackedValues (packed pairs only): the values are the keys' positions,
// made in the first pass (an argsort), not read.
template <typename K, int kValueBytes, typename Shape, bool kPacked = false, bool kSegmented = false,
          bool kMakePackedValues = false>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    radix_onesweep_kernel(const OnesweepArgs args) {
    constexpr bool kHasValues = kValueBytes != 0;
    static_assert(!kPacked || (std::is_same_v<K, uint64_t> && !kHasValues), "packed pairs are 8-byte keys");
    using V = RadixValue<kValueBytes>;
    using Tile = RadixTile<K, V, Shape, kHasValues, kPacked>;
    using Storage = typename Tile::Storage;
    using Rank = typename Tile::Rank;
    constexpr int kThreads = Shape::kThreads;
    constexpr int kItems = Shape::kItems;
    constexpr uint32_t kTile = Shape::kTile;
    constexpr bool kStage = Storage::kStage;
    constexpr bool kPrefetch = Shape::kPrefetch;

    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Storage &s = *reinterpret_cast<Storage *>(shared_bytes);

    wait_for_previous_grid();
    allow_next_grid();
    const PassPlan plan = args.plan->pass[args.pass];
    if (!plan.active) {
        // An input strictly against the order: the order check wrote what is
        // out of place; the first launch reverses what is in place.
        if (!kSegmented && args.pass == 0 && args.portion == 0 && args.plan->input_order == kReversed) {
            using SplitKey = std::conditional_t<kPacked, uint32_t, K>;  // packed pairs: split buffers
            using SplitValue = std::conditional_t<kPacked, uint32_t, V>;
            if (args.keys[kInputBuffer] == args.keys[kOutputBuffer])
                reverse_in_place(static_cast<SplitKey *>(const_cast<void *>(args.keys[kOutputBuffer])), args.count);
            if ((kHasValues || kPacked) && args.values[kInputBuffer] != nullptr &&
                args.values[kInputBuffer] == args.values[kOutputBuffer])
                reverse_in_place(static_cast<SplitValue *>(const_cast<void *>(args.values[kOutputBuffer])), args.count);
        }
        return;
    }

    const LookbackCodes codes = lookback_codes(plan.launch_index * args.portions + args.portion);
    const K *key_source = static_cast<const K *>(pick_buffer(args.keys, plan.key_source));
    K *key_destination = static_cast<K *>(const_cast<void *>(pick_buffer(args.keys, plan.key_destination)));
    const V *value_source = static_cast<const V *>(pick_buffer(args.values, plan.value_source));
    V *value_destination =
        static_cast<V *>(const_cast<void *>(pick_buffer(args.values, plan.value_destination)));
    const DigitWindow window{(kPacked ? 32u : 0u) + args.window.shift, args.window.mask};
    // Packed pairs: which of the two buffers is split (the other is packed).
    [[maybe_unused]] const bool split_source = plan.key_source != kTempBuffer;
    [[maybe_unused]] const bool split_destination = plan.key_destination != kTempBuffer;
    const uint32_t real_tiles = kSegmented ? args.tiles : (args.portion_keys + kTile - 1) / kTile;
    const uint32_t warp = threadIdx.x / 32;
    const uint32_t lane = radix_lane_id();
    const uint32_t warp_first = warp * 32 * kItems + lane;  // tile position of item 0

    // Every block draws tickets until one is past the last tile; the final
    // draw of the launch (tiles + blocks - 1) resets the counter.
    auto draw_ticket = [&]() {
        const uint32_t ticket = atomicAdd(args.tile_ticket, 1u);
        if (ticket == args.tiles + gridDim.x - 1) atomicExch(args.tile_ticket, 0u);
        return ticket;
    };
    auto tile_keys_of = [&](uint32_t t) {
        if constexpr (kSegmented) return args.segment_tiles[t].keys;
        else return min(kTile, args.portion_keys - t * kTile);
    };
    auto tile_begin_of = [&](uint32_t t) {
        if constexpr (kSegmented) return args.segment_tiles[t].begin;
        else return args.portion_begin + uint64_t(t) * kTile;
    };
    // Copies tile t's keys to shared memory, each thread the positions it ranks.
    auto prefetch_keys = [&](uint32_t t) {
        if (t < real_tiles) {
            const K *source = key_source + tile_begin_of(t);
            const uint32_t count = tile_keys_of(t);
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                if (position < count) copy_to_shared_async(&s.staged_keys[position], source + position);
            }
        }
        cp_async_commit();  // always a group, so wait counts stay fixed
    };

    uint32_t tile = 0;
    uint32_t parity = 0;
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
        uint32_t *tile_lookback = args.lookback + uint64_t(tile) * kDigits;

        if (tile >= real_tiles) {  // padding tile of a short last portion
            for (int d = threadIdx.x; d < kDigits; d += kThreads)
                store_relaxed(tile_lookback + d, codes.inclusive << 30);
            if constexpr (kPrefetch) {
                if (threadIdx.x == 0) s.next_tile[parity] = draw_ticket();
                __syncthreads();
                tile = s.next_tile[parity];
            }
            continue;
        }
        GPUPRIM_SORT_TRACE_AT(args, tile, 0, global_timer_ns());
        const uint32_t tile_keys = tile_keys_of(tile);
        const uint64_t tile_begin = tile_begin_of(tile);
        // Whether this tile starts a look-back chain (publishes no aggregate, reads none).
        bool chain_start = tile == 0;
        if constexpr (kSegmented) chain_start = args.segment_tiles[tile].first != 0;

        // The tile's work, compiled twice: full tiles need no bounds checks.
        auto process = [&](auto full_tag) {
            constexpr bool full = decltype(full_tag)::value;
            if constexpr (kPrefetch) {
                if (threadIdx.x == 0) s.next_tile[parity] = draw_ticket();  // read after the next barrier
            }

            K keys[kItems];
            if constexpr (kPrefetch) {
                cp_async_wait<0>();  // this tile's keys
                read_warp_slots(keys, s.staged_keys, warp_first, full, tile_keys);
            } else if constexpr (kPacked) {
                if (split_source) {
                    uint32_t high[kItems], low[kItems];
                    const uint32_t *key_words = reinterpret_cast<const uint32_t *>(key_source) + tile_begin;
                    read_warp_slots(high, key_words, warp_first, full, tile_keys);
                    // An argsort's first pass (from the input) makes the values; a
                    // later pass from the split output buffer reads them.
                    if (kMakePackedValues && plan.key_source == kInputBuffer) {
#pragma unroll
                        for (int i = 0; i < kItems; ++i) low[i] = uint32_t(tile_begin + warp_first + i * 32);
                    } else {
                        const uint32_t *value_words =
                            static_cast<const uint32_t *>(pick_buffer(args.values, plan.key_source)) + tile_begin;
                        read_warp_slots(low, value_words, warp_first, full, tile_keys);
                    }
#pragma unroll
                    for (int i = 0; i < kItems; ++i) {
                        const uint32_t radix_high =
                            plan.transform_in ? to_radix_key<uint32_t>(high[i], args.kind, args.descending) : high[i];
                        keys[i] = (uint64_t(radix_high) << 32) | low[i];
                    }
                } else {
                    read_warp_slots(keys, key_source + tile_begin, warp_first, full, tile_keys);
                }
            } else {
                read_warp_slots(keys, key_source + tile_begin, warp_first, full, tile_keys);
            }
            // The values' copies go out after the key loads: the keys are needed
            // first. Values of a full tile whose source is 16-byte aligned are
            // staged in 16-byte pieces (a quarter of the copy instructions of one
            // per 4-byte value); any thread may then read any value, after a
            // barrier. Otherwise, and always with kPrefetch (whose next tile
            // starts staging without a barrier), each thread copies exactly the
            // values it will read.
            [[maybe_unused]] bool staged_in_pieces = false;
            if constexpr (kStage) {
                const V *source = value_source + tile_begin;
                if constexpr (full && !kPrefetch) {
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
                    Tile::stage_values(s, source, warp_first, full, tile_keys);
                }
                cp_async_commit();
            }
            if (!kPacked && plan.transform_in) {
#pragma unroll
                for (int i = 0; i < kItems; ++i) keys[i] = to_radix_key<K>(keys[i], args.kind, args.descending);
            }
            if constexpr (!full) {
                // Missing keys of a short tile rank last (largest digit, last position).
#pragma unroll
                for (int i = 0; i < kItems; ++i)
                    if (warp_first + i * 32 >= tile_keys) keys[i] = ~K(0);
            }

            uint32_t ranks[kItems];
            uint32_t digit_count = 0, digit_exclusive = 0;
            auto publish = [&](uint32_t count) {
                if (!chain_start) store_relaxed(tile_lookback + threadIdx.x, (codes.aggregate << 30) | count);
                GPUPRIM_SORT_TRACE_AT(args, tile, 1, global_timer_ns());
            };
            if constexpr (Shape::kEarlyCounts && !kHasValues) {
                // Each key goes to the exchange as soon as its rank is final
                // (no rank array held: fewer live registers).
                auto rank_digit = [&](int i) { return pass_digit<Shape::kMaskedDigits>(keys[i], window); };
                Rank::rank(s.rank, rank_digit, ranks, digit_count, digit_exclusive, publish,
                           [&](int i, uint32_t rank) { s.exchange.keys[rank] = keys[i]; }, plan.skewed != 0);
            } else {
                Tile::rank_keys(s, keys, window, ranks, digit_count, digit_exclusive, publish, plan.skewed != 0);
            }

            GPUPRIM_SORT_TRACE_AT(args, tile, 5, global_timer_ns());
            if (threadIdx.x < kDigits) {
                const uint32_t digit = threadIdx.x;
                uint64_t base_in;
                if constexpr (kSegmented) base_in = args.base_in[uint64_t(args.segment_tiles[tile].segment) * kDigits + digit];
                else base_in = args.base_in[digit];
                [[maybe_unused]] uint64_t stats = 0;
                const uint32_t before =
                    !chain_start ? lookback_exclusive<Shape::kLookbackWindow>(args.lookback, tile, digit, codes, &stats)
                             : 0u;
                store_relaxed(tile_lookback + digit, (codes.inclusive << 30) | (before + digit_count));
                GPUPRIM_SORT_TRACE_AT(args, tile, 6, global_timer_ns());
                GPUPRIM_SORT_TRACE_AT(args, tile, 7, stats);
                const uint64_t base = base_in + before;
                const uint64_t first_index = base - digit_exclusive;  // of tile position 0, modulo 2^64
                if constexpr (kPacked) {
                    // Split: 4-byte keys and values; packed: 8-byte elements.
                    s.key_address[digit] =
                        reinterpret_cast<uint64_t>(key_destination) + first_index * (split_destination ? 4 : 8);
                    s.value_address[digit] =
                        reinterpret_cast<uint64_t>(pick_buffer(args.values, plan.key_destination)) + first_index * 4;
                } else {
                    s.key_address[digit] = reinterpret_cast<uint64_t>(key_destination) + first_index * sizeof(K);
                    if constexpr (kHasValues)
                        s.value_address[digit] =
                            reinterpret_cast<uint64_t>(value_destination) + first_index * sizeof(V);
                }
                if (args.base_out != nullptr && tile == real_tiles - 1)
                    args.base_out[digit] = base + digit_count;
            }
            __syncthreads();
            GPUPRIM_SORT_TRACE_AT(args, tile, 2, global_timer_ns());

            if constexpr (kPrefetch) {
                tile = s.next_tile[parity];
                prefetch_keys(tile);  // each thread overwrites only the keys it has read
            }

            [[maybe_unused]] uint32_t out_digits[Tile::kDigitWords] = {};
            auto scatter_keys = [&](auto transform_tag, auto split_tag) {
                constexpr bool transform = decltype(transform_tag)::value;
                constexpr bool split = decltype(split_tag)::value;
                Tile::scatter_keys(s, window, full, tile_keys, out_digits, [&](uint32_t position, K key, uint32_t digit) {
                    if constexpr (split) {
                        const uint32_t high = uint32_t(uint64_t(key) >> 32);
                        *reinterpret_cast<uint32_t *>(s.key_address[digit] + uint64_t(position) * 4) =
                            transform ? from_radix_key<uint32_t>(high, args.kind, args.descending) : high;
                        *reinterpret_cast<uint32_t *>(s.value_address[digit] + uint64_t(position) * 4) =
                            uint32_t(key);
                    } else {
                        K *address = reinterpret_cast<K *>(s.key_address[digit] + uint64_t(position) * sizeof(K));
                        *address = transform ? from_radix_key<K>(key, args.kind, args.descending) : key;
                    }
                });
            };
            if constexpr (kPacked) {
                // The last pass writes the output, a split buffer (see above).
                if (!split_destination) scatter_keys(std::false_type{}, std::false_type{});
                else if (plan.transform_out) scatter_keys(std::true_type{}, std::true_type{});
                else scatter_keys(std::false_type{}, std::true_type{});
            } else {
                if (plan.transform_out) scatter_keys(std::true_type{}, std::false_type{});
                else scatter_keys(std::false_type{}, std::false_type{});
            }
            GPUPRIM_SORT_TRACE_AT(args, tile, 3, global_timer_ns());

            if constexpr (kHasValues) {
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
                        read_warp_slots(values, s.staged_values, warp_first, full, tile_keys);
                    else
                        read_warp_slots(values, value_source + tile_begin, warp_first, full, tile_keys);
                    __syncthreads();  // all keys have left the exchange buffer
                    Tile::exchange_values(s, values, ranks, warp_first, full, tile_keys);
                }
                __syncthreads();
                Tile::scatter_values(full, tile_keys, out_digits, [&](uint32_t position, uint32_t digit) {
                    V *address = reinterpret_cast<V *>(s.value_address[digit] + uint64_t(position) * sizeof(V));
                    *address = s.exchange.values[position];
                });
            }
        };
        if (tile_keys == kTile) process(std::true_type{});
        else process(std::false_type{});
        GPUPRIM_SORT_TRACE_AT(args, tile, 4, global_timer_ns());
    }
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
