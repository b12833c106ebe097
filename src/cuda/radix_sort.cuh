// SPDX-License-Identifier: Apache-2.0
// LSD radix sort of large inputs, Onesweep style (Adinets & Merrill 2022).
// Kernels and the host driver template; radix_sort.cu instantiates them.
//
// Per call:
// 1. radix_histogram_kernel reads the keys once and counts the 8-bit digits of
//    every pass (shared counters, then 64-bit global atomics). Its last block
//    scans each pass's counts into global digit offsets, marks the passes
//    whose digit is the same for every key, and writes the plan: which passes
//    run and which buffers each reads and writes. It also clears the
//    look-back array. Nothing is read back to the host.
// 2. One radix_onesweep_kernel launch per pass (per portion, see below), each
//    allowed to start while the previous one drains (programmatic dependent
//    launch, sm_90). A persistent grid takes tiles in launch order from a
//    ticket counter. Each tile: load keys (the first executed pass maps them
//    to radix keys, the last maps them back; the buffers in between hold radix
//    keys), rank them in shared memory (block_radix_rank, AtomicOr match),
//    publish its digit counts, find how many keys of each digit the tiles
//    before it hold by decoupled look-back, scatter keys through shared memory
//    in digit order so that global writes are runs of consecutive addresses,
//    then the values the same way (staged in shared memory by cp.async while
//    the keys are ranked). Full tiles run a copy of the tile code without
//    bounds checks.
// 3. Middle sizes (up to kFusedMaxTiles tiles) skip the separate kernels: one
//    cooperative launch (radix_fused_kernel) does the histogram and every
//    pass, one tile per block, with grid barriers between passes.

// Look-back words: one 32-bit word per (tile, digit), status in the top two
// bits and a count in the low 30. A status of a launch is one of three codes
// that rotate from launch to launch (lookback_codes): every tile of a launch
// leaves its words "inclusive", which reads as "empty" to the next launch, so
// the array is cleared once per call (by the histogram kernel), not once per
// pass. Counts must fit 30 bits, so inputs of 2^30 keys or more run in
// portions of fewer than 2^30 keys, one launch each, as equal as whole tiles
// allow; every launch of a call has the same tile count (a short last portion
// runs a few padding tiles that only write their words). Each portion's last
// tile hands the running digit offsets to the next.
//
// Buffers: input, output and one temporary copy (workspace). The plan
// ping-pongs between output and temporary so the last executed pass writes
// the output; the input is only read when out of place. In place with an odd
// number of executed passes, or out of place with none, one skipped pass is
// executed anyway: its digit is constant, so it is a stable copy.
//
// Workspace peak (one reserve per call):
//   count * (key_bytes + value_bytes)          temporary keys and values
// + tiles * 256 * 4 bytes                       look-back (tiles of one portion:
//                                               0.12 bytes a key at the large
//                                               tiles of 8448 keys, 0.5 at the
//                                               medium one, 2048)
// + passes * 256 * 16 + 4 KiB                   digit counts, offsets, plan
// plus 256-byte alignment of each part. The fused path needs the temporary
// copy + passes * tiles * 1 KiB (tiles <= 128) + passes * 1 KiB.
#pragma once

#include "core/backend.h"
#include "core/key_transform.h"
#include "core/portable.h"
#include "cuda/block/block_radix_rank.cuh"
#include "cuda/device_env.h"
#include "cuda/sort_tuning.cuh"
#include "cuda/trace_clock.cuh"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// The radix path of gpuprim::cuda::sort (any count >= 1).
void radix_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning);

