// SPDX-License-Identifier: Apache-2.0
// Top-k on CUDA (gpuprim_topk, gpuprim_segmented_topk): the device-wide
// driver. It checks the offsets, then picks a path by segment length
// (topk_policy.cuh):
// - all segments up to kNetworkMaxLength: the short-segment networks
//   (engine/segment_network.h, network_topk), one launch;
// - all up to WarpSelectPolicy::kMaxLength with k up to its kMaxK:
//   warp_select.cuh, one launch (a larger k: the networks);
// - all up to BlockSelectPolicy::kMaxLength: block_select.cuh, one launch;
// - all up to BlockStreamSelectPolicy::kMaxLength, k up to its kMaxWanted,
//   when one block a segment is resident at once:
//   block_stream_select.cuh, one launch (offsets: block_select.cuh takes the
//   segments a block holds, in a launch before it);
// - longer ones: radix_select.cuh over all of them at once (rows: every row;
//   offsets: the segments too long for a block, listed by a kernel, while
//   block_select.cuh takes the others): the sample and pass 0, then, for k
//   up to kBlockSortMax, segments under 2^32 keys and at most one long
//   segment a resident block, the rest and the sort of the chosen in one
//   cooperative launch (radix_select_finish.cuh); else a launch a pass,
//   then the chosen of each segment sorted in one block each or, for k
//   past kBlockSortMax, by two stable flat radix sorts (by position, then
//   by key).
// With the offsets check deferred (engine/segment_check.h) the path is
// picked by a bound on the longest segment (max_segment_length, or the
// data's count); the networks' one launch then checks a small offsets array
// itself, and past 8192 keys the list's count comes back to the host, so
// such a call cannot be captured into a CUDA graph.
// Workspace: env.side_workspace (the flat sorts reserve env.workspace).
#include "cuda/topk/topk.h"

