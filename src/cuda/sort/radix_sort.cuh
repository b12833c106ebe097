// SPDX-License-Identifier: Apache-2.0
// LSD radix sort of large inputs, Onesweep style (Adinets & Merrill 2022).
// The host drivers (templates); the kernels are in radix_*_kernel.cuh (the two
// pass kernels share the tile agent of radix_tile.cuh), the
// pass plan in radix_plan.cuh; radix_sort.cu instantiates them by size.
//
// Per call:
// 0. radix_order_kernel checks whether the input is already in the order
//    asked for: sorted, or strictly reversed (a tie rules that out: equal
//    keys keep their order). Each block stops as soon as it and the others
//    have seen both broken, which on unordered data is after one tile. On an
//    input in order it reads every key once and, out of place, writes the
//    output as it goes (mirrored when reversed), so the sort is done when it
//    ends: 2^28 u32 keys in 0.47 ms in place, 0.8-1.0 ms out of place, on an
//    H100 (CUB: 5.4 ms).
// 1. radix_histogram_kernel reads the keys once and counts the 8-bit digits of
//    every pass (shared counters, then 64-bit global atomics). Its last block
//    scans each pass's counts into global digit offsets, marks the passes
//    whose digit is the same for every key, marks the passes whose warps
//    will hold so few digits that ranking should match lanes by match.any
//    (skewed, see BlockRadixRank; estimated from runs of keys each block
//    samples, pass_ranking.h), and writes the plan: which passes run and which
//    buffers each reads and writes. It also clears the look-back array. An
//    input found in order is not counted, and the plan runs no pass (the
//    first pass launch reverses in-place buffers of a reversed input).
//    Nothing is read back to the host.
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

// Argsort (values_in NULL): packed pairs (4-byte keys and indices) make each
// value, the key's position, in the first pass, where a pair sort loads it:
// a kernel of its own, so pair sorts pay no branch. The other pair kernels
// had a run-time branch for it that cost non-packed pair sorts about 4%;
// there the driver writes the positions to values_out first and sorts them
// in place.
//
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

#include "core/portable.h"
#include "core/backend.h"
#include "cuda/device_env.h"
#include "cuda/sort/radix_fused_kernel.cuh"
#include "cuda/sort/radix_histogram_kernel.cuh"
#include "cuda/sort/radix_onesweep_kernel.cuh"
#include "cuda/sort/radix_order_kernel.cuh"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/sort/sort_policy.cuh"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// The radix path of gpuprim::cuda::sort (any count >= 1).
void radix_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning);
// Its 1- and 2-byte keys (radix_sort_narrow.cu).
void radix_sort_narrow_keys(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning);

namespace radix_detail {

// ---------------------------------------------------------------------------
// Host driver.

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

template <typename V>
__global__ void fill_positions_kernel(V *values, uint64_t count) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) values[i] = V(i);
}

// The request reading its values from values_out, sorted in place.
inline SortRequest with_values_in(const SortRequest &request) {
    SortRequest pairs = request;
    pairs.values_in = request.values_out;
    return pairs;
}

// An argsort's request for the kernels that read values: the positions
// written to values_out, sorted in place.
template <int kValueBytes>
SortRequest with_positions(const DeviceEnv &env, const SortRequest &request) {
    if constexpr (kValueBytes == 0) {
        return request;
    } else {
        if (request.values_in != nullptr) return request;
        using V = RadixValue<kValueBytes>;
        const uint32_t blocks = uint32_t(std::max<uint64_t>(
            1, std::min<uint64_t>((request.count + 255) / 256, uint64_t(env.sm_count) * 16)));
        if (env.measuring) return with_values_in(request);
        fill_positions_kernel<V><<<blocks, 256, 0, env.stream>>>(static_cast<V *>(request.values_out), request.count);
        check_launch("argsort positions launch");
        return with_values_in(request);
    }
}