namespace radix_detail {

constexpr int kDigitBits = kRadixRankDigitBits;
constexpr int kDigits = kRadixRankDigits;
constexpr int kMaxPasses = 64 / kDigitBits;
template <typename K>
constexpr int kPasses = int(sizeof(K)) * 8 / kDigitBits;
static_assert(kPasses<uint32_t> % 2 == 0 && kPasses<uint64_t> % 2 == 0,
              "the plan assumes an even number of passes");

// Look-back portions: counts in a look-back word must fit 30 bits. (At 2^28
// the benchmark's 2^28 keys took two launches per pass, the second with one
// real tile and ~39,000 padding tiles.)
constexpr uint64_t kMaxPortionKeys = (uint64_t(1) << 30) - 1;
constexpr uint32_t kLookbackValueMask = (1u << 30) - 1;

// env.zeroed_counters words used (each kernel leaves its words zero).
constexpr int kTileTicketWord = 0;
constexpr int kHistogramTicketWord = 1;
constexpr int kHistogramZeroedWord = 2;
constexpr int kHistogramDoneWord = 3;
constexpr int kFusedFlagWord = 4;

enum BufferId : uint8_t { kInputBuffer = 0, kOutputBuffer = 1, kTempBuffer = 2 };

struct PassPlan {
    uint32_t active;        // 0: skipped
    uint32_t launch_index;  // executed passes before this one
    uint8_t key_source, key_destination, value_source, value_destination;
    // Between the first and the last executed pass the buffers hold radix
    // keys: the first transforms on load, the last transforms back on store.
    uint8_t transform_in, transform_out;
};
struct RadixPlan {
    PassPlan pass[kMaxPasses];
};

// Chooses the passes to execute and their buffers. digit_varies[p]: pass p's
// digit is not the same for every key.
GPUPRIM_HD void make_radix_plan(int passes, const bool *digit_varies, bool keys_in_place,
                                bool has_values, bool values_in_place, RadixPlan &plan) {
    bool execute[kMaxPasses];
    int executed = 0;
    for (int p = 0; p < passes; ++p) {
        execute[p] = digit_varies[p];
        executed += execute[p];
    }
    // Out of place, the output must be written at least once; in place, the
    // data must come back to the buffer it started in.
    const bool need_one = !keys_in_place || (has_values && !values_in_place);
    const bool need_even = keys_in_place || (has_values && values_in_place);
    for (int p = 0; p < passes; ++p) {
        const bool want_more = (need_one && executed == 0) || (need_even && executed % 2 == 1);
        if (want_more && !execute[p]) {
            execute[p] = true;
            ++executed;
        }
    }
    uint8_t key_current = kInputBuffer, value_current = kInputBuffer;
    int index = 0;
    for (int p = 0; p < kMaxPasses; ++p) {
        PassPlan pass{0, 0, 0, 0, 0, 0, 0, 0};
        if (p < passes && execute[p]) {
            const bool last_is_even = (executed - 1 - index) % 2 == 0;
            const uint8_t key_destination = keys_in_place
                                                ? (index % 2 == 0 ? kTempBuffer : kOutputBuffer)
                                                : (last_is_even ? kOutputBuffer : kTempBuffer);
            const uint8_t value_destination = values_in_place
                                                  ? (index % 2 == 0 ? kTempBuffer : kOutputBuffer)
                                                  : (last_is_even ? kOutputBuffer : kTempBuffer);
            pass.active = 1;
            pass.launch_index = uint32_t(index);
            pass.key_source = key_current;
            pass.key_destination = key_destination;
            pass.value_source = value_current;
            pass.value_destination = value_destination;
            pass.transform_in = index == 0;
            pass.transform_out = index == executed - 1;
            key_current = key_destination;
            value_current = value_destination;
            ++index;
        }
        plan.pass[p] = pass;
    }
}

// Status codes of look-back words in launch number `launch` of a call; the
// "empty" code of a launch is the "inclusive" code of the one before.
struct LookbackCodes {
    uint32_t aggregate, inclusive;
};
GPUPRIM_HD LookbackCodes lookback_codes(uint32_t launch) {
    const uint32_t empty = (2 * (launch % 3)) % 3;
    return {(empty + 1) % 3, (empty + 2) % 3};
}

template <int kValueBytes>
using RadixValue = std::conditional_t<kValueBytes == 8, uint64_t, uint32_t>;

__device__ __forceinline__ uint32_t load_relaxed(const uint32_t *address) {
    uint32_t value;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
    return value;
}
__device__ __forceinline__ void store_relaxed(uint32_t *address, uint32_t value) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// Programmatic dependent launch (sm_90+): a kernel may start while the one
// before it finishes; it waits here before touching anything that one wrote.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

template <typename T>
__device__ __forceinline__ void copy_to_shared_async(T *shared, const T *global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(address), "l"(global),
                 "n"(int(sizeof(T)))
                 : "memory");
#else
    *shared = *global;
#endif
}
// 16 bytes in one copy (both addresses 16-byte aligned).
constexpr int kValuePieceBytes = 16;
template <typename T>
__device__ __forceinline__ void copy_piece_to_shared_async(T *shared, const T *global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
#else
    *reinterpret_cast<uint4 *>(shared) = *reinterpret_cast<const uint4 *>(global);
#endif
}
__device__ __forceinline__ void commit_copies_to_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
// Waits until at most kPending of this thread's newest copy groups are in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies_to_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

// A warp's slots of a tile: slot i is tile position warp_first + 32 * i (so
// each slot's reads are coalesced); positions past the tile's end (unless
// full) read as zero. tile may point to global or shared memory.
template <int kItems, typename T>
__device__ __forceinline__ void read_warp_slots(T (&items)[kItems], const T *tile, uint32_t warp_first,
                                                bool full, uint32_t tile_keys) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
        const uint32_t position = warp_first + i * 32;
        items[i] = (full || position < tile_keys) ? tile[position] : T(0);
    }
}

// shift: a multiple of 8 below the key width. One byte permute (PRMT)
// instead of a shift and a mask: digits are extracted three times per key.
template <typename K>
__device__ __forceinline__ uint32_t digit_of(K radix_key, int shift) {
    static_assert(kDigitBits == 8, "byte digits");
    uint32_t word = uint32_t(radix_key);
    if constexpr (sizeof(K) == 8) {
        if (shift >= 32) word = uint32_t(uint64_t(radix_key) >> 32);
    }
    return __byte_perm(word, 0u, 0x4440u | (uint32_t(shift >> 3) & 3u));
}