#include "core/checked_size.h"
#include "core/portable.h"
#include "core/dtype.h"
#include "cuda/device_env.h"
#include "cuda/engine/reserve_first.h"
#include "cuda/engine/segment_check.h"
#include "cuda/engine/segment_network.h"
#include "cuda/sort/sort.h"
#include "cuda/topk/block_select.cuh"
#include "cuda/topk/block_stream_select.cuh"
#include "cuda/topk/radix_select.cuh"
#include "cuda/topk/radix_select_finish.cuh"
#include "cuda/topk/warp_select.cuh"
#include "cuda/util/capture.h"
#include "cuda/util/check.h"
#include "cuda/util/code_arch.h"
#include "cuda/util/grid_limits.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace gpuprim::cuda {
namespace selection {
namespace {

TopkArgs args_of(const TopkRequest &request, const SegmentLayout &layout) {
    TopkArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.indices = request.indices;
    args.index_bytes = request.index_bytes;
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.k = request.k;
    args.bounds = SegmentBounds::of(layout);
    args.list = nullptr;
    args.groups = layout.segments;
    return args;
}

uint32_t grid_for(uint64_t groups) { return uint32_t(std::min<uint64_t>(groups, uint64_t(1) << 30)); }

// Opts a kernel in to `shared` bytes of dynamic shared memory where that
// and its static shared memory (a few KiB) may pass the default 48 KiB.
void require_shared(const DeviceEnv &env, const void *kernel, int threads, size_t shared, const char *what) {
    if (shared > 32 * 1024 && resident_blocks(env, kernel, threads, shared, what) == 0)
        fail(GPUPRIM_ERROR_INTERNAL, "%s: %zu bytes of shared memory do not fit this device", what, shared);
}

template <typename K>
void launch_block_select(const DeviceEnv &env, const TopkArgs &args, uint32_t max_length) {
    const uint32_t slots = next_power_of_two(uint32_t(std::min<uint64_t>(args.k, max_length)));
    const size_t shared = block_select_shared_bytes<K>(max_length, slots);
    auto kernel = block_select_kernel<K>;
    require_shared(env, reinterpret_cast<const void *>(kernel), BlockSelectPolicy::kThreads, shared,
                   "top-k block select");
    if (env.measuring) return;
    kernel<<<grid_for(args.groups), BlockSelectPolicy::kThreads, shared, env.stream>>>(args, max_length, slots);
    check_launch("top-k block select launch");
}

// The dynamic shared memory of the one-block streamed select
// (block_stream_select.cuh) when the segments past a block's shared memory
// take it, else 0: all of them short enough, at most kMaxWanted chosen, the
// kernel's shared memory fits this device (which opts the kernel in to it),
// and every segment has a block resident at once: the launch takes a block
// a segment (CSR: the short ones' blocks end at once, but a million of them
// would still run in waves of one 1,024-thread block an SM), and more long
// segments than that would run in waves of one block each, where the grid
// select was measured.
template <typename K>
size_t stream_select_shared(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout,
                            uint64_t longest) {
    if (longest > BlockStreamSelectPolicy::kMaxLength) return 0;
    const uint64_t wanted = std::min<uint64_t>(request.k, longest);
    if (wanted > BlockStreamSelectPolicy::kMaxWanted) return 0;
    const size_t shared = block_stream_select_shared_bytes<SelectKey<K>>(next_power_of_two(uint32_t(wanted)));
    const int per_sm = resident_blocks(env, reinterpret_cast<const void *>(block_stream_select_kernel<K>),
                                       BlockStreamSelectPolicy::kThreads, shared, "top-k streamed block select");
    return per_sm > 0 && layout.segments <= uint64_t(per_sm) * uint64_t(env.sm_count) ? shared : 0;
}

// The segments of length in (min_length, longest]: one block each, with
// stream_select_shared's bytes.
template <typename K>
void launch_stream_select(const DeviceEnv &env, const TopkArgs &args, uint32_t min_length, uint64_t longest,
                          size_t shared) {
    if (env.measuring) return;
    block_stream_select_kernel<K><<<grid_for(args.groups), BlockStreamSelectPolicy::kThreads, shared, env.stream>>>(
        args, min_length, uint32_t(longest));
    check_launch("top-k streamed block select launch");
}

// Lists the segments longer than `limit` (offsets): ids to `list`, their
// number to *count.
__global__ void __launch_bounds__(256) list_long_segments_kernel(SegmentBounds bounds, uint64_t limit,
                                                                 unsigned long long *list,
                                                                 unsigned long long *count) {
    if (bounds.skipped()) return;  // offsets failed a deferred check: no long segments
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t s = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < bounds.segments; s += stride) {
        const uint64_t length = bounds.offset(s + 1) - bounds.offset(s);
        if (length > limit) list[atomicAdd(count, 1ull)] = s;
    }
}

// Launches a kernel with launch attributes (programmatic_dependent,
// cooperative below); a braced list of any length sets N.
template <size_t N, typename... Params, typename... Args>
void launch_with(const cudaLaunchAttribute (&attributes)[N], void (*kernel)(Params...), dim3 grid, int threads,
                 size_t shared, cudaStream_t stream, const char *what, Args &&...args) {
    cudaLaunchAttribute attrs[N];  // cudaLaunchConfig_t takes a non-const pointer
    for (size_t i = 0; i < N; ++i) attrs[i] = attributes[i];
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    config.attrs = attrs;
    config.numAttrs = unsigned(N);
    check(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), what);
}

// The kernel waits for the previous one on the stream with griddepcontrol
// (programmatic dependent launch): it may start launching while that one
// still runs. Only where the device code has that wait (code_arch.h); else
// an ordinary launch after the previous one.
cudaLaunchAttribute programmatic_dependent(const DeviceEnv &env) {
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = programmatic_launch_allowed(env.code_arch) ? 1 : 0;
    return attribute;
}

// Every block of the grid resident at once (or the launch fails), so that a
// block may wait for another without hanging.
cudaLaunchAttribute cooperative() {
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeCooperative;
    attribute.val.cooperative = 1;
    return attribute;
}

uint32_t bit_width(uint64_t x) {
    uint32_t bits = 0;
    while (bits < 64 && (x >> bits) != 0) ++bits;
    return bits;
}

