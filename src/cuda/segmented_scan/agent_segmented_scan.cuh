// SPDX-License-Identifier: Apache-2.0
// The segmented scan's tile agent (segmented_scan.cu has the design): the
// running values of a dtype, the tile status of the look-back, the padded
// shared-memory tile, the segment heads of a tile, the block-wide scan of
// (head, value) pairs, a tile's carry through the look-back
// (engine/tile_lookback.cuh), and the one kernel
// that scans (or, kReduce, reduces) every segment.
#pragma once

#include "core/ops.h"
#include "cuda/engine/in_kernel_check.cuh"
#include "cuda/engine/segment_bounds.cuh"
#include "cuda/engine/tile_lookback.cuh"
#include "cuda/util/tile_status.cuh"
#include "cuda/warp/warp_scan.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim::cuda {
namespace segmented_scan_detail {

// The running value of an operator and how elements enter and leave it: the
// element itself for the 4- and 8-byte dtypes; the 32-bit (or f32) value of
// the narrow dtypes' wide operators (core/ops.h WideSumOp, WideMinMaxOp).
// store() gives float sums the canonical NaN, as the flat scan does (a
// one-element segment's value is the element itself, never an addition).
template <typename T, typename Op, typename = void>
struct Accumulation {
    using Acc = T;
    using Combine = Op;
    GPUPRIM_HD static Acc load(T x) { return x; }
    GPUPRIM_HD static T store(Acc a) {
        if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, SumOp<T>>) return canonical_nan_if_nan(a);
        else return a;
    }
};
template <typename T, typename Op>
struct Accumulation<T, Op, std::void_t<typename Op::Accumulator>> {
    using Acc = typename Op::Accumulator;
    using Combine = typename Op::Combine;
    GPUPRIM_HD static Acc load(T x) { return Op::load(x); }
    GPUPRIM_HD static T store(Acc a) { return Op::store(a); }
};

// What an empty segment reduces to and an exclusive scan writes at a head.
template <typename T, typename Op>
GPUPRIM_HD T identity_element() {
    using Accumulate = Accumulation<T, Op>;
    return Accumulate::store(Accumulate::Combine::identity());
}

// ---- tile status ------------------------------------------------------------
// One TileStatus slot per tile (util/tile_status.cuh), zeroed (invalid)
// before the launch. A tile publishes kTileAggregate (the combination of all
// its elements; it has no segment head) or kTileInclusive (the running value
// at its last element: the fold from the last head in it, or from the
// segment's head in an earlier tile). Flag and value share one
// single-copy-atomic word, so no fence is needed between them.

struct SegmentedScanParams {
    const void *input;
    void *output;
    uint64_t count;          // elements of the data
    SegmentBounds bounds;
    uint64_t tile_base;      // the tile of block 0 (a grid holds fewer than 2^31 tiles)
    unsigned long long *status_slots;
    bool exclusive;
    // A deferred offsets check every block does itself (offsets == nullptr:
    // none; engine/in_kernel_check.cuh).
    InKernelCheck in_kernel;
};

// ---- the tile in shared memory --------------------------------------------
// Elements of type E at tile positions, stored in units of 4 bytes (8 for
// 8-byte E) with one padding unit after every 128 bytes. Striped 16-byte
// accesses (thread t: bytes [16t, 16t + 16)) and blocked ones (thread t: its
// kItems consecutive elements, read unit by unit) then fall into distinct
// banks for every width and geometry of the policy.
template <typename E>
struct PaddedTile {
    using Unit = std::conditional_t<sizeof(E) == 8, unsigned long long, uint32_t>;
    static constexpr int kUnitsPerRow = 128 / int(sizeof(Unit));