// Exclusive scan of one 64-bit value per thread over threads 0..255; every
// thread of the block must call it. totals: 8 words of shared memory.
__device__ __forceinline__ uint64_t digit_exclusive_scan64(uint64_t value, uint64_t *totals) {
    const uint32_t lane = radix_lane_id();
    const uint32_t warp = threadIdx.x / 32;
    uint64_t inclusive = value;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const uint64_t other = __shfl_up_sync(kFullWarpMask, inclusive, offset);
        if (lane >= uint32_t(offset)) inclusive += other;
    }
    if (threadIdx.x < kDigits && lane == 31) totals[warp] = inclusive;
    __syncthreads();
    uint64_t exclusive = inclusive - value;
    for (uint32_t w = 0; w < warp && w < kDigits / 32; ++w) exclusive += totals[w];
    __syncthreads();
    return exclusive;
}

// ---------------------------------------------------------------------------
// Upfront histogram of every pass.

struct HistogramArgs {
    const void *keys;
    uint64_t count;
    KeyKind kind;
    bool descending;
    bool keys_in_place, has_values, values_in_place;
    uint64_t *digit_counts;   // passes * 256, accumulated here
    uint64_t *digit_offsets;  // passes * 256, exclusive scans out
    RadixPlan *plan;
    uint32_t *lookback;       // cleared here
    uint64_t lookback_words;  // multiple of 4, 16-byte aligned
    uint32_t *counters;       // env.zeroed_counters
};

template <typename K, typename Shape>
__global__ void __launch_bounds__(Shape::kThreads) radix_histogram_kernel(const HistogramArgs args) {
    constexpr int kThreads = Shape::kThreads;
    constexpr int kItems = Shape::kItems;
    constexpr int kReplicas = Shape::kReplicas;
    constexpr int kPassCount = kPasses<K>;
    constexpr int kCounters = kPassCount * kDigits;
    static_assert(kThreads >= kDigits, "one thread per digit in the final scan");

    __shared__ uint32_t histogram[kCounters * kReplicas];
    __shared__ uint64_t scan_totals[kDigits / 32];
    __shared__ uint32_t ticket;
    __shared__ bool last_block;
    __shared__ bool digit_constant[kPassCount];

    allow_next_grid();
    for (int i = threadIdx.x; i < kCounters * kReplicas; i += kThreads) histogram[i] = 0;
    if (threadIdx.x < kPassCount) digit_constant[threadIdx.x] = false;
    if (threadIdx.x == 0) ticket = atomicAdd(&args.counters[kHistogramTicketWord], 1u);
    __syncthreads();

    // The first block to run clears the global counters; the others add to
    // them only once it says so (it is running, so they cannot wait forever).
    if (ticket == 0) {
        for (int i = threadIdx.x; i < kCounters; i += kThreads) args.digit_counts[i] = 0;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) atomicExch(&args.counters[kHistogramZeroedWord], 1u);
    }

    {
        uint4 *words = reinterpret_cast<uint4 *>(args.lookback);
        const uint64_t vectors = args.lookback_words / 4;
        for (uint64_t i = uint64_t(blockIdx.x) * kThreads + threadIdx.x; i < vectors;
             i += uint64_t(gridDim.x) * kThreads)
            words[i] = make_uint4(0, 0, 0, 0);
    }

    const K *keys = static_cast<const K *>(args.keys);
    const uint64_t n = args.count;
    constexpr uint64_t kTile = uint64_t(kThreads) * kItems;
    const uint32_t replica = threadIdx.x % kReplicas;
    for (uint64_t base = uint64_t(blockIdx.x) * kTile; base < n; base += uint64_t(gridDim.x) * kTile) {
        K key[kItems];
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
            key[i] = index < n ? keys[index] : K(0);
        }
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
            if (index < n) {
                const K radix_key = to_radix_key<K>(key[i], args.kind, args.descending);
#pragma unroll
                for (int p = 0; p < kPassCount; ++p) {
                    const uint32_t digit = digit_of(radix_key, p * kDigitBits);
                    atomicAdd(&histogram[(p * kDigits + digit) * kReplicas + replica], 1u);
                }
            }
        }
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        while (load_relaxed(&args.counters[kHistogramZeroedWord]) == 0) {
        }
        __threadfence();
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kCounters; i += kThreads) {
        uint32_t sum = 0;
#pragma unroll
        for (int r = 0; r < kReplicas; ++r) sum += histogram[i * kReplicas + r];
        if (sum) atomicAdd(reinterpret_cast<unsigned long long *>(&args.digit_counts[i]),
                           static_cast<unsigned long long>(sum));
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last_block = atomicAdd(&args.counters[kHistogramDoneWord], 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last_block) return;

    // Last block: every other block's counts are in. Scan, plan, reset the
    // counter words for the next call.
    __threadfence();
    for (int p = 0; p < kPassCount; ++p) {
        uint64_t count = 0;
        if (threadIdx.x < kDigits) count = __ldcg(&args.digit_counts[p * kDigits + threadIdx.x]);
        const uint64_t exclusive = digit_exclusive_scan64(count, scan_totals);
        if (threadIdx.x < kDigits) {
            args.digit_offsets[p * kDigits + threadIdx.x] = exclusive;
            if (count == n) digit_constant[p] = true;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        bool varies[kMaxPasses];
        for (int p = 0; p < kPassCount; ++p) varies[p] = !digit_constant[p];
        RadixPlan plan;
        make_radix_plan(kPassCount, varies, args.keys_in_place, args.has_values, args.values_in_place,
                        plan);
        *args.plan = plan;
        args.counters[kHistogramTicketWord] = 0;
        args.counters[kHistogramZeroedWord] = 0;
        args.counters[kHistogramDoneWord] = 0;
    }
}

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
    uint64_t portion_begin;
    uint32_t portion_keys;
    uint32_t tiles;           // per launch (padding tiles included)
    uint32_t pass;
    uint32_t portion, portions;
    KeyKind kind;
    bool descending;
    unsigned long long *trace;  // per-tile timestamps in tracing dev builds; else unused
};