// The two stable sorts that order a long segment's `count` chosen (pairs
// in place): by position, then by key.
struct ChosenSorts {
    SortRequest by_position, by_key;
};
template <typename R, typename I>
ChosenSorts chosen_sorts(R *keys, I *positions, uint64_t count) {
    ChosenSorts sorts{};
    SortRequest &by_position = sorts.by_position;
    by_position.key_kind = KeyKind::Unsigned;
    by_position.key_bytes = sizeof(I);
    by_position.keys_in = positions;
    by_position.keys_out = positions;
    by_position.value_bytes = sizeof(R);
    by_position.values_in = keys;
    by_position.values_out = keys;
    by_position.count = count;
    SortRequest &by_key = sorts.by_key;
    by_key = by_position;
    by_key.key_bytes = sizeof(R);
    by_key.keys_in = keys;
    by_key.keys_out = keys;
    by_key.value_bytes = sizeof(I);
    by_key.values_in = positions;
    by_key.values_out = positions;
    return sorts;
}

// A workspace query's record of select_long's sorts of the chosen, up to
// `wanted` pairs for each long segment, when there are too many for one
// block.
template <typename R, typename I>
void measure_chosen_sorts(const DeviceEnv &env, uint64_t wanted, R *keys, I *positions, bool any_count) {
    if (wanted <= RadixSelectPolicy::kBlockSortMax) return;
    // Offsets: each segment sorts min(k, its length), any count up to wanted.
    const ChosenSorts sorts = chosen_sorts(keys, positions, wanted);
    for (const SortRequest *request : {&sorts.by_position, &sorts.by_key})
        any_count ? sort_bound(env, *request) : sort(env, *request);
}

// Blocks of the finishing launch (radix_select_finish.cuh), every one
// resident at once; 0 where the launches a pass run instead: more chosen
// than one block sorts, or more long segments than resident blocks (one
// team a segment; several segments a block were not measured). Segments
// of 2^32 keys or more (8-byte positions) keep the launches a pass too: no
// finishing kernel is compiled for them (it doubled topk.cu's compile
// time with them). shared: the launch's dynamic shared memory.
template <typename K, typename I>
uint32_t finish_blocks(const DeviceEnv &env, uint64_t segments, uint64_t wanted, size_t shared) {
    if constexpr (sizeof(I) != 4) {
        return 0;
    } else {
        if (wanted > RadixSelectPolicy::kBlockSortMax) return 0;
        auto kernel = radix_select_finish_kernel<K, I>;
        const int per_sm = resident_blocks(env, reinterpret_cast<const void *>(kernel), RadixSelectPolicy::kThreads,
                                           shared, "top-k finishing launch occupancy");
        const uint64_t resident = uint64_t(per_sm) * uint64_t(env.sm_count);
        return segments <= resident ? uint32_t(std::min<uint64_t>(resident, UINT32_MAX)) : 0;
    }
}