    __host__ __device__ static constexpr int padded(int unit) { return unit + unit / kUnitsPerRow; }
    // Bytes of a tile of `elements` (a whole number of rows).
    static constexpr int bytes(int elements) {
        return padded(elements * int(sizeof(E)) / int(sizeof(Unit))) * int(sizeof(Unit));
    }
    __device__ __forceinline__ static void put(Unit *tile, int e, E value) {
        if constexpr (sizeof(E) >= 4) {
            tile[padded(e)] = bit_cast<Unit>(value);
        } else {
            const int byte = e * int(sizeof(E));
            auto *p = reinterpret_cast<bits_t<E> *>(reinterpret_cast<unsigned char *>(tile + padded(byte / 4)) + byte % 4);
            *p = bit_cast<bits_t<E>>(value);
        }
    }
    __device__ __forceinline__ static E get(const Unit *tile, int e) {
        if constexpr (sizeof(E) >= 4) {
            return bit_cast<E>(tile[padded(e)]);
        } else {
            const int byte = e * int(sizeof(E));
            return bit_cast<E>(*reinterpret_cast<const bits_t<E> *>(
                reinterpret_cast<const unsigned char *>(tile + padded(byte / 4)) + byte % 4));
        }
    }
    // Thread t's kItems consecutive elements [t * kItems, (t + 1) * kItems).
    template <int kItems>
    __device__ __forceinline__ static void get_blocked(const Unit *tile, int t, E (&items)[kItems]) {
        constexpr int kUnits = kItems * int(sizeof(E)) / int(sizeof(Unit));
        static_assert(kUnits * sizeof(Unit) == sizeof(items), "a thread's elements are whole units");
        Unit units[kUnits];
#pragma unroll
        for (int u = 0; u < kUnits; ++u) units[u] = tile[padded(t * kUnits + u)];
        memcpy(items, units, sizeof items);
    }
    template <int kItems>
    __device__ __forceinline__ static void put_blocked(Unit *tile, int t, const E (&items)[kItems]) {
        constexpr int kUnits = kItems * int(sizeof(E)) / int(sizeof(Unit));
        static_assert(kUnits * sizeof(Unit) == sizeof(items), "a thread's elements are whole units");
        Unit units[kUnits];
        memcpy(units, items, sizeof units);
#pragma unroll
        for (int u = 0; u < kUnits; ++u) tile[padded(t * kUnits + u)] = units[u];
    }
    // 16-byte vector v (bytes [16v, 16v + 16) of the tile).
    __device__ __forceinline__ static void put_vector(Unit *tile, int v, uint4 value) {
        constexpr int kUnits = 16 / int(sizeof(Unit));
        Unit units[kUnits];
        memcpy(units, &value, sizeof value);
#pragma unroll
        for (int u = 0; u < kUnits; ++u) tile[padded(v * kUnits + u)] = units[u];
    }
    __device__ __forceinline__ static uint4 get_vector(const Unit *tile, int v) {
        constexpr int kUnits = 16 / int(sizeof(Unit));
        Unit units[kUnits];
#pragma unroll
        for (int u = 0; u < kUnits; ++u) units[u] = tile[padded(v * kUnits + u)];
        uint4 value;
        memcpy(&value, units, sizeof value);
        return value;
    }
};

// ---- where the segments lie ------------------------------------------------
// The first offset index whose position is at or past `position` (segments +
// 1 if none), by the whole warp: each round 32 lanes probe 32 evenly spaced
// offsets, cutting the range 33-fold (about 6 dependent loads for 2^30
// segments, where a binary search takes 30). Rows: a division. Every lane
// returns the answer.
__device__ __forceinline__ uint64_t warp_first_at_or_after(const SegmentBounds &bounds, uint64_t position,
                                                           int lane) {
    if (!bounds.offsets) return bounds.first_starting_at_or_after(position);
    uint64_t low = 0, high = bounds.segments + 1;  // the answer lies in [low, high]
    while (high - low > uint64_t(kWarpLanes)) {
        const uint64_t step = (high - low) / (kWarpLanes + 1);  // >= 1; probes stay below high
        const uint64_t probe = low + step * uint64_t(lane + 1);
        // Offsets do not decrease, so the lanes whose probe lies before position are a prefix.
        const int before = __popc(__ballot_sync(kWarpLaneMask, bounds.offset(probe) < position));
        const uint64_t old_low = low;
        if (before > 0) low = old_low + step * uint64_t(before) + 1;
        if (before < kWarpLanes) high = old_low + step * uint64_t(before + 1);
    }
    const uint64_t probe = low + uint64_t(lane);
    const bool before = probe < high && bounds.offset(probe) < position;
    return low + uint64_t(__popc(__ballot_sync(kWarpLaneMask, before)));
}