// Tracing (dev/sort only): globaltimer stamps of thread 0 per (pass, portion,
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

template <typename K, typename V, typename Shape, bool kHasValues, bool kPacked = false>
struct OnesweepStorage {
    using Rank = BlockRadixRank<Shape::kThreads, Shape::kItems, Shape::kMatch, Shape::kEarlyCounts>;
    static constexpr int kTile = Shape::kTile;
    static constexpr bool kStage = kHasValues && Shape::kStageValues;
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

// Keys and values both in place or both not: the pairs can move as packed
// elements (see radix_onesweep_kernel, kPacked).
inline bool placed_alike(const SortRequest &request) {
    return (request.keys_out == request.keys_in) == (request.values_out == request.values_in);
}

// Selects without indexing the parameter array (which would copy it to the stack).
__device__ __forceinline__ const void *pick_buffer(const void *const (&buffers)[3], uint8_t id) {
    return id == kInputBuffer ? buffers[0] : id == kOutputBuffer ? buffers[1] : buffers[2];
}

// kPacked: 4-byte keys with 4-byte values sorted as one 8-byte element, the
// radix key in the high half and the value in the low half (K = uint64_t,
// kValueBytes = 0, digits from bit 32 up). The input and output buffers are
// split (args.keys[id] holds the 4-byte keys, args.values[id] the values),
// the temporary one holds the packed elements: a pass moves each pair with
// one exchange and no separate value phase. The first executed pass reads the
// input and the last writes the output, so key transforms only meet split
// buffers.
template <typename K, int kValueBytes, typename Shape, bool kPacked = false>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    radix_onesweep_kernel(const OnesweepArgs args) {
    constexpr bool kHasValues = kValueBytes != 0;
    static_assert(!kPacked || (std::is_same_v<K, uint64_t> && !kHasValues), "packed pairs are 8-byte keys");
    using V = RadixValue<kValueBytes>;
    using Storage = OnesweepStorage<K, V, Shape, kHasValues, kPacked>;
    using Rank = typename Storage::Rank;
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
    if (!plan.active) return;

    const LookbackCodes codes = lookback_codes(plan.launch_index * args.portions + args.portion);
    const K *key_source = static_cast<const K *>(pick_buffer(args.keys, plan.key_source));
    K *key_destination = static_cast<K *>(const_cast<void *>(pick_buffer(args.keys, plan.key_destination)));
    const V *value_source = static_cast<const V *>(pick_buffer(args.values, plan.value_source));
    V *value_destination =
        static_cast<V *>(const_cast<void *>(pick_buffer(args.values, plan.value_destination)));
    const int shift = (kPacked ? 32 : 0) + int(args.pass) * kDigitBits;
    // Packed pairs: which of the two buffers is split (the other is packed).
    [[maybe_unused]] const bool split_source = plan.key_source != kTempBuffer;
    [[maybe_unused]] const bool split_destination = plan.key_destination != kTempBuffer;
    const uint32_t real_tiles = (args.portion_keys + kTile - 1) / kTile;
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
    auto tile_keys_of = [&](uint32_t t) { return min(kTile, args.portion_keys - t * kTile); };
    // Copies tile t's keys to shared memory, each thread the positions it ranks.
    auto prefetch_keys = [&](uint32_t t) {
        if (t < real_tiles) {
            const K *source = key_source + args.portion_begin + uint64_t(t) * kTile;
            const uint32_t count = tile_keys_of(t);
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                if (position < count) copy_to_shared_async(&s.staged_keys[position], source + position);
            }
        }
        commit_copies_to_shared();  // always a group, so wait counts stay fixed
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
        const uint32_t tile_offset = tile * kTile;
        const uint32_t tile_keys = tile_keys_of(tile);
        const uint64_t tile_begin = args.portion_begin + tile_offset;

        // The tile's work, compiled twice: full tiles need no bounds checks.
        auto process = [&](auto full_tag) {
            constexpr bool full = decltype(full_tag)::value;
            if constexpr (kPrefetch) {
                if (threadIdx.x == 0) s.next_tile[parity] = draw_ticket();  // read after the next barrier
            }

            K keys[kItems];
            if constexpr (kPrefetch) {
                wait_copies_to_shared<0>();  // this tile's keys
                read_warp_slots(keys, s.staged_keys, warp_first, full, tile_keys);
            } else if constexpr (kPacked) {
                if (split_source) {
                    uint32_t high[kItems], low[kItems];
                    const uint32_t *key_words = reinterpret_cast<const uint32_t *>(key_source) + tile_begin;
                    const uint32_t *value_words =
                        static_cast<const uint32_t *>(pick_buffer(args.values, plan.key_source)) + tile_begin;
                    read_warp_slots(high, key_words, warp_first, full, tile_keys);
                    read_warp_slots(low, value_words, warp_first, full, tile_keys);
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
#pragma unroll
                    for (int i = 0; i < kItems; ++i) {
                        const uint32_t position = warp_first + i * 32;
                        if (full || position < tile_keys)
                            copy_to_shared_async(&s.staged_values[position], source + position);
                    }
                }
                commit_copies_to_shared();
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
                if (tile > 0) store_relaxed(tile_lookback + threadIdx.x, (codes.aggregate << 30) | count);
                GPUPRIM_SORT_TRACE_AT(args, tile, 1, global_timer_ns());
            };
            auto rank_digit = [&](int i) { return digit_of(keys[i], shift); };
            if constexpr (Shape::kEarlyCounts && !kHasValues) {
                // Each key goes to the exchange as soon as its rank is final
                // (no rank array held: fewer live registers).
                Rank::rank(s.rank, rank_digit, ranks, digit_count, digit_exclusive, publish,
                           [&](int i, uint32_t rank) { s.exchange.keys[rank] = keys[i]; });
            } else {
                Rank::rank(s.rank, rank_digit, ranks, digit_count, digit_exclusive, publish);
#pragma unroll
                for (int i = 0; i < kItems; ++i) s.exchange.keys[ranks[i]] = keys[i];
            }

            GPUPRIM_SORT_TRACE_AT(args, tile, 5, global_timer_ns());
            if (threadIdx.x < kDigits) {
                const uint32_t digit = threadIdx.x;
                const uint64_t base_in = args.base_in[digit];
                [[maybe_unused]] uint64_t stats = 0;
                const uint32_t before =
                    tile > 0 ? lookback_exclusive<Shape::kLookbackWindow>(args.lookback, tile, digit, codes, &stats)
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

            // Digits of the keys this thread stores, four to a register, for the values.
            [[maybe_unused]] uint32_t out_digits[kHasValues ? (kItems + 3) / 4 : 1] = {};
            auto scatter_keys = [&](auto transform_tag, auto split_tag) {
                constexpr bool transform = decltype(transform_tag)::value;
                constexpr bool split = decltype(split_tag)::value;
#pragma unroll
                for (int i = 0; i < kItems; ++i) {
                    const uint32_t position = threadIdx.x + i * kThreads;
                    if (full || position < tile_keys) {
                        const K key = s.exchange.keys[position];
                        const uint32_t digit = digit_of(key, shift);
                        if constexpr (split) {
                            const uint32_t high = uint32_t(uint64_t(key) >> 32);
                            *reinterpret_cast<uint32_t *>(s.key_address[digit] + uint64_t(position) * 4) =
                                transform ? from_radix_key<uint32_t>(high, args.kind, args.descending) : high;
                            *reinterpret_cast<uint32_t *>(s.value_address[digit] + uint64_t(position) * 4) =
                                uint32_t(key);
                        } else {
                            K *address =
                                reinterpret_cast<K *>(s.key_address[digit] + uint64_t(position) * sizeof(K));
                            *address = transform ? from_radix_key<K>(key, args.kind, args.descending) : key;
                        }
                        if constexpr (kHasValues) out_digits[i / 4] |= digit << (8 * (i % 4));
                    }
                }
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
                if constexpr (kStage) wait_copies_to_shared<kPrefetch ? 1 : 0>();  // this thread's copies
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
#pragma unroll
                    for (int i = 0; i < kItems; ++i) {
                        const uint32_t position = warp_first + i * 32;
                        if (full || position < tile_keys) s.exchange.values[ranks[i]] = values[i];
                    }
                }
                __syncthreads();
#pragma unroll
                for (int i = 0; i < kItems; ++i) {
                    const uint32_t position = threadIdx.x + i * kThreads;
                    if (full || position < tile_keys) {
                        const uint32_t digit = (out_digits[i / 4] >> (8 * (i % 4))) & 0xffu;
                        V *address = reinterpret_cast<V *>(s.value_address[digit] + uint64_t(position) * sizeof(V));
                        *address = s.exchange.values[position];
                    }
                }
            }
        };
        if (tile_keys == kTile) process(std::true_type{});
        else process(std::false_type{});
        GPUPRIM_SORT_TRACE_AT(args, tile, 4, global_timer_ns());
    }
}

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
};

