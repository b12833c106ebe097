// SPDX-License-Identifier: Apache-2.0
// Segmented sort (keys, pairs, argsort) on CUDA: the device-wide driver.
//
// Segments of up to kMaxNetwork keys sort in the short-segment networks
// (engine/segment_network.h): keys alone for whole keys without values,
// keys with their position in the segment otherwise (stable; values,
// generated indices and a bit range's keys are read at that position).
//
// Uniform rows have one network size. CSR offsets whose lengths are alike
// use one size too; otherwise they are sorted into classes by length first
// (one launch: a list of segment ids per class, counted with atomics, so the
// lists' order varies but not the result), then one launch per non-empty
// class. The bounds of longer segments come back to the host with the class
// counts, and they sort together, by the first of these that takes them:
// - the sort primitive's segmented Onesweep sort (4- and 8-byte keys; values of
//   none, 4 or 8 bytes): every pass one launch over all their tiles;
// - one flat sort of 64-bit composite keys, the segment's ordinal above the
//   key's bits (1- and 2-byte keys, whose bits leave room for the ordinal);
// - one flat sort call per segment.
//
// With the offsets check deferred (engine/segment_check.h) paths are picked
// by a bound on the longest segment (the caller's max_segment_length, or
// the data's count): one network when it fits all, else the classes with
// their counts kept on the device, each class's launch sized by the most
// segments of its lengths the data can hold. Long segments may exist only
// when the bound passes the largest network; their bounds come back to the
// host as above, so such a call cannot be captured into a CUDA graph. A
// call on fewer than kInKernelCheckMax offsets that one network fits by
// that bound has the network's kernel check the offsets, in either mode
// (no check kernel; a waiting call waits once, after it).
//
// Workspace: the class lists live in env.side_workspace (the long segments'
// sorts reserve env.workspace): 4 or 8 bytes per segment and class with
// offsets, plus one copy of the keys when an argsort does not return them;
// the composite path keeps its keys (8 bytes), positions, and copies of the
// keys and values there too.
#include "cuda/segmented_sort/segmented_sort.h"

#include "core/checked_size.h"
#include "core/portable.h"
#include "core/dtype.h"
#include "core/key_transform.h"
#include "cuda/device_env.h"
#include "cuda/engine/reserve_first.h"
#include "cuda/engine/segment_bounds.cuh"
#include "cuda/engine/segment_check.h"
#include "cuda/engine/segment_network.h"
#include "cuda/sort/sort.h"
#include "cuda/util/capture.h"
#include "cuda/util/check.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace gpuprim::cuda {
namespace {

constexpr int kClasses = 11;          // networks 4, 8, ..., 4096
constexpr int kLongClass = kClasses;  // longer: the long segments' sorts
static_assert((kMinNetwork << (kClasses - 1)) == kMaxNetwork, "one class per network size");

// Sorts segments into classes by length: class c holds the segments of
// length up to 4 << c; kLongClass the longer ones, whose bounds it also
// writes to long_bounds (begin, end). Slots are counted in shared memory
// first, one global atomic per class and block (a million segments of one
// class on one global counter took 0.9 ms).
template <typename Id>
__global__ void __launch_bounds__(256) segment_classify_kernel(SegmentBounds bounds, uint64_t long_limit, Id *lists,
                                                               uint64_t list_room, unsigned long long *counts,
                                                               unsigned long long *long_bounds) {
    if (bounds.skipped()) return;  // offsets failed a deferred check: every class stays empty
    __shared__ unsigned int block_count[kClasses + 1];
    __shared__ unsigned long long block_base[kClasses + 1];
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t first = uint64_t(blockIdx.x) * blockDim.x; first < bounds.segments; first += stride) {
        if (threadIdx.x <= kClasses) block_count[threadIdx.x] = 0;
        __syncthreads();
        const uint64_t s = first + threadIdx.x;
        int c = -1;
        uint64_t begin = 0, length = 0;
        unsigned int local = 0;
        if (s < bounds.segments) {
            begin = bounds.offset(s);
            length = bounds.offset(s + 1) - begin;
            c = 0;
            if (length > long_limit) c = kLongClass;
            else
                while (length > (uint64_t(kMinNetwork) << c)) ++c;
            local = atomicAdd(&block_count[c], 1u);
        }
        __syncthreads();
        if (threadIdx.x <= kClasses)
            block_base[threadIdx.x] =
                block_count[threadIdx.x] ? atomicAdd(counts + threadIdx.x, (unsigned long long)block_count[threadIdx.x]) : 0;
        __syncthreads();
        if (c >= 0) {
            const uint64_t slot = block_base[c] + local;
            if (c == kLongClass) {
                long_bounds[2 * slot] = begin;
                long_bounds[2 * slot + 1] = begin + length;
            } else {
                lists[uint64_t(c) * list_room + slot] = Id(s);
            }
        }
        __syncthreads();  // block_count is cleared for the next round
    }
}