// Sets bit i of head_bits for each offset k in [begin, end) at tile position
// i = offset(k) - tile_start < valid (positions past the tile are skipped).
// Each warp takes 32 consecutive offsets at a time, whose positions do not
// decrease across the lanes, so the lanes of one bitmap word are neighbours:
// they OR their bits together by shuffles and one of them sets the word
// (with short segments, 32 lanes on one word would serialize as atomics).
// Different warps may share a word at their edges, hence the atomicOr.
__device__ __forceinline__ void mark_heads(const SegmentBounds &bounds, uint64_t begin, uint64_t end,
                                           uint64_t tile_start, int valid, uint32_t *head_bits, int warp,
                                           int lane, int threads) {
    constexpr uint32_t kNoWord = ~0u;
    for (uint64_t first = begin + uint64_t(warp) * kWarpLanes; first < end; first += uint64_t(threads)) {
        const uint64_t k = first + uint64_t(lane);
        uint32_t word = kNoWord, bits = 0;
        if (k < end) {
            const uint64_t position = bounds.offset(k);  // >= tile_start: k >= begin
            if (position < tile_start + uint64_t(valid)) {
                const uint32_t i = uint32_t(position - tile_start);
                word = i / 32;
                bits = 1u << (i % 32);
            }
        }
        // Lane l gathers the bits of lanes l.. l+31 that share its word.
#pragma unroll
        for (int d = 1; d < kWarpLanes; d <<= 1) {
            const uint32_t other_bits = __shfl_down_sync(kWarpLaneMask, bits, d);
            const uint32_t other_word = __shfl_down_sync(kWarpLaneMask, word, d);
            if (lane + d < kWarpLanes && other_word == word) bits |= other_bits;
        }
        const uint32_t word_before = __shfl_up_sync(kWarpLaneMask, word, 1);
        if (word != kNoWord && (lane == 0 || word_before != word)) atomicOr(&head_bits[word], bits);
    }
}

// ---- the block-wide scan of (head, value) pairs ----------------------------
// The segmented operator: (a, b) -> (a.head | b.head, b.head ? b.value :
// op(a.value, b.value)). It is associative whenever op is, and its
// association here is fixed by the code (Kogge-Stone in each warp, then warp
// 0 over the warp totals), so float sums are reproducible.
template <int kThreads, typename Acc, typename Combine>
struct BlockSegmentedScan {
    static constexpr int kWarps = kThreads / kWarpLanes;
    struct Storage {
        Acc value[kWarps];
        uint32_t head[kWarps];
    };

    __device__ __forceinline__ static void warp_inclusive(bool &head, Acc &value, int lane) {
        const Combine op;
#pragma unroll
        for (int d = 1; d < kWarpLanes; d <<= 1) {
            const Acc up_value = bit_cast<Acc>(__shfl_up_sync(kWarpLaneMask, bit_cast<bits_t<Acc>>(value), d));
            const bool up_head = __shfl_up_sync(kWarpLaneMask, int(head), d) != 0;
            if (lane >= d) {
                if (!head) value = op(up_value, value);
                head = head || up_head;
            }
        }
    }