// Launches the upfront histogram with the given shape, one wave of blocks;
// false (nothing launched) when its counters do not fit a block.
template <typename K, typename HistogramShape, bool kMaskedDigits>
bool launch_radix_histogram(const DeviceEnv &env, const SortTuning &tuning, const HistogramArgs &args,
                            bool programmatic) {
    const auto kernel = radix_histogram_kernel<K, HistogramShape, kMaskedDigits>;
    constexpr size_t kShared = radix_histogram_shared_bytes<K, HistogramShape>;
    // Opts in to the shared memory once per context.
    const int resident = resident_blocks(env, reinterpret_cast<const void *>(kernel), HistogramShape::kThreads,
                                         kShared, "radix sort histogram occupancy");
    if (resident == 0) return false;
    constexpr uint64_t kTile = uint64_t(HistogramShape::kThreads) * HistogramShape::kItems;
    // Enough blocks for the keys, and for clearing the look-back words.
    const uint64_t wanted = std::max<uint64_t>(ceil_div(args.count, kTile),
                                               ceil_div(args.lookback_words / 4, HistogramShape::kThreads));
    const uint64_t most = uint64_t(env.sm_count) * uint64_t(std::min(tuning.histogram_blocks_per_sm, resident));
    const uint32_t blocks = uint32_t(std::max<uint64_t>(1, std::min(wanted, most)));
    launch_radix_kernel(kernel, blocks, HistogramShape::kThreads, kShared, env.stream, programmatic, args,
                        "radix sort histogram launch");
    return true;
}

// What the kernel checkers (tools/kernel_check) may ask of the Onesweep
// driver beyond the library's calls; the library passes the defaults.
struct OnesweepHooks {
    uint64_t portion_limit = kMaxPortionKeys;  // fewer keys per launch: exercises the portion hand-over
    int passes_to_launch = kMaxPasses;         // launch the first passes only (timing breakdowns)
    unsigned long long *trace = nullptr;       // per-tile stamps (GPUPRIM_SORT_TRACE builds; else ignored)
};

// Sorts request.count >= 1 keys with the given pass shape, as onesweep_sort
// below, with the checkers' hooks.
template <typename K, int kValueBytes, typename Shape, bool kPacked = false,
          typename HistogramShapes = RadixHistogramShapesFor<sizeof(K)>>