// A request for the elements [begin, end) alone (the flat sort of one long
// segment).
SortRequest slice(const SortRequest &request, uint64_t begin, uint64_t end) {
    SortRequest part = request;
    part.keys_in = static_cast<const char *>(request.keys_in) + begin * request.key_bytes;
    part.keys_out = static_cast<char *>(request.keys_out) + begin * request.key_bytes;
    if (request.values_in)
        part.values_in = static_cast<const char *>(request.values_in) + begin * request.value_bytes;
    if (request.values_out) part.values_out = static_cast<char *>(request.values_out) + begin * request.value_bytes;
    part.count = end - begin;
    return part;
}

// Long segments, all at once: one flat radix sort of 64-bit composite keys,
// the long segment's ordinal above the key's radix bits (or its bit range),
// so one Onesweep sort orders every long segment at flat-sort speed instead
// of one sort call per segment. The pack kernel reads everything a segment
// needs (the composite key, and copies of the keys and values the unpack
// gathers), so in-place calls are safe; the unpack writes each element to
// its segment's output. Returns false (nothing done) when the ordinal and
// the key's bits do not fit 64 bits together.
struct PackedLong {
    const unsigned long long *first;  // packed position of each long segment's first element (count + 1)
    const unsigned long long *begin;  // each long segment's first element in the data
    uint64_t count;                   // long segments
    uint64_t total;                   // their elements
    uint32_t key_bits;                // radix bits below the ordinal
};

// The low `bits` bits set (bits <= 64).
__host__ __device__ __forceinline__ uint64_t low_mask(uint32_t bits) {
    return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
}

__device__ __forceinline__ uint64_t packed_segment_of(const PackedLong &packed, uint64_t p) {
    uint64_t low = 0, high = packed.count - 1;  // the last j with first[j] <= p
    while (low < high) {
        const uint64_t middle = (low + high + 1) / 2;
        if (packed.first[middle] <= p) low = middle;
        else high = middle - 1;
    }
    return low;
}

template <typename K, int kValueBytes>
__global__ void __launch_bounds__(256) pack_long_kernel(const SegmentNetworkArgs args, const PackedLong packed,
                                                        unsigned long long *composite, uint32_t *positions,
                                                        K *key_copy, void *value_copy) {
    using V = typename UnsignedBits<kValueBytes == 0 ? 4 : kValueBytes>::type;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t p = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < packed.total; p += stride) {
        const uint64_t j = packed_segment_of(packed, p);
        const uint64_t r = p - packed.first[j];
        const uint64_t at = packed.begin[j] + r;
        const K key = static_cast<const K *>(args.keys_in)[at];
        uint64_t bits = uint64_t(to_radix_key<K>(key, args.kind, args.descending));
        if (args.gather_keys) {
            bits = (bits >> args.begin_bit) & low_mask(args.range_bits);
            key_copy[p] = key;
        }
        composite[p] = (packed.key_bits >= 64 ? 0 : j << packed.key_bits) | bits;
        if (positions) positions[p] = uint32_t(r);
        if constexpr (kValueBytes != 0)
            if (args.values == SegmentValueSource::kCopy)
                static_cast<V *>(value_copy)[p] = static_cast<const V *>(args.values_in)[at];
    }
}