    // Every thread calls it. prefix: the pairs of the threads before this
    // one ((false, neutral) for thread 0); total: the whole block's.
    __device__ __forceinline__ static void exclusive_scan(bool head, Acc value, Acc neutral, bool &prefix_head,
                                                          Acc &prefix_value, bool &total_head, Acc &total_value,
                                                          Storage &storage) {
        const Combine op;
        const int lane = threadIdx.x % kWarpLanes, warp = threadIdx.x / kWarpLanes;
        warp_inclusive(head, value, lane);
        Acc before_value = bit_cast<Acc>(__shfl_up_sync(kWarpLaneMask, bit_cast<bits_t<Acc>>(value), 1));
        bool before_head = __shfl_up_sync(kWarpLaneMask, int(head), 1) != 0;
        if (lane == 0) {
            before_value = neutral;
            before_head = false;
        }
        if (lane == kWarpLanes - 1) {
            storage.value[warp] = value;
            storage.head[warp] = head;
        }
        __syncthreads();
        if (warp == 0) {
            bool warp_head = lane < kWarps ? storage.head[lane] != 0 : false;
            Acc warp_value = lane < kWarps ? storage.value[lane] : neutral;
            warp_inclusive(warp_head, warp_value, lane);
            if (lane < kWarps) {
                storage.value[lane] = warp_value;
                storage.head[lane] = warp_head;
            }
        }
        __syncthreads();
        const bool warp_prefix_head = warp > 0 ? storage.head[warp - 1] != 0 : false;
        const Acc warp_prefix_value = warp > 0 ? storage.value[warp - 1] : neutral;
        prefix_head = warp_prefix_head || before_head;
        prefix_value = before_head ? before_value : op(warp_prefix_value, before_value);
        total_head = storage.head[kWarps - 1] != 0;
        total_value = storage.value[kWarps - 1];
    }
};

// The tile's offset indices: warp 0 the first offset at or after the tile's
// start (offsets_begin), warp 1 the first at or after its end (a reduce:
// past it, for the segments ending there), warp 2 the covered range.
template <bool kReduce>
__device__ __forceinline__ void find_tile_segments(const SegmentedScanParams &p, uint64_t tile_start,
                                                   uint64_t tile_end, int warp, int lane,
                                                   unsigned long long &offsets_begin, unsigned long long &offsets_end,
                                                   unsigned long long &cover_begin, unsigned long long &cover_end) {
    if (warp == 0) {
        const uint64_t begin = warp_first_at_or_after(p.bounds, tile_start, lane);
        if (lane == 0) offsets_begin = begin;
    } else if (warp == 1) {
        const uint64_t end = warp_first_at_or_after(p.bounds, kReduce ? tile_end + 1 : tile_end, lane);
        if (lane == 0) offsets_end = end;
    } else if (warp == 2 && lane == 0) {
        cover_begin = p.bounds.offset(0);
        cover_end = p.bounds.offset(p.bounds.segments);
    }
}

// Warp 0: publishes the tile's status, then its carry, the running value at
// the element before the tile (engine/tile_lookback.cuh): a tile with a head
// publishes its inclusive value at once, before any wait, so a long run of
// tiles without heads after it needs only aggregates up to it. Tile 0 has
// nothing before it, and a tile whose first element is a head needs nothing
// from before. Every inclusive value is the left fold from the last head, so
// float sums fold left (the Fold's kLeftFold) and give the same bits
// whichever inclusive value the look-back finds. saved_aggregates: the
// windows a float sum's look-back passes (kMaxSavedWindows * 32 values).
template <typename Acc, typename Combine, typename Config>
__device__ __forceinline__ Acc publish_and_carry(const SegmentedScanParams &p, uint64_t tile, bool tile_head,
                                                 bool first_is_head, Acc tile_value, Acc *saved_aggregates, int lane) {
    const Combine op;
    const TileStatus<Acc> status{p.status_slots};
    Acc carry = ScanOpTraits<Acc, Combine>::neutral();
    if (lane == 0) status.store(tile, tile_head || tile == 0 ? kTileInclusive : kTileAggregate, tile_value);
    if (tile > 0 && !first_is_head) {
        LookbackStats stats;
        carry = look_back_windows<OperatorFold<Acc, Combine>, Config::kMaxSavedWindows, 1>(
            status, tile, saved_aggregates, lane, Config::kPollNs, stats);
        if (!tile_head && lane == 0) status.store(tile, kTileInclusive, op(carry, tile_value));
    }
    return carry;
}