template <typename K, typename I>
void select_long(const DeviceEnv &env, const TopkRequest &request, TopkArgs args, uint64_t data_count,
                 uint64_t longest, const std::vector<unsigned long long> &host_list) {
    using R = SelectKey<K>;
    const uint64_t segments = args.groups;
    const uint32_t key_bits = uint32_t(8 * sizeof(K));
    const uint32_t index_bits = std::max<uint32_t>(1, bit_width(longest - 1));
    const SelectDigits digits = SelectDigits::of(key_bits, index_bits);
    const uint64_t candidates = data_count / RadixSelectPolicy::kCandidateShare + 1;

    // The list of long segments (offsets) came in args.list from the
    // caller's part of the side workspace: keep it, add ours after it.
    WorkspaceLayout layout;
    const WorkspacePart list_part = layout.add(args.list ? segments : 0, 8);
    const WorkspacePart states_part = layout.add(segments, sizeof(SelectState));
    const WorkspacePart bins_part = layout.add(segments, RadixSelectPolicy::kBins * 8);
    WorkspacePart candidate_key_part[2], candidate_position_part[2];
    for (int b = 0; b < 2; ++b) {
        candidate_key_part[b] = layout.add(candidates, sizeof(R));
        candidate_position_part[b] = layout.add(candidates, sizeof(I));
    }
    // A segment chooses at most min(k, longest): room for that, not for k.
    const uint64_t result_stride = std::min<uint64_t>(request.k, longest);
    const uint64_t results = checked_mul(segments, result_stride, "top-k results");
    const WorkspacePart result_key_part = layout.add(results, sizeof(R));
    const WorkspacePart result_position_part = layout.add(results, sizeof(I));
    void *side = env.side_workspace->reserve(layout.bytes());
    if (env.measuring)
        return measure_chosen_sorts(env, std::min<uint64_t>(request.k, longest),
                                    WorkspaceLayout::at<R>(side, result_key_part),
                                    WorkspaceLayout::at<I>(side, result_position_part), args.list != nullptr);
    if (args.list) {
        auto *list = WorkspaceLayout::at<unsigned long long>(side, list_part);
        check(cudaMemcpyAsync(list, host_list.data(), segments * 8, cudaMemcpyHostToDevice, env.stream),
              "top-k (cudaMemcpyAsync)");
        args.list = list;
    }
    SelectBuffers<R, I> buffers{};
    buffers.states = WorkspaceLayout::at<SelectState>(side, states_part);
    buffers.bins = WorkspaceLayout::at<unsigned long long>(side, bins_part);
    for (int b = 0; b < 2; ++b) {
        buffers.candidate_keys[b] = WorkspaceLayout::at<R>(side, candidate_key_part[b]);
        buffers.candidate_positions[b] = WorkspaceLayout::at<I>(side, candidate_position_part[b]);
    }
    buffers.result_keys = WorkspaceLayout::at<R>(side, result_key_part);
    buffers.result_positions = WorkspaceLayout::at<I>(side, result_position_part);
    buffers.result_stride = result_stride;

    const uint64_t wanted = std::min<uint64_t>(request.k, longest);
    // The finishing launch's shared memory (it sorts at most kBlockSortMax chosen).
    const size_t finish_shared = wanted <= RadixSelectPolicy::kBlockSortMax
                                     ? finish_shared_bytes<K, I>(next_power_of_two(uint32_t(wanted)))
                                     : 0;
    const uint32_t finishing_blocks = finish_blocks<K, I>(env, segments, wanted, finish_shared);
    radix_select_init_kernel<K><<<grid_for(segments), kSampleThreads, 0, env.stream>>>(args, buffers.states,
                                                                                     buffers.bins);
    check_launch("top-k select init launch");

    constexpr uint64_t kTile = uint64_t(RadixSelectPolicy::kThreads) * RadixSelectPolicy::kItems;
    const uint64_t resident = uint64_t(env.sm_count) * RadixSelectPolicy::kBlocksPerSm;
    const uint64_t tiles = ceil_div(longest, kTile);
    dim3 grid(uint32_t(std::max<uint64_t>(1, std::min(tiles, resident / std::max<uint64_t>(1, segments)))),
              uint32_t(std::min<uint64_t>(segments, kMaxGridY)));
    // Pass 0 reads every key: its own launch, many blocks a segment.
    launch_with({programmatic_dependent(env)}, radix_select_pass_kernel<K, I>, grid, RadixSelectPolicy::kThreads, 0,
                env.stream, "top-k select pass launch", args, buffers, 0u, digits);
    if constexpr (sizeof(I) == 4) {
        if (finishing_blocks) {
            // The rest, and the sort of the chosen, in one launch.
            // Also a programmatic dependent of pass 0: its blocks wait for
            // pass 0 where they start, so its launch overlaps pass 0's end.
            launch_with({cooperative(), programmatic_dependent(env)}, radix_select_finish_kernel<K, I>,
                        dim3(finishing_blocks), RadixSelectPolicy::kThreads, finish_shared, env.stream,
                        "top-k finishing launch", args, buffers, digits);
            return;
        }
    }
    // Else one launch a digit, plus the one that collects the last bin, plus
    // one for a segment that counts its first digit twice (its sample
    // misled: SelectState::digit_lag); a segment done early skips the rest.
    for (uint32_t pass = 1; pass <= digits.passes + 1; ++pass)
        launch_with({programmatic_dependent(env)}, radix_select_pass_kernel<K, I>, grid, RadixSelectPolicy::kThreads, 0,
                    env.stream, "top-k select pass launch", args, buffers, pass, digits);

    if (wanted <= RadixSelectPolicy::kBlockSortMax) {
        const size_t shared = chosen_sort_bytes<R, I>(next_power_of_two(uint32_t(wanted)));
        auto kernel = sort_chosen_kernel<K, I>;
        require_shared(env, reinterpret_cast<const void *>(kernel), RadixSelectPolicy::kThreads, shared,
                       "top-k sort of the chosen");
        launch_with({programmatic_dependent(env)}, kernel, dim3(grid_for(segments)), RadixSelectPolicy::kThreads, shared,
                    env.stream, "top-k sort of the chosen launch", args, buffers);
        return;
    }
    // Many chosen: a stable sort by position, then a stable sort by key,
    // for each long segment.
    std::vector<uint64_t> counts = host_array<uint64_t>(segments, "the long segments' result counts");
    if (!args.list) {
        std::fill(counts.begin(), counts.end(), std::min<uint64_t>(request.k, args.bounds.row_length));
    } else {
        // Lengths of the listed segments: read their offsets back.
        const uint32_t ob = args.bounds.offset_bytes;
        std::vector<unsigned char> pair(2 * ob);
        for (uint64_t j = 0; j < segments; ++j) {
            check(cudaMemcpyAsync(pair.data(), static_cast<const unsigned char *>(args.bounds.offsets) + host_list[j] * ob,
                                  2 * ob, cudaMemcpyDeviceToHost, env.stream),
                  "top-k (cudaMemcpyAsync)");
            check(cudaStreamSynchronize(env.stream), "top-k (cudaStreamSynchronize)");
            uint64_t begin = 0, end = 0;
            std::memcpy(&begin, pair.data(), ob);
            std::memcpy(&end, pair.data() + ob, ob);
            counts[j] = std::min<uint64_t>(request.k, end - begin);
        }
    }
    for (uint64_t j = 0; j < segments; ++j) {
        R *keys = buffers.result_keys + j * result_stride;
        I *positions = buffers.result_positions + j * result_stride;
        const ChosenSorts sorts = chosen_sorts(keys, positions, counts[j]);
        sort(env, sorts.by_position);
        sort(env, sorts.by_key);
        const uint32_t blocks = uint32_t(std::min<uint64_t>((counts[j] + 255) / 256, uint64_t(env.sm_count) * 8));
        write_chosen_kernel<K, I><<<std::max(blocks, 1u), 256, 0, env.stream>>>(args, keys, positions, j, counts[j]);
        check_launch("top-k write launch");
    }
}