template <typename K, int kValueBytes>
__global__ void __launch_bounds__(256) unpack_long_kernel(const SegmentNetworkArgs args, const PackedLong packed,
                                                          const unsigned long long *composite,
                                                          const uint32_t *positions, const K *key_copy,
                                                          const void *value_copy) {
    using V = typename UnsignedBits<kValueBytes == 0 ? 4 : kValueBytes>::type;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t p = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < packed.total; p += stride) {
        const unsigned long long c = composite[p];
        const uint64_t j = packed.key_bits >= 64 ? 0 : c >> packed.key_bits;
        const uint64_t at = packed.begin[j] + (p - packed.first[j]);
        const uint32_t index = positions ? positions[p] : 0;
        // The source element of position p, in packed order.
        const uint64_t source = packed.first[j] + index;
        if (args.keys_out) {
            K key;
            if (args.gather_keys) key = key_copy[source];
            else key = from_radix_key<K>(K(c & low_mask(packed.key_bits)), args.kind, args.descending);
            static_cast<K *>(args.keys_out)[at] = key;
        }
        if constexpr (kValueBytes != 0) {
            if (args.values == SegmentValueSource::kCopy)
                static_cast<V *>(args.values_out)[at] = static_cast<const V *>(value_copy)[source];
            else if (args.values == SegmentValueSource::kIndex)
                static_cast<V *>(args.values_out)[at] = V(index);
        }
    }
}

// sort_long_packed's side workspace for `count` long segments of `total`
// keys in all.
template <typename K, int kValueBytes, bool kWithIndex>
uint64_t packed_long_bytes(const SegmentNetworkArgs &args, uint64_t count, uint64_t total) {
    WorkspaceLayout layout;
    layout.add(CheckedSize(count, "the long segments' bounds").times(2).plus(1).value(), 8);
    layout.add(total, 8);
    layout.add(kWithIndex ? total : 0, 4);
    layout.add(args.gather_keys ? total : 0, sizeof(K));
    layout.add(args.values == SegmentValueSource::kCopy ? total : 0, kValueBytes);
    return layout.bytes();
}

// sort_long_packed's flat sort of `total` composite keys of end_bit bits,
// in place, carrying their positions when with_positions.
SortRequest composite_sort(unsigned long long *composite, uint32_t *positions, uint64_t total, uint32_t end_bit,
                           bool with_positions) {
    SortRequest flat{};
    flat.key_kind = KeyKind::Unsigned;
    flat.key_bytes = 8;
    flat.end_bit = end_bit;
    flat.keys_in = composite;
    flat.keys_out = composite;
    if (with_positions) {
        flat.value_bytes = 4;
        flat.values_in = positions;
        flat.values_out = positions;
    }
    flat.count = total;
    return flat;
}