// A reduce's outputs: segment k - 1 ends at offset(k); ends at the tile's
// start belong to the tile before (its end), except 0, which has none.
template <typename T, typename Accumulate, typename Values, int kThreads>
__device__ __forceinline__ void store_segment_ends(const SegmentedScanParams &p, const typename Values::Unit *values,
                                                   uint64_t offsets_begin, uint64_t offsets_end, uint64_t tile,
                                                   uint64_t tile_start) {
    using Acc = typename Accumulate::Acc;
    const Acc identity = Accumulate::Combine::identity();
    T *out = static_cast<T *>(p.output);
    for (uint64_t k = offsets_begin + threadIdx.x; k < offsets_end; k += kThreads) {
        if (k == 0) continue;
        const uint64_t end = p.bounds.offset(k);
        if (end == tile_start && tile != 0) continue;
        const uint64_t start = p.bounds.offset(k - 1);
        const Acc value = start == end ? identity : Values::get(values, int(end - 1 - tile_start));
        out[k - 1] = Accumulate::store(value);
    }
}

// A scan's outputs, staged: only covered elements are written (outside every
// segment the output stays as it is).
template <typename T, typename Elements, int kThreads, int kItems>
__device__ __forceinline__ void store_covered(const SegmentedScanParams &p, const typename Elements::Unit *elements,
                                              uint64_t tile_start, uint64_t tile_end, bool full,
                                              uint64_t cover_begin, uint64_t cover_end) {
    constexpr int kVectors = kItems * int(sizeof(T)) / 16;
    const uint64_t write_begin = cover_begin > tile_start ? cover_begin : tile_start;
    const uint64_t write_end = cover_end < tile_end ? cover_end : tile_end;
    if (write_begin >= write_end) return;
    T *out = static_cast<T *>(p.output) + tile_start;
    if (full && write_begin == tile_start && write_end == tile_end && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            const int v = k * kThreads + threadIdx.x;
            reinterpret_cast<uint4 *>(out)[v] = Elements::get_vector(elements, v);
        }
    } else {
        const int begin = int(write_begin - tile_start), end = int(write_end - tile_start);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const int e = k * kThreads + threadIdx.x;
            if (e >= begin && e < end) out[e] = Elements::get(elements, e);
        }
    }
}

// Each item's output from its running value x[j] (from the thread's first
// item or the latest head before it) and base (everything before the
// thread's first item in its segment): inclusive, or exclusive (a head's is
// the identity).
template <typename Combine, typename Acc, int kItems>
__device__ __forceinline__ void item_outputs(const Acc (&x)[kItems], uint32_t heads, Acc base, bool exclusive,
                                             Acc (&outputs)[kItems]) {
    const Combine op;
    const Acc identity = Combine::identity();
    bool after_head = false;
    Acc previous = base;  // the running value of the element before item j
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
        const bool head = (heads >> j) & 1u;
        after_head = after_head || head;
        const Acc inclusive = after_head ? x[j] : op(base, x[j]);
        outputs[j] = !exclusive ? inclusive : head ? identity : previous;
        previous = inclusive;
    }
}

// ---- the tile's loads -------------------------------------------------------
// A full tile at a 16-byte address loads as striped 16-byte vectors into
// registers, which stay in flight through the segment search and are staged
// after it (stage_vectors); any other tile loads element by element straight
// into the shared tile.
template <typename T, typename Elements, int kThreads, int kItems, int kVectors>
__device__ __forceinline__ void load_tile(const T *in, int valid, bool vector_in, typename Elements::Unit *elements,
                                          uint4 (&vectors)[kVectors]) {
    if (vector_in) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k)
            vectors[k] = __ldg(reinterpret_cast<const uint4 *>(in) + k * kThreads + threadIdx.x);
    } else {
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const int e = k * kThreads + threadIdx.x;
            if (e < valid)
                Elements::put(elements, e, bit_cast<T>(__ldg(reinterpret_cast<const bits_t<T> *>(in) + e)));
        }
    }
}

