// SPDX-License-Identifier: Apache-2.0
// LSD radix sort of large inputs, Onesweep style (Adinets & Merrill 2022).
// The host drivers (templates); the kernels are in radix_*_kernel.cuh, the
// pass plan in radix_plan.cuh; radix_sort.cu instantiates them by size.
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
#include "cuda/device_env.h"
#include "cuda/sort/radix_fused_kernel.cuh"
#include "cuda/sort/radix_histogram_kernel.cuh"
#include "cuda/sort/radix_onesweep_kernel.cuh"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/sort/sort_policy.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// The radix path of gpuprim::cuda::sort (any count >= 1).
void radix_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning);

namespace radix_detail {

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
    const bool programmatic = tuning.programmatic_launch;  // sm_90+ (sort_policy.cuh)

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