template <typename K, int kValueBytes, bool kWithIndex>
bool sort_long_packed(const DeviceEnv &env, const SegmentNetworkArgs &args,
                      const std::vector<unsigned long long> &long_bounds) {
    const uint64_t count = long_bounds.size() / 2;
    if (count == 0) return true;
    uint32_t id_bits = 0;
    while (id_bits < 64 && (uint64_t(1) << id_bits) < count) ++id_bits;
    const uint32_t key_bits = args.gather_keys ? args.range_bits : uint32_t(8 * sizeof(K));
    if (key_bits + id_bits > 64) return false;
    // first[count + 1], then begin[count]
    std::vector<unsigned long long> host =
        host_array<unsigned long long>(CheckedSize(count, "the long segments' bounds").times(2).plus(1).value(),
                                       "the long segments' bounds");
    uint64_t total = 0;
    uint64_t longest = 0;
    for (uint64_t j = 0; j < count; ++j) {
        host[j] = total;
        host[count + 1 + j] = long_bounds[2 * j];
        const uint64_t length = long_bounds[2 * j + 1] - long_bounds[2 * j];
        total += length;
        longest = std::max(longest, length);
    }
    host[count] = total;
    if (longest > UINT32_MAX) return false;  // positions are 32-bit
    const bool with_positions = kWithIndex;
    WorkspaceLayout layout;
    const WorkspacePart table_part = layout.add(host.size(), 8);
    const WorkspacePart composite_part = layout.add(total, 8);
    const WorkspacePart positions_part = layout.add(with_positions ? total : 0, 4);
    const WorkspacePart keys_part = layout.add(args.gather_keys ? total : 0, sizeof(K));
    const WorkspacePart values_part = layout.add(args.values == SegmentValueSource::kCopy ? total : 0, kValueBytes);
    void *side = env.side_workspace->reserve(layout.bytes());
    auto *table = WorkspaceLayout::at<unsigned long long>(side, table_part);
    if (env.measuring) {  // a query: what is left to record is the flat sort's main block
        sort(env, composite_sort(WorkspaceLayout::at<unsigned long long>(side, composite_part),
                                 WorkspaceLayout::at<uint32_t>(side, positions_part), total, key_bits + id_bits,
                                 with_positions));
        return true;
    }
    check(cudaMemcpyAsync(table, host.data(), host.size() * 8, cudaMemcpyHostToDevice, env.stream),
          "segmented sort (cudaMemcpyAsync)");
    PackedLong packed{table, table + count + 1, count, total, key_bits};
    auto *composite = WorkspaceLayout::at<unsigned long long>(side, composite_part);
    auto *positions = WorkspaceLayout::at<uint32_t>(side, positions_part);
    auto *key_copy = WorkspaceLayout::at<K>(side, keys_part);
    void *value_copy = WorkspaceLayout::at<void>(side, values_part);
    const uint32_t blocks = uint32_t(std::min<uint64_t>((total + 255) / 256, uint64_t(env.sm_count) * 16));
    pack_long_kernel<K, kValueBytes><<<blocks, 256, 0, env.stream>>>(args, packed, composite, positions, key_copy,
                                                                     value_copy);
    check_launch("segmented sort pack launch");
    // Ascending: the composite keys are already in sort order.
    sort(env, composite_sort(composite, positions, total, key_bits + id_bits, with_positions));
    unpack_long_kernel<K, kValueBytes><<<blocks, 256, 0, env.stream>>>(args, packed, composite, positions, key_copy,
                                                                       value_copy);
    check_launch("segmented sort unpack launch");
    return true;
}

// Offsets whose lengths (at most `longest`) are alike enough that one
// network size for all wastes little: one launch, no classes (a small call
// then costs the offsets check and one launch).
bool fits_one_network(const SegmentLayout &layout, uint64_t longest, uint32_t largest) {
    // In 128 bits: segments times the network passes 64 bits past 2^52 segments.
    using Wide = unsigned __int128;
    return layout.offsets && longest <= largest &&
           Wide(layout.segments) * network_for(longest) <= Wide(4) * std::max<uint64_t>(layout.data_count, 1024);
}

// A workspace query's long class (offsets not read): at most
// min(segments, n / (largest + 1)) segments past the largest network, n keys
// in all, any of them as long as the data. Every path the class may take
// (it depends on the lengths) records the most it can reserve: the
// segmented radix sort, the packed sort and its flat sort, the flat sort of
// one segment.
template <typename K, int kValueBytes, bool kWithIndex>
void measure_long_class(const DeviceEnv &env, const SortRequest &work, const SegmentNetworkArgs &args,
                        uint64_t segments, uint64_t longest, uint32_t largest) {
    const uint64_t n = work.count;
    if (longest <= largest) return;  // no segment can pass the networks (longest: a bound)
    const uint64_t count = std::min<uint64_t>(segments, n / (uint64_t(largest) + 1));
    segmented_radix_sort_bound(env, work, count);
    void *side = env.side_workspace->reserve(packed_long_bytes<K, kValueBytes, kWithIndex>(args, count, n));
    // 63 bits: a bit range, which takes the radix path whatever the count,
    // as the composite keys of fewer than 64 bits do. The long segments hold
    // up to n keys in all, and one of them up to n: any count up to n.
    sort_bound(env, composite_sort(static_cast<unsigned long long *>(side), static_cast<uint32_t *>(side), n, 63,
                                   kWithIndex));
    sort_bound(env, slice(work, 0, n));
}

