// SPDX-License-Identifier: Apache-2.0
// Segmented sort (keys, pairs, argsort) on CUDA.
//
// Segments of up to kMaxNetwork keys sort in registers and shared memory: a
// bitonic network of N positions (N the segment's length rounded up to a
// power of two, at least kItems) per segment, N / kItems threads a segment,
// as many segments a block as fit kBlockPositions (block/
// block_bitonic_sort.cuh, sort_groups). Items are radix keys (keys only, as
// the flat block sort) or radix keys with their position in the segment,
// which makes them distinct (stable) and tells where values, generated
// indices, and, for a bit range, the keys themselves come from. Everything a
// segment needs is read before a barrier and written after it, so in-place
// calls are safe.
//
// Uniform rows have one network size. CSR offsets whose lengths are alike
// use one size too; otherwise they are sorted into classes by length first
// (one launch: a list of segment ids per class, counted with atomics, so the
// lists' order varies but not the result), then one launch per non-empty
// class. The bounds of longer segments come back to the host with the class
// counts, and they sort together, by the first of these that takes them:
// - the sort room's segmented Onesweep sort (4- and 8-byte keys; values of
//   none, 4 or 8 bytes): every pass one launch over all their tiles;
// - one flat sort of 64-bit composite keys, the segment's ordinal above the
//   key's bits (1- and 2-byte keys, whose bits leave room for the ordinal);
// - one flat sort call per segment.
//
// Workspace: the class lists live in env.side_workspace (the long segments'
// sorts reserve env.workspace): 4 or 8 bytes per segment and class with
// offsets, plus one copy of the keys when an argsort does not return them;
// the composite path keeps its keys (8 bytes), positions, and copies of the
// keys and values there too.
#include "core/checked_size.h"
#include "core/portable.h"
#include "core/dtype.h"
#include "core/key_transform.h"
#include "cuda/block/block_bitonic_sort.cuh"
#include "cuda/device_env.h"
#include "cuda/util/segment_bounds.cuh"
#include "cuda/util/check.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace gpuprim::cuda {
namespace {

constexpr int kItems = 4;                  // network positions a thread holds
constexpr uint32_t kMinNetwork = kItems;   // one thread a segment
constexpr uint32_t kMaxNetwork = 4096;     // 1024 threads
constexpr uint32_t kBlockPositions = 512;  // a block's positions when segments are short
constexpr int kClasses = 11;               // networks 4, 8, ..., 4096
constexpr int kLongClass = kClasses;       // longer: the long segments' sorts

template <typename K>
using NetworkKey = std::conditional_t<sizeof(K) < 4, uint32_t, K>;

// What the network sorts: bare radix keys (keys only, whole keys), or keys
// with their position in the segment.
template <typename K, bool kWithIndex>
using NetworkItem = std::conditional_t<kWithIndex, SortKeyIndex<NetworkKey<K>>, NetworkKey<K>>;

enum class ValueSource : uint32_t { kNone, kCopy, kIndex };

struct SegmentSortArgs {
    const void *keys_in;
    void *keys_out;  // NULL only for the composite path's unpack (an argsort without keys)
    const void *values_in;
    void *values_out;
    ValueSource values;
    bool gather_keys;  // a bit range: the network holds only the range's bits
    KeyKind kind;
    bool descending;
    uint32_t begin_bit;
    uint32_t range_bits;  // end_bit - begin_bit
    SegmentBounds bounds;
    const void *list;  // segment ids of this class (offsets), or nullptr (rows: segment = group)
    bool list_wide;    // ids are 8 bytes
    uint64_t groups;   // segments this launch sorts
    uint32_t network;  // positions a segment
    // Top-k (network_topk): segment s writes only its first min(k, length)
    // ranks, to [s * topk, ...) of keys_out (if given) and values_out; 0: a sort.
    uint64_t topk;
};

__device__ __forceinline__ uint64_t list_entry(const SegmentSortArgs &args, uint64_t g) {
    if (!args.list) return g;
    if (args.list_wide) return static_cast<const unsigned long long *>(args.list)[g];
    return static_cast<const uint32_t *>(args.list)[g];
}

template <typename K, int kValueBytes, bool kWithIndex>
__global__ void __launch_bounds__(kMaxNetwork / kItems) segment_network_sort_kernel(const SegmentSortArgs args) {
    using N = NetworkKey<K>;
    using Item = NetworkItem<K, kWithIndex>;
    using V = typename UnsignedBits<kValueBytes == 0 ? 4 : kValueBytes>::type;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Item *buffers = reinterpret_cast<Item *>(shared_bytes);

    const uint32_t group_threads = args.network / kItems;
    const uint32_t lane = threadIdx.x % group_threads;  // thread within the segment's group
    const uint64_t group = uint64_t(blockIdx.x) * (blockDim.x / group_threads) + threadIdx.x / group_threads;
    uint64_t s = 0, begin = 0, length = 0;
    if (group < args.groups) {
        s = list_entry(args, group);
        begin = args.bounds.offset(s);
        length = args.bounds.offset(s + 1) - begin;
    }
    const K *keys_in = static_cast<const K *>(args.keys_in) + begin;
    const N range_mask = args.range_bits >= 8 * sizeof(N) ? ~N(0) : N((N(1) << args.range_bits) - 1);

    // Slot e of thread `lane` takes element e * group_threads + lane
    // (coalesced in the group; the index travels with the key). Padding sorts
    // after every key: the largest key, a larger index.
    Item items[kItems];
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t i = uint32_t(e) * group_threads + lane;
        N key = ~N(0);
        if (i < length) {
            key = N(to_radix_key<K>(keys_in[i], args.kind, args.descending));
            if (args.gather_keys) key = N(key >> args.begin_bit) & range_mask;
        }
        items[e] = sort_item_of<Item>(key, i);
    }