template <typename K, typename V, typename Shape, bool kHasValues>
struct FusedStorage {
    OnesweepStorage<K, V, Shape, kHasValues> tile;
    uint32_t digit_offset[kPasses<K>][kDigits];  // exclusive scan of each pass's counts
    uint32_t scan_totals[kDigits / 32];
    bool digit_constant[kPasses<K>];
};

template <typename K, int kValueBytes, typename Shape>
__global__ void __launch_bounds__(Shape::kThreads) radix_fused_kernel(const FusedArgs args) {
    constexpr bool kHasValues = kValueBytes != 0;
    using V = RadixValue<kValueBytes>;
    using Storage = FusedStorage<K, V, Shape, kHasValues>;
    using Rank = typename OnesweepStorage<K, V, Shape, kHasValues>::Rank;
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

    // Phase 0: clear the global counts (block 0) and this block's look-back
    // rows; count the tile's digits of every pass.
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
    K keys[kItems];
    {
        read_warp_slots(keys, static_cast<const K *>(args.keys[kInputBuffer]) + tile_offset, warp_first, full,
                        tile_keys);
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = warp_first + i * 32;
            keys[i] = (full || position < tile_keys) ? to_radix_key<K>(keys[i], args.kind, args.descending)
                                                     : ~K(0);
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
        const uint32_t position = warp_first + i * 32;
        if (full || position < tile_keys) {
#pragma unroll
            for (int p = 0; p < kPassCount; ++p)
                atomicAdd(&histogram[p * kDigits + digit_of(keys[i], p * kDigitBits)], 1u);
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
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) *args.zeroed_flag = 0;  // every block is past its wait

    // Every block scans the counts and makes the same plan.
    for (int p = 0; p < kPassCount; ++p) {
        uint32_t count = 0;
        if (threadIdx.x < kDigits) count = __ldcg(&args.digit_counts[p * kDigits + threadIdx.x]);
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
    {
        bool varies[kMaxPasses];
        for (int p = 0; p < kPassCount; ++p) varies[p] = !s.digit_constant[p];
        make_radix_plan(kPassCount, varies, args.keys_in_place, args.has_values, args.values_in_place, plan);
    }

    bool keys_loaded = true;  // phase 0 left the input's radix keys in registers
    for (int p = 0; p < kPassCount; ++p) {
        const PassPlan pass = plan.pass[p];
        if (!pass.active) continue;
        const int shift = p * kDigitBits;
        const K *key_source = static_cast<const K *>(pick_buffer(args.keys, pass.key_source)) + tile_offset;
        K *key_destination = static_cast<K *>(const_cast<void *>(pick_buffer(args.keys, pass.key_destination)));
        const V *value_source = static_cast<const V *>(pick_buffer(args.values, pass.value_source)) + tile_offset;
        V *value_destination =
            static_cast<V *>(const_cast<void *>(pick_buffer(args.values, pass.value_destination)));
        uint32_t *lookback = args.lookback + uint64_t(p) * tiles * kDigits;
        uint32_t *tile_lookback = lookback + uint64_t(tile) * kDigits;
        constexpr LookbackCodes codes{1, 2};

        if constexpr (kHasValues) {
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                if (full || position < tile_keys)
                    copy_to_shared_async(&t.staged_values[position], value_source + position);
            }
            commit_copies_to_shared();
        }
        if (!keys_loaded) {
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                keys[i] = (full || position < tile_keys) ? key_source[position] : ~K(0);
            }
        }
        keys_loaded = false;

        uint32_t ranks[kItems];
        uint32_t digit_count = 0, digit_exclusive = 0;
        Rank::rank(
            t.rank, [&](int i) { return digit_of(keys[i], shift); }, ranks, digit_count, digit_exclusive,
            [&](uint32_t count) {
                if (tile > 0) store_relaxed(tile_lookback + threadIdx.x, (codes.aggregate << 30) | count);
            });
#pragma unroll
        for (int i = 0; i < kItems; ++i) t.exchange.keys[ranks[i]] = keys[i];
        if (threadIdx.x < kDigits) {
            const uint32_t digit = threadIdx.x;
            const uint32_t before =
                tile > 0 ? lookback_exclusive<Shape::kLookbackWindow>(lookback, tile, digit, codes) : 0u;
            store_relaxed(tile_lookback + digit, (codes.inclusive << 30) | (before + digit_count));
            t.global_base[digit] = uint64_t(s.digit_offset[p][digit]) + before - digit_exclusive;
        }
        __syncthreads();

        uint32_t out_digits[kHasValues ? (kItems + 3) / 4 : 1] = {};
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const uint32_t position = threadIdx.x + i * kThreads;
            if (full || position < tile_keys) {
                const K key = t.exchange.keys[position];
                const uint32_t digit = digit_of(key, shift);
                key_destination[t.global_base[digit] + position] =
                    pass.transform_out ? from_radix_key<K>(key, args.kind, args.descending) : key;
                if constexpr (kHasValues) out_digits[i / 4] |= digit << (8 * (i % 4));
            }
        }
        if constexpr (kHasValues) {
            wait_copies_to_shared<0>();
            V values[kItems];
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                values[i] = (full || position < tile_keys) ? t.staged_values[position] : V(0);
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = warp_first + i * 32;
                if (full || position < tile_keys) t.exchange.values[ranks[i]] = values[i];
            }
            __syncthreads();
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint32_t position = threadIdx.x + i * kThreads;
                if (full || position < tile_keys)
                    value_destination[t.global_base[(out_digits[i / 4] >> (8 * (i % 4))) & 0xffu] + position] =
                        t.exchange.values[position];
            }
        }
        if (!pass.transform_out) grid.sync();  // the next pass reads what every tile wrote
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------
// Host driver.