// The long segments' sorts, by the first path that takes them: one
// segmented radix sort, one packed flat sort, a flat sort each. keys_out:
// the caller's (NULL for an argsort without keys: the unpack writes none).
template <typename K, int kValueBytes, bool kWithIndex>
void sort_long_class(const DeviceEnv &env, const SortRequest &work, SegmentNetworkArgs args, void *keys_out,
                     const std::vector<unsigned long long> &long_bounds) {
    if (segmented_radix_sort(env, work, long_bounds.data(), long_bounds.size() / 2)) return;
    args.keys_out = keys_out;
    if (sort_long_packed<K, kValueBytes, kWithIndex>(env, args, long_bounds)) return;
    for (size_t i = 0; i < long_bounds.size(); i += 2) sort(env, slice(work, long_bounds[i], long_bounds[i + 1]));
}

template <typename K, int kValueBytes, bool kWithIndex>
void sort_segments(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout,
                   const SegmentSummary &summary) {
    SegmentNetworkArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.values_in = request.values_in;
    args.values_out = request.values_out;
    args.values = request.values_are_indices ? SegmentValueSource::kIndex
                  : request.value_bytes != 0 ? SegmentValueSource::kCopy
                                             : SegmentValueSource::kNone;
    args.gather_keys = !sorts_whole_key(request);
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.begin_bit = request.begin_bit;
    args.range_bits = sort_end_bit(request) - request.begin_bit;
    args.bounds = SegmentBounds::of(layout);
    const uint32_t largest = largest_network<K, kValueBytes, kWithIndex>(env);

    // Side workspace (the flat sort of a long segment reserves
    // env.workspace): the keys of an argsort that does not return them, then
    // the class lists (4-byte ids while they fit), their counts and the
    // bounds of the long segments.
    const bool wide = layout.segments > UINT32_MAX;
    const uint64_t id_bytes = wide ? 8 : 4;
    const uint64_t room = layout.offsets ? layout.segments : 0;
    WorkspaceLayout side_layout;
    const WorkspacePart scratch_part = side_layout.add(request.keys_out ? 0 : request.count, request.key_bytes);
    const bool one_network = fits_one_network(layout, summary.longest, largest);
    if (summary.in_kernel.offsets && !one_network)
        fail(GPUPRIM_ERROR_INTERNAL, "segmented sort: an offsets check in the kernel, but not one network");
    const bool classes = layout.offsets && !one_network;
    const WorkspacePart counts_part = side_layout.add(classes ? (kClasses + 1) * 8 : 0);
    const WorkspacePart long_part = side_layout.add(classes && summary.longest > largest ? room : 0, 16);
    const WorkspacePart lists_part = side_layout.add(classes ? room : 0, uint64_t(kClasses) * id_bytes);
    void *side = side_layout.bytes() ? env.side_workspace->reserve(side_layout.bytes()) : nullptr;
    SortRequest work = request;
    if (!work.keys_out) work.keys_out = WorkspaceLayout::at<void>(side, scratch_part);
    args.keys_out = work.keys_out;

    std::vector<unsigned long long> long_bounds;  // (begin, end) of each long segment
    if (!layout.offsets) {
        if (layout.row_length <= largest) {
            args.groups = layout.segments;
            args.network = network_for(layout.row_length);
            launch_network_sort<K, kValueBytes, kWithIndex>(env, args);
            return;
        }
        // Nothing of this call is enqueued yet: the long rows' paths stage
        // tables from host memory, which a graph cannot replay.
        if (!env.measuring)  // a query stages nothing
            refuse_during_capture(env.stream, "segmented sort",
                                  "rows longer than the sorting networks' stage their bounds from host memory");
        for (uint64_t s = 0; s < layout.segments; ++s) {
            long_bounds.push_back(s * layout.row_length);
            long_bounds.push_back((s + 1) * layout.row_length);
        }
    } else if (one_network) {
        args.groups = layout.segments;
        args.network = network_for(summary.longest);
        args.in_kernel = summary.in_kernel;
        launch_network_sort<K, kValueBytes, kWithIndex>(env, args);
        return;
    } else {
        if (env.measuring)
            return measure_long_class<K, kValueBytes, kWithIndex>(env, work, args, layout.segments,
                                                                  summary.longest, largest);
        unsigned long long *counts = nullptr, *long_device = nullptr;
        void *lists = nullptr;
        // The class lists, their counts and the long segments' bounds, in
        // the side block at `side` (the argsort's scratch keys there too).
        auto classify = [&] {
            counts = WorkspaceLayout::at<unsigned long long>(side, counts_part);
            long_device = WorkspaceLayout::at<unsigned long long>(side, long_part);
            lists = WorkspaceLayout::at<void>(side, lists_part);
            if (!request.keys_out) work.keys_out = args.keys_out = WorkspaceLayout::at<void>(side, scratch_part);
            check(cudaMemsetAsync(counts, 0, (kClasses + 1) * 8, env.stream), "segmented sort (cudaMemsetAsync)");
            const uint32_t blocks =
                uint32_t(std::max<uint64_t>(1, std::min<uint64_t>((room + 255) / 256, uint64_t(env.sm_count) * 8)));
            if (wide)
                segment_classify_kernel<unsigned long long><<<blocks, 256, 0, env.stream>>>(
                    args.bounds, largest, static_cast<unsigned long long *>(lists), room, counts, long_device);
            else
                segment_classify_kernel<uint32_t><<<blocks, 256, 0, env.stream>>>(
                    args.bounds, largest, static_cast<uint32_t *>(lists), room, counts, long_device);
            check_launch("segmented sort classify launch");
        };
        classify();
        args.list_wide = wide;
        if (summary.skip && summary.longest <= largest) {
            // Deferred check, no segment past the networks: the classes'
            // sizes stay on the device. Each class's launch is sized by the
            // most segments of its lengths the data holds, and its blocks
            // past the class's count return at once.
            for (int c = 0; c < kClasses; ++c) {
                const uint64_t shortest = c == 0 ? 0 : (uint64_t(kMinNetwork) << (c - 1)) + 1;
                if (shortest > summary.longest) break;
                args.list = static_cast<const char *>(lists) + uint64_t(c) * room * id_bytes;
                args.groups = c == 0 ? layout.segments : std::min(layout.segments, layout.data_count / shortest);
                args.group_count = counts + c;
                args.network = kMinNetwork << c;
                launch_network_sort<K, kValueBytes, kWithIndex>(env, args);
            }
            return;
        }
        unsigned long long host_counts[kClasses + 1];
        check(cudaMemcpyAsync(host_counts, counts, sizeof host_counts, cudaMemcpyDeviceToHost, env.stream),
              "segmented sort (cudaMemcpyAsync)");
        check(cudaStreamSynchronize(env.stream), "segmented sort (cudaStreamSynchronize)");
        if (host_counts[kLongClass] != 0) {
            long_bounds.resize(2 * host_counts[kLongClass]);
            check(cudaMemcpyAsync(long_bounds.data(), long_device, long_bounds.size() * 8, cudaMemcpyDeviceToHost,
                                  env.stream),
                  "segmented sort (cudaMemcpyAsync)");
            check(cudaStreamSynchronize(env.stream), "segmented sort (cudaStreamSynchronize)");
            // Before any segment is written, the long segments' sorts take
            // their workspace, so that a shortage fails the call with the
            // outputs untouched. A side block that must grow moves, and the
            // lists are made again in the new one (the same classes; the
            // long bounds read above stay valid whatever their order).
            const WorkspaceNeeds needs = workspace_needs(env, [&](const DeviceEnv &recording) {
                sort_long_class<K, kValueBytes, kWithIndex>(recording, work, args, request.keys_out, long_bounds);
            });
            env.workspace->reserve(needs.main_bytes);
            if (needs.side_bytes > env.side_workspace->capacity()) {
                side = env.side_workspace->reserve(std::max(needs.side_bytes, side_layout.bytes()));
                classify();
            }
        }
        for (int c = 0; c < kClasses; ++c) {
            if (host_counts[c] == 0) continue;
            args.list = static_cast<const char *>(lists) + uint64_t(c) * room * id_bytes;
            args.groups = host_counts[c];
            args.network = kMinNetwork << c;
            launch_network_sort<K, kValueBytes, kWithIndex>(env, args);
        }
    }
    sort_long_class<K, kValueBytes, kWithIndex>(env, work, args, request.keys_out, long_bounds);
}