    BlockBitonicSort<Item, kItems>::sort_groups(items, buffers, args.network);

    // Groups whose first position has bit `network` set come out descending.
    const uint32_t first = threadIdx.x * kItems;
    const bool reversed = (first & args.network) != 0;
    const uint32_t base = first % args.network;
    K out_keys[kItems];
    V out_values[kItems];
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t rank = reversed ? args.network - 1 - (base + e) : base + e;
        if (rank < length) {
            if constexpr (kWithIndex) {
                const uint32_t index = sort_item_index(items[e]);
                out_keys[e] = args.gather_keys ? keys_in[index]
                                               : from_radix_key<K>(K(sort_item_key_of<N>(items[e])), args.kind,
                                                                   args.descending);
                if constexpr (kValueBytes != 0) {
                    if (args.values == ValueSource::kCopy)
                        out_values[e] = static_cast<const V *>(args.values_in)[begin + index];
                    else
                        out_values[e] = V(index);
                }
            } else {
                out_keys[e] = from_radix_key<K>(K(sort_item_key_of<N>(items[e])), args.kind, args.descending);
            }
        }
    }
    if constexpr (kWithIndex) __syncthreads();  // every input of the block read before any output is written

    const uint64_t out_first = args.topk ? s * args.topk : begin;
    const uint64_t out_count = args.topk ? (length < args.topk ? length : args.topk) : length;
    K *keys_out = static_cast<K *>(args.keys_out) + out_first;
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t rank = reversed ? args.network - 1 - (base + e) : base + e;
        if (rank < out_count) {
            if (args.keys_out) keys_out[rank] = out_keys[e];
            if constexpr (kValueBytes != 0)
                if (args.values != ValueSource::kNone)
                    static_cast<V *>(args.values_out)[out_first + rank] = out_values[e];
        }
    }
}