inline uint64_t align_up(uint64_t bytes, uint64_t alignment) {
    return (bytes + alignment - 1) / alignment * alignment;
}

template <typename Kernel, typename Args>
void launch_radix_kernel(Kernel kernel, uint32_t blocks, int threads, size_t shared_bytes,
                         cudaStream_t stream, bool programmatic, const Args &args, const char *what) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    if (programmatic) {
        attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attribute[0].val.programmaticStreamSerializationAllowed = 1;
        config.attrs = attribute;
        config.numAttrs = 1;
    }
    check(cudaLaunchKernelEx(&config, kernel, args), what);
}

// Sorts request.count >= 1 keys with the given pass shape. portion_limit
// (tests only) lowers the keys per launch to exercise the portion hand-over.
// kPacked (4-byte keys with 4-byte values whose keys and values are both in
// place or both not): the pairs run packed (radix_onesweep_kernel), the
// temporary buffer holds 8-byte elements.
template <typename K, int kValueBytes, typename Shape, bool kPacked = false,
          typename HistogramShape = typename RadixHistogramShapeFor<sizeof(K)>::type>
void onesweep_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning,
                   uint64_t portion_limit = kMaxPortionKeys, int passes_to_launch = kMaxPasses,
                   unsigned long long *trace = nullptr) {
    using V = RadixValue<kValueBytes>;
    constexpr bool kHasValues = kValueBytes != 0;
    static_assert(!kPacked || (sizeof(K) == 4 && kValueBytes == 4), "packed pairs: 4-byte keys and values");
    constexpr int kPassCount = kPasses<K>;
    constexpr uint64_t kTile = Shape::kTile;
    const uint64_t n = request.count;
    // Portions as equal as whole tiles allow, so the last has few padding tiles.
    const uint64_t max_portion_tiles = std::max<uint64_t>(1, std::min(portion_limit, kMaxPortionKeys) / kTile);
    const uint64_t all_tiles = (n + kTile - 1) / kTile;
    const uint64_t portions = (all_tiles + max_portion_tiles - 1) / max_portion_tiles;
    const uint32_t tiles = uint32_t((all_tiles + portions - 1) / portions);
    const uint64_t portion_size = uint64_t(tiles) * kTile;

    // Workspace: partitioned by hand, each part 256-byte aligned.
    const uint64_t keys_bytes = align_up(n * (sizeof(K) + (kPacked ? sizeof(V) : 0)), 256);
    const uint64_t values_bytes = kHasValues && !kPacked ? align_up(n * sizeof(V), 256) : 0;
    const uint64_t lookback_words = uint64_t(tiles) * kDigits;
    const uint64_t lookback_bytes = align_up(lookback_words * 4, 256);
    const uint64_t counts_bytes = align_up(uint64_t(kPassCount) * kDigits * 8, 256);
    const uint64_t base_bytes = align_up(2 * kDigits * 8, 256);
    const uint64_t plan_bytes = align_up(sizeof(RadixPlan), 256);
    unsigned char *workspace = static_cast<unsigned char *>(env.workspace->reserve(
        keys_bytes + values_bytes + lookback_bytes + 2 * counts_bytes + base_bytes + plan_bytes));
    unsigned char *cursor = workspace;
    auto take = [&cursor](uint64_t bytes) {
        unsigned char *part = cursor;
        cursor += bytes;
        return part;
    };
    void *temp_keys = take(keys_bytes);
    void *temp_values = kHasValues && !kPacked ? take(values_bytes) : nullptr;
    uint32_t *lookback = reinterpret_cast<uint32_t *>(take(lookback_bytes));
    uint64_t *digit_counts = reinterpret_cast<uint64_t *>(take(counts_bytes));
    uint64_t *digit_offsets = reinterpret_cast<uint64_t *>(take(counts_bytes));
    uint64_t *running_base = reinterpret_cast<uint64_t *>(take(base_bytes));
    RadixPlan *plan = reinterpret_cast<RadixPlan *>(take(plan_bytes));

    const bool keys_in_place = request.keys_out == request.keys_in;
    const bool values_in_place = kHasValues && request.values_out == request.values_in;
    if (kPacked && !placed_alike(request))
        fail(GPUPRIM_ERROR_INTERNAL, "radix sort: packed pairs need keys and values both in place or both not");
    const bool programmatic = tuning.programmatic_launch && env.compute_capability >= 90;

    {
        HistogramArgs args{};
        args.keys = request.keys_in;
        args.count = n;
        args.kind = request.key_kind;
        args.descending = request.descending;
        args.keys_in_place = keys_in_place;
        args.has_values = kHasValues;
        args.values_in_place = values_in_place;
        args.digit_counts = digit_counts;
        args.digit_offsets = digit_offsets;
        args.plan = plan;
        args.lookback = lookback;
        args.lookback_words = lookback_words;
        args.counters = env.zeroed_counters;
        constexpr uint64_t kHistogramTile = uint64_t(HistogramShape::kThreads) * HistogramShape::kItems;
        const uint64_t wanted = std::max<uint64_t>((n + kHistogramTile - 1) / kHistogramTile,
                                                   (lookback_words / 4 + HistogramShape::kThreads - 1) /
                                                       HistogramShape::kThreads);
        const uint64_t most = uint64_t(env.sm_count) * tuning.histogram_blocks_per_sm;
        const uint32_t blocks = uint32_t(std::max<uint64_t>(1, std::min(wanted, most)));
        launch_radix_kernel(radix_histogram_kernel<K, HistogramShape>, blocks, HistogramShape::kThreads,
                            0, env.stream, false, args, "radix sort histogram launch");
    }

    using KernelKey = std::conditional_t<kPacked, uint64_t, K>;
    constexpr int kKernelValueBytes = kPacked ? 0 : kValueBytes;
    auto kernel = radix_onesweep_kernel<KernelKey, kKernelValueBytes, Shape, kPacked>;
    const size_t shared_bytes =
        sizeof(OnesweepStorage<KernelKey, RadixValue<kKernelValueBytes>, Shape, kHasValues && !kPacked, kPacked>);
    // Opts in to the shared memory once per context; the shape caps the blocks.
    const int resident = resident_blocks(env, reinterpret_cast<const void *>(kernel), Shape::kThreads,
                                         shared_bytes, "radix sort occupancy");
    if (resident == 0)
        fail(GPUPRIM_ERROR_INTERNAL, "radix sort: a %d-key tile does not fit this device's shared memory",
             Shape::kTile);
    const uint64_t blocks_per_sm = uint64_t(std::min(Shape::kMinBlocks, resident));
    const uint32_t blocks =
        uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(tiles, uint64_t(env.sm_count) * blocks_per_sm)));

    OnesweepArgs args{};
    args.keys[kInputBuffer] = request.keys_in;
    args.keys[kOutputBuffer] = request.keys_out;
    args.keys[kTempBuffer] = temp_keys;
    args.values[kInputBuffer] = request.values_in;
    args.values[kOutputBuffer] = request.values_out;
    args.values[kTempBuffer] = temp_values;
    args.lookback = lookback;
    args.plan = plan;
    args.tile_ticket = env.zeroed_counters + kTileTicketWord;
    args.tiles = tiles;
    args.portions = uint32_t(portions);
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.trace = trace;
    for (int pass = 0; pass < std::min(kPassCount, passes_to_launch); ++pass) {
        for (uint64_t portion = 0; portion < portions; ++portion) {
            args.pass = uint32_t(pass);
            args.portion = uint32_t(portion);
            args.portion_begin = portion * portion_size;
            args.portion_keys = uint32_t(std::min(portion_size, n - portion * portion_size));
            args.base_in = portion == 0 ? digit_offsets + pass * kDigits
                                        : running_base + ((portion - 1) % 2) * kDigits;
            args.base_out = portion + 1 < portions ? running_base + (portion % 2) * kDigits : nullptr;
            launch_radix_kernel(kernel, blocks, Shape::kThreads, shared_bytes, env.stream, programmatic, args,
                                "radix sort pass launch");
        }
    }
}