// The longest segment this request's networks sort (as sort_segments
// picks them), known before the call enqueues anything.
uint32_t largest_network_for(const DeviceEnv &env, const SortRequest &request) {
    uint32_t largest = 0;
    dispatch_width(request.key_bytes, "segmented sort: unsupported key width", [&](auto key_bits) {
        using K = decltype(key_bits);
        if (request.value_bytes == 0) {
            largest = sorts_whole_key(request) ? largest_network<K, 0, false>(env)
                                               : largest_network<K, int(sizeof(K)), true>(env);
            return;
        }
        dispatch_width(request.value_bytes, "segmented sort: unsupported value width", [&](auto value_bits) {
            largest = largest_network<K, int(sizeof(value_bits)), true>(env);
        });
    });
    return largest;
}

template <typename K>
void dispatch_values(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout,
                     const SegmentSummary &summary) {
    const bool whole = sorts_whole_key(request);
    if (request.value_bytes == 0) {
        if (whole) return sort_segments<K, 0, false>(env, request, layout, summary);
        // A bit range without values: the keys' own width carries the index.
        return sort_segments<K, int(sizeof(K)), true>(env, request, layout, summary);
    }
    dispatch_width(request.value_bytes, "segmented sort: unsupported value width", [&](auto value_bits) {
        sort_segments<K, int(sizeof(value_bits)), true>(env, request, layout, summary);
    });
}

}  // namespace