// Top-k of segments (offsets checked) of at most `longest` keys by the
// short-segment networks (engine/segment_network.h), storing each segment's
// first k ranks. False (nothing done) when longest is past what a network
// holds on this device.
bool network_topk(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout, uint64_t longest,
                  const InKernelCheck &in_kernel) {
    if (longest > kMaxNetwork) return false;
    SegmentNetworkArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.values_out = request.indices;
    args.values = request.indices ? SegmentValueSource::kIndex : SegmentValueSource::kNone;
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.range_bits = request.key_bytes * 8;
    args.bounds = SegmentBounds::of(layout);
    args.groups = layout.segments;
    args.network = network_for(longest);
    args.topk = request.k;
    args.in_kernel = in_kernel;
    // The argsort's instances: keys with their positions, 4- or 8-byte indices.
    bool fits = false;
    dispatch_width(request.key_bytes, "top-k: unsupported key width", [&](auto key_bits) {
        using K = decltype(key_bits);
        if (request.indices && request.index_bytes == 8) {
            if ((fits = args.network <= largest_network<K, 8, true>(env))) launch_network_sort<K, 8, true>(env, args);
        } else {
            if ((fits = args.network <= largest_network<K, 4, true>(env))) launch_network_sort<K, 4, true>(env, args);
        }
    });
    return fits;
}

// Networks take the shortest segments, and all up to 256 keys when k is
// past what the warp select ranks cheaply.
uint64_t network_topk_max(const TopkRequest &request) {
    return request.k <= WarpSelectPolicy::kMaxK ? kNetworkMaxLength : WarpSelectPolicy::kMaxLength;
}

