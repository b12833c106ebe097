// SPDX-License-Identifier: Apache-2.0
// Long segments of a segmented sort, all in one Onesweep sort: every pass is
// one launch over the tiles of every segment (radix_onesweep_kernel with
// SegmentTiles), so a few long segments sort at about the speed of one flat
// sort of the same keys, where a sort call per segment paid each call's
// latency and a sort of (segment, key) composite keys paid 8-byte keys and
// an extra pass.
//
// 1. The host cuts each segment into tiles (a segment's last tile may be
//    short; no tile holds two segments) and builds the plan: every pass runs
//    (a digit constant in one segment need not be in another), ping-ponging
//    between the output and a temporary copy as the flat plan does.
// 2. segment_digit_count_kernel counts each segment's digits of every pass,
//    segment_digit_base_kernel turns them into each segment's digit offsets:
//    the segment's first index plus the counts of the smaller digits.
// 3. One pass kernel launch per pass.
// An argsort first writes each key's position in its segment to the output
// values, which then sort in place.
#include "cuda/sort/sort.h"

#include "core/checked_size.h"
#include "core/backend.h"
#include "cuda/device_env.h"
#include "cuda/sort/radix_onesweep_kernel.cuh"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/sort/sort_policy.cuh"
#include "cuda/util/check.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace gpuprim::cuda {
namespace {

using namespace radix_detail;

constexpr int kCountThreads = 256;

// counts[(pass * segments + segment) * 256 + digit] += the tile's keys of that digit.
template <typename K, int kPassCount>
__global__ void __launch_bounds__(kCountThreads)
    segment_digit_count_kernel(const K *keys, const SegmentTile *tiles, uint32_t segments, PassWindows windows,
                               KeyKind kind, bool descending, uint32_t *counts) {
    __shared__ uint32_t histogram[kPassCount][kDigits];
    for (int i = threadIdx.x; i < kPassCount * kDigits; i += kCountThreads) (&histogram[0][0])[i] = 0;
    __syncthreads();
    const SegmentTile tile = tiles[blockIdx.x];
    for (uint32_t i = threadIdx.x; i < tile.keys; i += kCountThreads) {
        const K key = to_radix_key<K>(keys[tile.begin + i], kind, descending);
#pragma unroll
        for (int p = 0; p < kPassCount; ++p) atomicAdd(&histogram[p][digit_of(key, windows.pass[p])], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kPassCount * kDigits; i += kCountThreads) {
        const uint32_t count = (&histogram[0][0])[i];
        const int p = i / kDigits, digit = i % kDigits;
        if (count) atomicAdd(&counts[(uint64_t(p) * segments + tile.segment) * kDigits + digit], count);
    }
}

// One block per (pass, segment): bases = the segment's first index plus the
// exclusive scan of its digit counts.
__global__ void __launch_bounds__(kDigits) segment_digit_base_kernel(const uint32_t *counts,
                                                                      const unsigned long long *segment_begin,
                                                                      uint32_t segments, uint64_t *bases) {
    __shared__ uint64_t scan[kDigits];
    const uint64_t row = blockIdx.x;  // pass * segments + segment
    const uint32_t segment = uint32_t(row % segments);
    const uint64_t count = counts[row * kDigits + threadIdx.x];
    scan[threadIdx.x] = count;
    __syncthreads();
    for (int offset = 1; offset < kDigits; offset <<= 1) {
        const uint64_t add = threadIdx.x >= offset ? scan[threadIdx.x - offset] : 0;
        __syncthreads();
        scan[threadIdx.x] += add;
        __syncthreads();
    }
    bases[row * kDigits + threadIdx.x] = segment_begin[segment] + scan[threadIdx.x] - count;
}

// An argsort's values: each key's position in its segment.
template <typename V>
__global__ void __launch_bounds__(kCountThreads) segment_positions_kernel(const SegmentTile *tiles,
                                                                          const unsigned long long *segment_begin,
                                                                          V *values) {
    const SegmentTile tile = tiles[blockIdx.x];
    const uint64_t offset = tile.begin - segment_begin[tile.segment];
    for (uint32_t i = threadIdx.x; i < tile.keys; i += kCountThreads) values[tile.begin + i] = V(offset + i);
}

template <typename K, int kValueBytes>
using LongShape = MaskedDigitsShape<typename OnesweepLargeShape<int(sizeof(K)), kValueBytes>::type>;

// The workspace of sort_long_segments: the temporary keys and values of n
// keys, look-back words of each tile, digit counts and bases of each
// segment, then the staged table (plan, tiles, segment starts).
template <typename K, int kValueBytes>
struct LongSegmentsLayout {
    WorkspaceLayout layout;
    WorkspacePart keys_part, values_part, lookback_part, counts_part, bases_part, table_part;

    LongSegmentsLayout(uint64_t n, uint64_t tiles, uint64_t segments) {
        constexpr int kPassCount = kPasses<K>;
        keys_part = layout.add(n, sizeof(K));
        values_part = layout.add(kValueBytes != 0 ? n : 0, sizeof(RadixValue<kValueBytes>));
        lookback_part = layout.add(tiles, kDigits * 4);
        counts_part = layout.add(segments, uint64_t(kPassCount) * kDigits * 4);
        bases_part = layout.add(segments, uint64_t(kPassCount) * kDigits * 8);
        table_part = layout.add(table_bytes(tiles, segments));
    }
    static uint64_t table_bytes(uint64_t tiles, uint64_t segments) {
        const char *what = "the segmented radix sort's tile table";
        return CheckedSize(tiles, what).times(sizeof(SegmentTile)).plus(sizeof(RadixPlan))
            .plus(checked_mul(segments, 8, what)).value();
    }
};

template <typename K, int kValueBytes>
void sort_long_segments(const DeviceEnv &env, const SortRequest &request, const unsigned long long *bounds,
                        uint64_t segments) {
    using Shape = LongShape<K, kValueBytes>;
    using V = RadixValue<kValueBytes>;
    constexpr bool kHasValues = kValueBytes != 0;
    constexpr int kPassCount = kPasses<K>;
    constexpr uint64_t kTile = Shape::kTile;

    // Tiles, segment starts, plan: built here, copied in one piece.
    std::vector<SegmentTile> tiles;
    std::vector<unsigned long long> begins = host_array<unsigned long long>(segments, "the segment starts");
    for (uint64_t s = 0; s < segments; ++s) {
        const uint64_t begin = bounds[2 * s], length = bounds[2 * s + 1] - bounds[2 * s];
        begins[s] = begin;
        for (uint64_t first = 0; first < length; first += kTile)
            tiles.push_back({begin + first, uint32_t(std::min(kTile, length - first)), uint32_t(s), first == 0, 0});
    }
    const bool keys_in_place = request.keys_out == request.keys_in;
    const bool values_in_place = kHasValues && (request.values_are_indices || request.values_out == request.values_in);
    bool varies[kMaxPasses];
    for (bool &v : varies) v = true;
    static_assert(sizeof(RadixPlan) % alignof(SegmentTile) == 0 && sizeof(SegmentTile) % 8 == 0,
                  "the tiles and segment starts after the plan stay aligned");
    RadixPlan plan{};
    make_radix_plan(kPassCount, varies, keys_in_place, kHasValues, values_in_place, plan);

    // The plan, tiles and segment starts, staged on the host and copied in one piece.
    const LongSegmentsLayout<K, kValueBytes> parts(request.count, tiles.size(), segments);
    std::vector<unsigned char> staged =
        host_array<unsigned char>(parts.table_bytes(tiles.size(), segments), "the segmented radix sort's tile table");
    const WorkspacePart keys_part = parts.keys_part, values_part = parts.values_part;
    const WorkspacePart lookback_part = parts.lookback_part, counts_part = parts.counts_part;
    const WorkspacePart bases_part = parts.bases_part, table_part = parts.table_part;
    void *workspace = env.workspace->reserve(parts.layout.bytes());
    if (env.measuring) return;
    auto *lookback = WorkspaceLayout::at<uint32_t>(workspace, lookback_part);
    auto *counts = WorkspaceLayout::at<uint32_t>(workspace, counts_part);
    auto *bases = WorkspaceLayout::at<uint64_t>(workspace, bases_part);
    auto *table = WorkspaceLayout::at<unsigned char>(workspace, table_part);
    auto *plan_device = reinterpret_cast<RadixPlan *>(table);
    auto *tiles_device = reinterpret_cast<SegmentTile *>(table + sizeof(RadixPlan));
    auto *begins_device = reinterpret_cast<unsigned long long *>(table + sizeof(RadixPlan) + tiles.size() * sizeof(SegmentTile));
    std::memcpy(staged.data(), &plan, sizeof plan);
    std::memcpy(staged.data() + sizeof plan, tiles.data(), tiles.size() * sizeof(SegmentTile));
    std::memcpy(staged.data() + sizeof plan + tiles.size() * sizeof(SegmentTile), begins.data(), segments * 8);
    check(cudaMemcpyAsync(table, staged.data(), staged.size(), cudaMemcpyHostToDevice, env.stream),
          "segmented radix sort (cudaMemcpyAsync)");
    check(cudaMemsetAsync(lookback, 0, tiles.size() * kDigits * 4, env.stream), "segmented radix sort (cudaMemsetAsync)");
    check(cudaMemsetAsync(counts, 0, uint64_t(kPassCount) * segments * kDigits * 4, env.stream),
          "segmented radix sort (cudaMemsetAsync)");
    // Synchronous copies from pageable memory return once the data is staged;
    // `staged` may then go.
    const PassWindows windows = pass_windows(request.begin_bit, sort_end_bit(request));
    const uint32_t tile_count = uint32_t(tiles.size());
    segment_digit_count_kernel<K, kPassCount><<<tile_count, kCountThreads, 0, env.stream>>>(
        static_cast<const K *>(request.keys_in), tiles_device, uint32_t(segments), windows, request.key_kind,
        request.descending, counts);
    check_launch("segmented radix sort count launch");
    segment_digit_base_kernel<<<uint32_t(kPassCount * segments), kDigits, 0, env.stream>>>(counts, begins_device,
                                                                                            uint32_t(segments), bases);
    check_launch("segmented radix sort base launch");
    const void *values_in = request.values_in;
    if constexpr (kHasValues) {
        if (request.values_are_indices) {
            segment_positions_kernel<V><<<tile_count, kCountThreads, 0, env.stream>>>(tiles_device, begins_device,
                                                                                      static_cast<V *>(request.values_out));
            check_launch("segmented radix sort positions launch");
            values_in = request.values_out;
        }
    }

    auto kernel = radix_onesweep_kernel<K, kValueBytes, Shape, SeparateValues, SegmentTiles>;
    const size_t shared_bytes = sizeof(OnesweepStorage<K, V, Shape, kHasValues, false>);
    const int resident = resident_blocks(env, reinterpret_cast<const void *>(kernel), Shape::kThreads, shared_bytes,
                                         "segmented radix sort occupancy");
    if (resident == 0) fail(GPUPRIM_ERROR_INTERNAL, "segmented radix sort: a tile does not fit shared memory");
    const uint32_t blocks = uint32_t(std::max<uint64_t>(
        1, std::min<uint64_t>(tile_count, uint64_t(env.sm_count) * uint64_t(std::min(Shape::kMinBlocks, resident)))));
    OnesweepArgs args{};
    args.keys[kInputBuffer] = request.keys_in;
    args.keys[kOutputBuffer] = request.keys_out;
    args.keys[kTempBuffer] = WorkspaceLayout::at<void>(workspace, keys_part);
    args.values[kInputBuffer] = values_in;
    args.values[kOutputBuffer] = request.values_out;
    args.values[kTempBuffer] = WorkspaceLayout::at<void>(workspace, values_part);
    args.lookback = lookback;
    args.plan = plan_device;
    args.tile_ticket = env.zeroed_counters + kTileTicketWord;
    args.tiles = tile_count;
    args.portions = 1;
    args.portion = 0;
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.segment_tiles = tiles_device;
    for (int pass = 0; pass < kPassCount; ++pass) {
        args.pass = uint32_t(pass);
        args.window = windows.pass[pass];
        args.base_in = bases + uint64_t(pass) * segments * kDigits;
        args.base_out = nullptr;
        kernel<<<blocks, Shape::kThreads, shared_bytes, env.stream>>>(args);
        check_launch("segmented radix sort pass launch");
    }
}

// Whether sort_long_segments takes the request's widths (segmented_radix_sort).
bool takes_widths(const SortRequest &request) {
    return (request.key_bytes == 4 || request.key_bytes == 8) &&
           (request.value_bytes == 0 || request.value_bytes == 4 || request.value_bytes == 8) && request.keys_out;
}

}  // namespace

void segmented_radix_sort_bound(const DeviceEnv &env, const SortRequest &request, uint64_t segments) {
    if (segments == 0 || !takes_widths(request)) return;
    auto reserve = [&](auto key_bits, auto value_bytes) {
        using K = decltype(key_bits);
        constexpr int kValueBytes = decltype(value_bytes)::value;
        // Each segment's last tile may be partial: at most one tile more each.
        const uint64_t tiles = ceil_div(request.count, LongShape<K, kValueBytes>::kTile) + segments;
        env.workspace->reserve(LongSegmentsLayout<K, kValueBytes>(request.count, tiles, segments).layout.bytes());
    };
    auto by_values = [&](auto key_bits) {
        switch (request.value_bytes) {
        case 0: return reserve(key_bits, std::integral_constant<int, 0>{});
        case 4: return reserve(key_bits, std::integral_constant<int, 4>{});
        default: return reserve(key_bits, std::integral_constant<int, 8>{});
        }
    };
    if (request.key_bytes == 4) by_values(uint32_t{});
    else by_values(uint64_t{});
}

bool segmented_radix_sort(const DeviceEnv &env, const SortRequest &request, const unsigned long long *bounds,
                          uint64_t segments) {
    if (segments == 0) return true;
    if (!takes_widths(request)) return false;
    if (segments > (uint64_t(1) << 24)) return false;  // the tile table and bases stay small
    for (uint64_t s = 0; s < segments; ++s)
        if (bounds[2 * s + 1] - bounds[2 * s] > kMaxPortionKeys) return false;  // 30-bit look-back counts
    auto run = [&](auto key_bits) {
        using K = decltype(key_bits);
        switch (request.value_bytes) {
        case 0: return sort_long_segments<K, 0>(env, request, bounds, segments);
        case 4: return sort_long_segments<K, 4>(env, request, bounds, segments);
        default: return sort_long_segments<K, 8>(env, request, bounds, segments);
        }
    };
    if (request.key_bytes == 4) run(uint32_t{});
    else run(uint64_t{});
    return true;
}

}  // namespace gpuprim::cuda