void segmented_sort(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout) {
    if (!is_dtype_width(request.key_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "segmented sort: unsupported key width %u", request.key_bytes);
    // An argsort's check also holds each segment's last index to the
    // indices' type.
    const uint64_t largest_index = request.values_are_indices ? request.largest_index : UINT64_MAX;
    // Deferred: the long segments' sorts read their bounds back to the host
    // (sort_segments), which a graph cannot replay. Refused while nothing of
    // the call is enqueued yet (a query enqueues nothing: not refused).
    const bool deferred = check_is_deferred(env, layout);
    const uint32_t largest = layout.offsets ? largest_network_for(env, request) : 0;
    const uint64_t bound = longest_segment_bound(layout, largest_index);
    if (deferred && bound > largest && !env.measuring)
        refuse_during_capture(env.stream, "segmented sort",
                              "its CSR offsets may hold segments longer than the largest sorting network (4096 "
                              "keys at most), whose sort reads their bounds back to the host (promise shorter "
                              "segments with segments->max_segment_length)");
    // One network for all by the bound: its kernel checks a small offsets
    // array itself (in waiting mode too: no wait between a check and it).
    const SegmentSummary summary = can_check_in_kernel(env, layout) && layout.segments != 0 &&
                                           request.count != 0 && fits_one_network(layout, bound, largest)
                                       ? check_in_kernel(env, layout, largest_index)
                                       : check_segments(env, layout, largest_index);
    if (layout.segments == 0 || request.count == 0) return;
    // Only what the segments cover is sorted: scratch and tiles follow it.
    SortRequest covered = request;
    covered.count = summary.covered_length;
    covered.keys_in = at_covered(request.keys_in, summary, request.key_bytes);
    covered.keys_out = at_covered(request.keys_out, summary, request.key_bytes);
    covered.values_in = at_covered(request.values_in, summary, request.value_bytes);
    covered.values_out = at_covered(request.values_out, summary, request.value_bytes);
    const SegmentLayout narrowed = narrowed_to_covered(layout, summary);
    dispatch_width(request.key_bytes, "segmented sort: unsupported key width",
                   [&](auto key_bits) { dispatch_values<decltype(key_bits)>(env, covered, narrowed, summary); });
    await_in_kernel_check(env, layout, summary);
}

}  // namespace gpuprim::cuda