// Whether segments of up to `longest` keys take the networks on this device.
bool takes_network_topk(const DeviceEnv &env, const TopkRequest &request, uint64_t longest) {
    if (longest > network_topk_max(request) || longest > kMaxNetwork) return false;
    uint32_t largest = 0;
    dispatch_width(request.key_bytes, "top-k: unsupported key width", [&](auto key_bits) {
        using K = decltype(key_bits);
        largest = request.indices && request.index_bytes == 8 ? largest_network<K, 8, true>(env)
                                                              : largest_network<K, 4, true>(env);
    });
    return network_for(longest) <= largest;
}

// A workspace query's long segments of offsets (none listed: no offsets
// are read): as many as there can be past block_max keys each, any of them
// as long as the data.
template <typename K>
void measure_long_list(const DeviceEnv &env, const TopkRequest &request, TopkArgs args, const SegmentLayout &layout,
                       uint64_t longest, unsigned long long *list) {
    args.list = list;
    const uint64_t most = layout.data_count / (uint64_t(BlockSelectPolicy::kMaxLength) + 1);
    args.groups = std::min<uint64_t>(layout.segments, most);
    if (args.groups == 0) return;
    const std::vector<unsigned long long> no_list;
    if (longest <= UINT32_MAX) select_long<K, uint32_t>(env, request, args, layout.data_count, longest, no_list);
    else select_long<K, unsigned long long>(env, request, args, layout.data_count, longest, no_list);
}

template <typename K>
void topk_of_width(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout,
                   const SegmentSummary &summary) {
    const uint64_t longest = summary.longest;
    TopkArgs args = args_of(request, layout);
    if (summary.in_kernel.offsets) {
        // The networks' kernel checks the offsets (check_in_kernel): nothing else may read them.
        if (!network_topk(env, request, layout, longest, summary.in_kernel))
            fail(GPUPRIM_ERROR_INTERNAL, "top-k: an offsets check in the kernel, but no network");
        return;
    }
    if (longest <= network_topk_max(request) && network_topk(env, request, layout, longest, InKernelCheck{})) return;
    if (longest <= WarpSelectPolicy::kMaxLength && request.k <= WarpSelectPolicy::kMaxK) {
        const uint64_t per_block = WarpSelectPolicy::kWarps;
        if (env.measuring) return;
        warp_select_kernel<K><<<grid_for((args.groups + per_block - 1) / per_block), WarpSelectPolicy::kWarps * 32, 0,
                                env.stream>>>(args);
        return check_launch("top-k warp select launch");
    }
    const uint32_t block_max = BlockSelectPolicy::kMaxLength;
    if (longest <= block_max) return launch_block_select<K>(env, args, uint32_t(longest));
    if (const size_t stream_shared = stream_select_shared<K>(env, request, layout, longest)) {
        if (layout.offsets) launch_block_select<K>(env, args, block_max);
        return launch_stream_select<K>(env, args, block_max, longest, stream_shared);
    }

    std::vector<unsigned long long> host_list;
    const TopkArgs every_segment = args;
    if (layout.offsets) {
        // The list of the segments longer than a block holds.
        WorkspaceLayout parts;
        const WorkspacePart count_part = parts.add(8);
        const WorkspacePart list_part = parts.add(layout.segments, 8);
        void *side = env.side_workspace->reserve(parts.bytes());
        auto *count = WorkspaceLayout::at<unsigned long long>(side, count_part);
        auto *list = WorkspaceLayout::at<unsigned long long>(side, list_part);
        if (env.measuring) {
            launch_block_select<K>(env, every_segment, block_max);
            return measure_long_list<K>(env, request, args, layout, longest, list);
        }
        check(cudaMemsetAsync(count, 0, 8, env.stream), "top-k (cudaMemsetAsync)");
        const uint32_t blocks =
            uint32_t(std::max<uint64_t>(1, std::min<uint64_t>((layout.segments + 255) / 256, uint64_t(env.sm_count) * 8)));
        list_long_segments_kernel<<<blocks, 256, 0, env.stream>>>(args.bounds, block_max, list, count);
        check_launch("top-k long segment list launch");
        unsigned long long host_count = 0;
        check(cudaMemcpyAsync(&host_count, count, 8, cudaMemcpyDeviceToHost, env.stream), "top-k (cudaMemcpyAsync)");
        check(cudaStreamSynchronize(env.stream), "top-k (cudaStreamSynchronize)");
        host_list.resize(host_count);
        if (host_count) {
            // On the context's stream (cudaMemcpy would go through the legacy
            // default stream, which waits for the program's other blocking streams).
            check(cudaMemcpyAsync(host_list.data(), list, host_count * 8, cudaMemcpyDeviceToHost, env.stream),
                  "top-k (cudaMemcpyAsync, long segments)");
            check(cudaStreamSynchronize(env.stream), "top-k (cudaStreamSynchronize)");
        }
        args.list = list;  // replaced by select_long's own copy
        args.groups = host_count;
    }
    auto select_long_segments = [&](const DeviceEnv &select_env) {
        if (longest <= UINT32_MAX)
            select_long<K, uint32_t>(select_env, request, args, layout.data_count, longest, host_list);
        else
            select_long<K, unsigned long long>(select_env, request, args, layout.data_count, longest, host_list);
    };
    if (layout.offsets) {
        // Before the segments a block holds are written, the long ones'
        // select takes its workspace (the list is uploaded again from the
        // host into select_long's block), so that a shortage fails the call
        // with the outputs untouched.
        if (args.groups != 0) {
            const WorkspaceNeeds needs = workspace_needs(env, select_long_segments);
            env.workspace->reserve(needs.main_bytes);
            env.side_workspace->reserve(needs.side_bytes);
        }
        launch_block_select<K>(env, every_segment, block_max);
        if (args.groups == 0) return;
    } else if (!env.measuring) {
        // Every segment is long (flat, or rows past a block): the main
        // workspace the sorts of the chosen take after the select kernels
        // is taken before them too, so that a shortage (a held workspace,
        // growth refused while the stream captures) enqueues nothing.
        const WorkspaceNeeds needs = workspace_needs(env, select_long_segments);
        env.workspace->reserve(needs.main_bytes);
        env.side_workspace->reserve(needs.side_bytes);
    }
    select_long_segments(env);
}

}  // namespace
}  // namespace selection