// Sorts segments into classes by length: class c holds the segments of
// length up to 4 << c; kLongClass the longer ones, whose bounds it also
// writes to long_bounds (begin, end). Slots are counted in shared memory
// first, one global atomic per class and block (a million segments of one
// class on one global counter took 0.9 ms).
template <typename Id>
__global__ void __launch_bounds__(256) segment_classify_kernel(SegmentBounds bounds, uint64_t long_limit, Id *lists,
                                                               uint64_t list_room, unsigned long long *counts,
                                                               unsigned long long *long_bounds) {
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

// Positions a block holds for segments of `network` positions.
uint32_t block_positions(uint32_t network) { return std::max(network, kBlockPositions); }

template <typename K, int kValueBytes, bool kWithIndex>
size_t network_shared_bytes(uint32_t network) {
    using Item = NetworkItem<K, kWithIndex>;
    constexpr uint32_t kWarpItems = 32 * kItems;
    if (network <= kWarpItems) return 0;  // every step in registers and shuffles
    return 2 * size_t(BlockBitonicSort<Item, kItems>::buffer_items(block_positions(network))) * sizeof(Item);
}

template <typename K, int kValueBytes, bool kWithIndex>
void launch_network_sort(const DeviceEnv &env, SegmentSortArgs args) {
    const uint32_t positions = block_positions(args.network);
    const int threads = int(positions / kItems);
    const uint64_t per_block = positions / args.network;
    const uint64_t blocks = ceil_div(args.groups, per_block);
    if (blocks == 0) return;
    if (blocks > 0x7fffffffull) fail(GPUPRIM_ERROR_INTERNAL, "segmented sort: %llu blocks", (unsigned long long)blocks);
    auto kernel = segment_network_sort_kernel<K, kValueBytes, kWithIndex>;
    const size_t shared = network_shared_bytes<K, kValueBytes, kWithIndex>(args.network);
    if (shared > 48 * 1024 &&
        resident_blocks(env, reinterpret_cast<const void *>(kernel), threads, shared, "segmented sort shared memory") == 0)
        fail(GPUPRIM_ERROR_INTERNAL, "segmented sort: a %u-key network does not fit this device's shared memory",
             args.network);
    kernel<<<uint32_t(blocks), threads, shared, env.stream>>>(args);
    check_launch("segmented sort launch");
}

// The largest network this device's shared memory holds for these items.
template <typename K, int kValueBytes, bool kWithIndex>
uint32_t largest_network(const DeviceEnv &env) {
    uint32_t network = kMaxNetwork;
    const size_t limit = std::max<size_t>(48 * 1024, env.max_shared_per_block_optin);
    while (network > kBlockPositions && network_shared_bytes<K, kValueBytes, kWithIndex>(network) > limit)
        network >>= 1;
    return network;
}

uint32_t network_for(uint64_t length) {
    uint32_t network = kMinNetwork;
    while (network < length) network <<= 1;
    return network;
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
__global__ void __launch_bounds__(256) pack_long_kernel(const SegmentSortArgs args, const PackedLong packed,
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
            if (args.values == ValueSource::kCopy)
                static_cast<V *>(value_copy)[p] = static_cast<const V *>(args.values_in)[at];
    }
}

template <typename K, int kValueBytes>
__global__ void __launch_bounds__(256) unpack_long_kernel(const SegmentSortArgs args, const PackedLong packed,
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
            if (args.values == ValueSource::kCopy)
                static_cast<V *>(args.values_out)[at] = static_cast<const V *>(value_copy)[source];
            else if (args.values == ValueSource::kIndex)
                static_cast<V *>(args.values_out)[at] = V(index);
        }
    }
}

template <typename K, int kValueBytes, bool kWithIndex>
bool sort_long_packed(const DeviceEnv &env, const SegmentSortArgs &args,
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
    const WorkspacePart values_part = layout.add(args.values == ValueSource::kCopy ? total : 0, kValueBytes);
    void *side = env.side_workspace->reserve(layout.bytes());
    auto *table = WorkspaceLayout::at<unsigned long long>(side, table_part);
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
    SortRequest flat{};
    flat.key_kind = KeyKind::Unsigned;
    flat.key_bytes = 8;
    flat.begin_bit = 0;
    flat.end_bit = key_bits + id_bits;
    flat.descending = false;  // the composite keys are already in sort order
    flat.keys_in = composite;
    flat.keys_out = composite;
    if (with_positions) {
        flat.value_bytes = 4;
        flat.values_in = positions;
        flat.values_out = positions;
    }
    flat.count = total;
    sort(env, flat);
    unpack_long_kernel<K, kValueBytes><<<blocks, 256, 0, env.stream>>>(args, packed, composite, positions, key_copy,
                                                                       value_copy);
    check_launch("segmented sort unpack launch");
    return true;
}