void onesweep_sort_with(const DeviceEnv &env, const SortRequest &asked, const SortTuning &tuning,
                        const OnesweepHooks &hooks) {
    // Packed pairs make an argsort's positions themselves; the others read them.
    const SortRequest request = kPacked ? asked : with_positions<kValueBytes>(env, asked);
    using V = RadixValue<kValueBytes>;
    constexpr bool kHasValues = kValueBytes != 0;
    static_assert(!kPacked || (sizeof(K) == 4 && (kValueBytes == 4 || kValueBytes == 8)),
                  "packed pairs: 4-byte keys with 4-byte values or 8-byte argsort indices");
    constexpr int kPassCount = kPasses<K>;
    constexpr uint64_t kTile = Shape::kTile;
    const uint64_t n = request.count;
    // Portions as equal as whole tiles allow, so the last has few padding tiles.
    const uint64_t max_portion_tiles = std::max<uint64_t>(1, std::min(hooks.portion_limit, kMaxPortionKeys) / kTile);
    const uint64_t all_tiles = ceil_div(n, kTile);
    const uint64_t portions = ceil_div(all_tiles, max_portion_tiles);
    const uint32_t tiles = uint32_t(ceil_div(all_tiles, portions));
    const uint64_t portion_size = uint64_t(tiles) * kTile;

    // Workspace: the temporary keys (packed: pairs) and values (none when
    // packed or without values), look-back words, digit counts and offsets,
    // the running offsets between portions, the plan.
    const uint64_t lookback_words = uint64_t(tiles) * kDigits;
    WorkspaceLayout layout;
    const WorkspacePart keys_part = layout.add(n, kPacked ? 8 : sizeof(K));  // packed: 4-byte halves
    const WorkspacePart values_part = layout.add(kHasValues && !kPacked ? n : 0, sizeof(V));
    const WorkspacePart lookback_part = layout.add(lookback_words, 4);
    const WorkspacePart counts_part = layout.add(uint64_t(kPassCount) * kDigits * 8);
    const WorkspacePart offsets_part = layout.add(uint64_t(kPassCount) * kDigits * 8);
    const WorkspacePart base_part = layout.add(2 * kDigits * 8);
    const WorkspacePart plan_part = layout.add(sizeof(RadixPlan));
    void *workspace = env.workspace->reserve(layout.bytes());
    if (env.measuring) return;
    void *temp_keys = WorkspaceLayout::at<void>(workspace, keys_part);
    void *temp_values = WorkspaceLayout::at<void>(workspace, values_part);
    uint32_t *lookback = WorkspaceLayout::at<uint32_t>(workspace, lookback_part);
    uint64_t *digit_counts = WorkspaceLayout::at<uint64_t>(workspace, counts_part);
    uint64_t *digit_offsets = WorkspaceLayout::at<uint64_t>(workspace, offsets_part);
    uint64_t *running_base = WorkspaceLayout::at<uint64_t>(workspace, base_part);
    RadixPlan *plan = WorkspaceLayout::at<RadixPlan>(workspace, plan_part);

    const bool keys_in_place = request.keys_out == request.keys_in;
    const bool values_in_place = kHasValues && request.values_out == request.values_in;
    if (kPacked && !packs_pairs(request))
        fail(GPUPRIM_ERROR_INTERNAL, "radix sort: these pairs do not travel packed (packs_pairs)");
    const bool programmatic = tuning.programmatic_launch;  // sm_90+ (sort_policy.cuh)
    const PassWindows windows = pass_windows(request.begin_bit, sort_end_bit(request));

    {
        OrderArgs args{};
        args.keys = request.keys_in;
        args.count = n;
        args.kind = request.key_kind;
        args.descending = request.descending;
        const uint32_t end_bit = sort_end_bit(request);
        args.order_bits = (end_bit >= 64 ? ~uint64_t(0) : (uint64_t(1) << end_bit) - 1) &
                          ~((uint64_t(1) << request.begin_bit) - 1);
        args.keys_out = keys_in_place ? nullptr : request.keys_out;
        args.values_in = request.values_in;
        args.values_out = kHasValues && !values_in_place ? request.values_out : nullptr;
        args.counters = env.zeroed_counters;
        // One wave of resident blocks: a block that finds the order broken
        // stops, so later waves would only add launches.
        constexpr uint64_t kOrderTile = uint64_t(kOrderCheckThreads) * kOrderCheckItems<K>;
        const auto order_kernel =
            radix_order_kernel<K, kValueBytes, kOrderCheckThreads, kOrderCheckItems<K>, kOrderCheckTilesPerRound>;
        const int resident = resident_blocks(env, reinterpret_cast<const void *>(order_kernel), kOrderCheckThreads,
                                             0, "radix sort order check occupancy");
        const uint64_t most = uint64_t(env.sm_count) * uint64_t(std::max(resident, 1));
        const uint32_t blocks = uint32_t(std::max<uint64_t>(1, std::min(ceil_div(n, kOrderTile), most)));
        launch_radix_kernel(order_kernel, blocks, kOrderCheckThreads, 0, env.stream, false, args,
                            "radix sort order check launch");
    }
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
        args.windows = windows;
        args.skewed_agreement = uint32_t(tuning.skewed_agreement * double(kChanceOne));
        args.sample = n >= tuning.ranking_sample_min;
        args.skewed_collisions = uint32_t(tuning.skewed_collisions * double(kChanceOne));
        // The many-keys shape where its shared memory fits a block (4- and
        // 8-byte keys' 128 KiB does not where a block gets 99 KiB: sm_86,
        // sm_89; those then count with the few-keys shape).
        if (n < tuning.histogram_many_min ||
            !launch_radix_histogram<K, typename HistogramShapes::many, Shape::kMaskedDigits>(env, tuning, args,
                                                                                              programmatic))
            if (!launch_radix_histogram<K, typename HistogramShapes::few, Shape::kMaskedDigits>(env, tuning, args,
                                                                                                 programmatic))
                fail(GPUPRIM_ERROR_INTERNAL, "radix sort: the histogram's counters do not fit this device's "
                                             "shared memory");
    }

    using KernelKey = std::conditional_t<kPacked, uint64_t, K>;
    constexpr int kKernelValueBytes = kPacked ? 0 : kValueBytes;
    // Packed pairs read keys and values in one step: an argsort's (no
    // values_in) has a kernel of its own, so a pair sort's pays no branch.
    // An argsort's 8-byte indices are its positions as 4-byte halves,
    // written wide by the last pass.
    using Pairs = std::conditional_t<!kPacked, SeparateValues,
                                     std::conditional_t<kValueBytes == 8, PackedArgsortWide, PackedPairs>>;
    auto kernel = radix_onesweep_kernel<KernelKey, kKernelValueBytes, Shape, Pairs>;
    if constexpr (kPacked && kValueBytes == 4) {
        if (request.values_in == nullptr) kernel = radix_onesweep_kernel<KernelKey, kKernelValueBytes, Shape, PackedArgsort>;
    }
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
    args.count = n;
    args.portions = uint32_t(portions);
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.keys_discarded = request.keys_discarded;
#if defined(GPUPRIM_SORT_TRACE)
    args.trace = hooks.trace;