void topk(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout) {
    if (!is_dtype_width(request.key_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "top-k: unsupported key width %u", request.key_bytes);
    // Deferred: segments past a block's select are listed, and the list's
    // length read back to the host, which a graph cannot replay. Refused
    // while nothing of the call is enqueued yet (a query enqueues nothing).
    if (check_is_deferred(env, layout) && !env.measuring &&
        longest_segment_bound(layout, request.largest_index) > selection::BlockSelectPolicy::kMaxLength)
        refuse_during_capture(env.stream, "gpuprim_segmented_topk",
                              "its CSR offsets may hold segments longer than 8192 keys, which are listed on the "
                              "device and counted on the host (promise shorter segments with "
                              "segments->max_segment_length)");
    // The check also holds each segment's last index to the indices' type:
    // largest_index is UINT64_MAX when no indices are wanted (a k = 0 call's
    // empty indices buffer has no memory, but still its dtype). One network
    // launch for all: its kernel checks a small offsets array itself.
    const SegmentSummary summary =
        can_check_in_kernel(env, layout) && request.k != 0 &&
                layout.segments != 0 && layout.data_count != 0 &&
                selection::takes_network_topk(env, request, longest_segment_bound(layout, request.largest_index))
            ? check_in_kernel(env, layout, request.largest_index)
            : check_segments(env, layout, request.largest_index);
    if (request.k == 0 || layout.segments == 0 || summary.longest == 0) return;
    // Only what the segments cover is read: candidates and scratch follow it.
    TopkRequest covered = request;
    covered.keys_in = at_covered(request.keys_in, summary, request.key_bytes);
    const SegmentLayout narrowed = narrowed_to_covered(layout, summary);
    dispatch_width(request.key_bytes, "top-k: unsupported key width", [&](auto key_bits) {
        selection::topk_of_width<decltype(key_bits)>(env, covered, narrowed, summary);
    });
    await_in_kernel_check(env, layout, summary);
}

}  // namespace gpuprim::cuda