template <typename K, int kValueBytes, bool kWithIndex>
void sort_segments(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout,
                   const SegmentSummary &summary) {
    SegmentSortArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.values_in = request.values_in;
    args.values_out = request.values_out;
    args.values = request.values_are_indices ? ValueSource::kIndex
                  : request.value_bytes != 0 ? ValueSource::kCopy
                                             : ValueSource::kNone;
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
    // Offsets whose lengths are alike enough that one network size for all
    // wastes little: one launch, no classes (a small call then costs the
    // offsets check and one launch).
    const bool one_network =
        layout.offsets && summary.longest <= largest &&
        layout.segments * uint64_t(network_for(summary.longest)) <= 4 * std::max<uint64_t>(layout.data_count, 1024);
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
        for (uint64_t s = 0; s < layout.segments; ++s) {
            long_bounds.push_back(s * layout.row_length);
            long_bounds.push_back((s + 1) * layout.row_length);
        }
    } else if (one_network) {
        args.groups = layout.segments;
        args.network = network_for(summary.longest);
        launch_network_sort<K, kValueBytes, kWithIndex>(env, args);
        return;
    } else {
        auto *counts = WorkspaceLayout::at<unsigned long long>(side, counts_part);
        auto *long_device = WorkspaceLayout::at<unsigned long long>(side, long_part);
        void *lists = WorkspaceLayout::at<void>(side, lists_part);
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
        unsigned long long host_counts[kClasses + 1];
        check(cudaMemcpyAsync(host_counts, counts, sizeof host_counts, cudaMemcpyDeviceToHost, env.stream),
              "segmented sort (cudaMemcpyAsync)");
        check(cudaStreamSynchronize(env.stream), "segmented sort (cudaStreamSynchronize)");
        args.list_wide = wide;
        for (int c = 0; c < kClasses; ++c) {
            if (host_counts[c] == 0) continue;
            args.list = static_cast<const char *>(lists) + uint64_t(c) * room * id_bytes;
            args.groups = host_counts[c];
            args.network = kMinNetwork << c;
            launch_network_sort<K, kValueBytes, kWithIndex>(env, args);
        }
        if (host_counts[kLongClass] != 0) {
            long_bounds.resize(2 * host_counts[kLongClass]);
            check(cudaMemcpyAsync(long_bounds.data(), long_device, long_bounds.size() * 8, cudaMemcpyDeviceToHost,
                                  env.stream),
                  "segmented sort (cudaMemcpyAsync)");
            check(cudaStreamSynchronize(env.stream), "segmented sort (cudaStreamSynchronize)");
        }
    }
    if (segmented_radix_sort(env, work, long_bounds.data(), long_bounds.size() / 2)) return;
    args.keys_out = request.keys_out;  // may be NULL here: the unpack then writes no keys
    if (sort_long_packed<K, kValueBytes, kWithIndex>(env, args, long_bounds)) return;
    for (size_t i = 0; i < long_bounds.size(); i += 2) sort(env, slice(work, long_bounds[i], long_bounds[i + 1]));
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

bool network_topk(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout, uint64_t longest) {
    if (longest > kMaxNetwork) return false;
    SegmentSortArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.values_out = request.indices;
    args.values = request.indices ? ValueSource::kIndex : ValueSource::kNone;
    args.kind = request.key_kind;
    args.descending = request.descending;
    args.range_bits = request.key_bytes * 8;
    args.bounds = SegmentBounds::of(layout);
    args.groups = layout.segments;
    args.network = network_for(longest);
    args.topk = request.k;
    // Argsort's instantiations: keys with their positions, 4- or 8-byte values.
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

void segmented_sort(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout) {
    if (!is_dtype_width(request.key_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "segmented sort: unsupported key width %u", request.key_bytes);
    const SegmentSummary summary = check_segments(env, layout);
    if (request.values_are_indices && summary.longest > 0 && summary.longest - 1 > request.largest_index)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "segmented argsort: the longest segment has %llu keys; its last index, %llu, does not fit the "
             "indices' type (at most %llu)",
             (unsigned long long)summary.longest, (unsigned long long)(summary.longest - 1),
             (unsigned long long)request.largest_index);
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
}

}  // namespace gpuprim::cuda