#endif
    for (int pass = 0; pass < std::min(kPassCount, hooks.passes_to_launch); ++pass) {
        for (uint64_t portion = 0; portion < portions; ++portion) {
            args.pass = uint32_t(pass);
            args.window = windows.pass[pass];
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

// Sorts request.count >= 1 keys with the given pass shape. kPacked (pairs
// that packs_pairs takes): the pairs run packed (PackedPairs, an argsort's
// PackedArgsort or PackedArgsortWide), the temporary buffer holds 8-byte
// elements.
template <typename K, int kValueBytes, typename Shape, bool kPacked = false,
          typename HistogramShapes = RadixHistogramShapesFor<sizeof(K)>>
void onesweep_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    onesweep_sort_with<K, kValueBytes, Shape, kPacked, HistogramShapes>(env, request, tuning, OnesweepHooks{});
}

// The fused path; false (nothing launched) when the tiles cannot all be
// resident at once.
template <typename K, int kValueBytes, typename Shape>
bool fused_sort(const DeviceEnv &env, const SortRequest &asked) {
    using V = RadixValue<kValueBytes>;
    constexpr bool kHasValues = kValueBytes != 0;
    constexpr int kPassCount = kPasses<K>;
    constexpr uint64_t kTile = Shape::kTile;
    const uint64_t n = asked.count;
    const uint64_t tiles = ceil_div(n, kTile);
    auto kernel = radix_fused_kernel<K, kValueBytes, Shape>;
    const size_t shared_bytes = sizeof(FusedStorage<K, V, Shape, kHasValues>);
    // The cooperative launch needs every block resident at once (none fit: 0).
    const int blocks_per_sm = resident_blocks(env, reinterpret_cast<const void *>(kernel), Shape::kThreads,
                                              shared_bytes, "radix sort (fused) occupancy");
    const uint64_t resident = uint64_t(blocks_per_sm) * env.sm_count;
    if (env.measuring_any_count && tiles > resident) {
        // The bound on smaller counts: the largest this path takes.
        SortRequest largest = asked;
        largest.count = resident * kTile;
        if (largest.count != 0) fused_sort<K, kValueBytes, Shape>(env, largest);
    }
    if (tiles > resident) return false;
    const SortRequest request = with_positions<kValueBytes>(env, asked);  // an argsort's positions

    // Workspace: the temporary keys and values (none without values), digit
    // counts, look-back words of every pass.
    WorkspaceLayout layout;
    const WorkspacePart keys_part = layout.add(n, sizeof(K));
    const WorkspacePart values_part = layout.add(kHasValues ? n : 0, sizeof(V));
    const WorkspacePart counts_part = layout.add(uint64_t(kPassCount) * kDigits * 4);
    const WorkspacePart lookback_part = layout.add(tiles, uint64_t(kPassCount) * kDigits * 4);
    void *workspace = env.workspace->reserve(layout.bytes());
    if (env.measuring) return true;
    FusedArgs args{};
    args.keys[kInputBuffer] = request.keys_in;
    args.keys[kOutputBuffer] = request.keys_out;
    args.keys[kTempBuffer] = WorkspaceLayout::at<void>(workspace, keys_part);
    args.values[kInputBuffer] = request.values_in;
    args.values[kOutputBuffer] = request.values_out;
    args.values[kTempBuffer] = WorkspaceLayout::at<void>(workspace, values_part);
    args.digit_counts = WorkspaceLayout::at<uint32_t>(workspace, counts_part);
    args.lookback = WorkspaceLayout::at<uint32_t>(workspace, lookback_part);
    args.count = uint32_t(n);
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.keys_in_place = request.keys_out == request.keys_in;
    args.has_values = kHasValues;
    args.values_in_place = kHasValues && request.values_out == request.values_in;
    args.zeroed_flag = env.zeroed_counters + kFusedFlagWord;
    args.windows = pass_windows(request.begin_bit, sort_end_bit(request));

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