// The fused path; false (nothing launched) when the tiles cannot all be
// resident at once.
template <typename K, int kValueBytes, typename Shape>
bool fused_sort(const DeviceEnv &env, const SortRequest &request) {
    using V = RadixValue<kValueBytes>;
    constexpr bool kHasValues = kValueBytes != 0;
    constexpr int kPassCount = kPasses<K>;
    constexpr uint64_t kTile = Shape::kTile;
    const uint64_t n = request.count;
    const uint64_t tiles = (n + kTile - 1) / kTile;
    auto kernel = radix_fused_kernel<K, kValueBytes, Shape>;
    const size_t shared_bytes = sizeof(FusedStorage<K, V, Shape, kHasValues>);
    // The cooperative launch needs every block resident at once (none fit: 0).
    const int blocks_per_sm = resident_blocks(env, reinterpret_cast<const void *>(kernel), Shape::kThreads,
                                              shared_bytes, "radix sort (fused) occupancy");
    if (tiles > uint64_t(blocks_per_sm) * env.sm_count) return false;

    const uint64_t keys_bytes = align_up(n * sizeof(K), 256);
    const uint64_t values_bytes = kHasValues ? align_up(n * sizeof(V), 256) : 0;
    const uint64_t counts_bytes = align_up(uint64_t(kPassCount) * kDigits * 4, 256);
    const uint64_t lookback_bytes = align_up(uint64_t(kPassCount) * tiles * kDigits * 4, 256);
    unsigned char *cursor = static_cast<unsigned char *>(
        env.workspace->reserve(keys_bytes + values_bytes + counts_bytes + lookback_bytes));
    FusedArgs args{};
    args.keys[kInputBuffer] = request.keys_in;
    args.keys[kOutputBuffer] = request.keys_out;
    args.keys[kTempBuffer] = cursor;
    cursor += keys_bytes;
    args.values[kInputBuffer] = request.values_in;
    args.values[kOutputBuffer] = request.values_out;
    args.values[kTempBuffer] = kHasValues ? cursor : nullptr;
    cursor += values_bytes;
    args.digit_counts = reinterpret_cast<uint32_t *>(cursor);
    cursor += counts_bytes;
    args.lookback = reinterpret_cast<uint32_t *>(cursor);
    args.count = uint32_t(n);
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.keys_in_place = request.keys_out == request.keys_in;
    args.has_values = kHasValues;
    args.values_in_place = kHasValues && request.values_out == request.values_in;
    args.zeroed_flag = env.zeroed_counters + kFusedFlagWord;

    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(uint32_t(tiles));
    config.blockDim = dim3(Shape::kThreads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = env.stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeCooperative;
    attribute[0].val.cooperative = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    check(cudaLaunchKernelEx(&config, kernel, args), "radix sort (fused) launch");
    return true;
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