template <typename Elements, int kThreads, int kVectors>
__device__ __forceinline__ void stage_vectors(typename Elements::Unit *elements, const uint4 (&vectors)[kVectors]) {
#pragma unroll
    for (int k = 0; k < kVectors; ++k) Elements::put_vector(elements, k * kThreads + threadIdx.x, vectors[k]);
}

// ---- the kernel ---------------------------------------------------------------
// Block b scans tile tile_base + b: loads it (striped, into the padded
// shared tile), marks its segment heads in a bitmap, folds each thread's
// kItems elements, scans the threads' (head, value) pairs, publishes its
// status, takes its carry from the look-back when its first element is not
// a head, and writes its outputs: kReduce false, each covered element's
// scan value; kReduce true, the value of every segment whose end lies in
// (tile start, tile end] (tile 0 also those ending at 0).
template <typename T, typename Op, typename Config, bool kReduce>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocks)
    segmented_scan_kernel(const SegmentedScanParams p) {
    if (p.bounds.skipped()) return;  // offsets failed a deferred check: every block alike
    if (p.in_kernel.offsets && in_kernel_offsets_fail(p.in_kernel)) return;  // every block alike
    using Accumulate = Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    using Combine = typename Accumulate::Combine;
    using Traits = ScanOpTraits<Acc, Combine>;
    using Elements = PaddedTile<T>;
    using Values = PaddedTile<Acc>;
    using Scan = BlockSegmentedScan<Config::kThreads, Acc, Combine>;
    constexpr int kThreads = Config::kThreads;
    constexpr int kItems = Config::kItems;
    constexpr int kTileItems = Config::kTileItems;
    constexpr int kVectors = kItems * int(sizeof(T)) / 16;  // 16-byte vectors per thread and tile
    constexpr int kHeadWords = kTileItems / 32;
    constexpr int kElementBytes = Elements::bytes(kTileItems);
    constexpr int kValueBytes = kReduce ? Values::bytes(kTileItems) : 0;
    constexpr int kStageBytes = kElementBytes > kValueBytes ? kElementBytes : kValueBytes;
    static_assert(kVectors >= 1 && kVectors * 16 == kItems * int(sizeof(T)), "a thread's elements are whole vectors");
    static_assert(kHeadWords <= kThreads, "one thread clears each bitmap word");
    static_assert(kThreads / kWarpLanes >= 3, "three warps find the tile's segments");

    // The tile's elements on the way in, its outputs (scan) or running
    // values (reduce) on the way out.
    __shared__ alignas(16) unsigned char stage[kStageBytes];
    __shared__ uint32_t head_bits[kHeadWords];  // bit i: tile position i is a segment head
    __shared__ typename Scan::Storage scan_storage;
    __shared__ Acc saved_aggregates[ScanOpTraits<Acc, Combine>::kOrdered ? Config::kMaxSavedWindows * kWarpLanes : 1];
    __shared__ unsigned long long offsets_begin, offsets_end;  // offset indices [begin, end) of the tile
    __shared__ unsigned long long cover_begin, cover_end;      // the elements that belong to a segment
    __shared__ Acc tile_carry;

    const Combine op;
    const int warp = threadIdx.x / kWarpLanes, lane = threadIdx.x % kWarpLanes;
    const uint64_t tile = p.tile_base + blockIdx.x;
    const uint64_t tile_start = tile * uint64_t(kTileItems);
    const uint64_t left = p.count - tile_start;
    const bool full = left >= uint64_t(kTileItems);
    const int valid = full ? kTileItems : int(left);  // elements in the tile
    const uint64_t tile_end = tile_start + uint64_t(valid);
    const T *in = static_cast<const T *>(p.input) + tile_start;
    auto *elements = reinterpret_cast<typename Elements::Unit *>(stage);

    // Loads first (load_tile).
    const bool vector_in = full && reinterpret_cast<uintptr_t>(in) % 16 == 0;
    uint4 vectors[kVectors];
    load_tile<T, Elements, kThreads, kItems>(in, valid, vector_in, elements, vectors);
    if (threadIdx.x < kHeadWords) head_bits[threadIdx.x] = 0;
    // Offsets at positions [tile_start, tile_end) are the tile's heads; a
    // reduce also needs those at tile_end (segments ending there).
    find_tile_segments<kReduce>(p, tile_start, tile_end, warp, lane, offsets_begin, offsets_end, cover_begin,
                                cover_end);
    if (vector_in) stage_vectors<Elements, kThreads>(elements, vectors);
    __syncthreads();  // tile staged, bitmap cleared, segment range known

    // Mark the heads: offset k of the range lies at position offset(k); equal
    // offsets (empty segments) mark one head. The covered range's end is an
    // offset too, so whatever follows it never joins a segment.
    mark_heads(p.bounds, offsets_begin, offsets_end, tile_start, valid, head_bits, warp, lane, kThreads);
    T items[kItems];
    Elements::template get_blocked<kItems>(elements, threadIdx.x, items);
    __syncthreads();  // heads marked; the staged elements are read (the stage may be reused)

    const int first = threadIdx.x * kItems;
    const uint32_t heads = (head_bits[first / 32] >> (first % 32)) & uint32_t((uint64_t(1) << kItems) - 1);
    const bool first_is_head = (head_bits[0] & 1u) != 0;
    // Each item's running value from its thread's first item or the latest head before it.
    Acc x[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) x[j] = full || first + j < valid ? Accumulate::load(items[j]) : Traits::neutral();
#pragma unroll
    for (int j = 1; j < kItems; ++j)
        if (!((heads >> j) & 1u)) x[j] = op(x[j - 1], x[j]);

    bool prefix_head, tile_head;
    Acc prefix_value, tile_value;
    Scan::exclusive_scan(heads != 0, x[kItems - 1], Traits::neutral(), prefix_head, prefix_value, tile_head, tile_value,
                         scan_storage);

    // Publish, then the carry (publish_and_carry).
    if (warp == 0) {
        const Acc carry = publish_and_carry<Acc, Combine, Config>(p, tile, tile_head, first_is_head, tile_value,
                                                                  saved_aggregates, lane);
        if (lane == 0) tile_carry = carry;
    }
    __syncthreads();  // the carry is known

    // Everything before the thread's first item in its segment, then each item's value.
    const Acc base = prefix_head ? prefix_value : op(tile_carry, prefix_value);
    Acc outputs[kItems];
    item_outputs<Combine>(x, heads, base, !kReduce && p.exclusive, outputs);

    if constexpr (kReduce) {
        auto *values = reinterpret_cast<typename Values::Unit *>(stage);
#pragma unroll
        for (int j = 0; j < kItems; ++j) Values::put(values, first + j, outputs[j]);
        __syncthreads();  // every running value is staged
        store_segment_ends<T, Accumulate, Values, kThreads>(p, values, offsets_begin, offsets_end, tile, tile_start);
    } else {
        T results[kItems];
#pragma unroll
        for (int j = 0; j < kItems; ++j) results[j] = Accumulate::store(outputs[j]);
        Elements::template put_blocked<kItems>(elements, threadIdx.x, results);
        __syncthreads();  // every output is staged
        store_covered<T, Elements, kThreads, kItems>(p, elements, tile_start, tile_end, full, cover_begin, cover_end);
    }
}

// Fills n elements with one bit pattern (a reduce whose segments are all
// empty: every output is the identity), unless offsets failed a deferred
// check (skip). A grid-stride loop: n may pass 2^32.
template <typename Bits>
__global__ void fill_kernel(Bits *out, uint64_t n, Bits value, const uint32_t *skip) {
    if (skip && *skip != 0) return;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = value;
}

}  // namespace segmented_scan_detail
}  // namespace gpuprim::cuda
