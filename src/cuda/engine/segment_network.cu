// SPDX-License-Identifier: Apache-2.0
// The sorting networks of short segments (segment_network.h): the kernel,
// its launch, and the instances the segmented sort and top-k call.
#include "cuda/engine/segment_network.h"

#include "core/portable.h"
#include "core/dtype.h"
#include "core/key_transform.h"
#include "cuda/block/block_bitonic_sort.cuh"
#include "cuda/engine/in_kernel_check.cuh"
#include "cuda/util/check.h"
#include "cuda/util/grid_limits.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace gpuprim::cuda {
namespace {

constexpr int kItems = 4;                  // network positions a thread holds
constexpr uint32_t kBlockPositions = 512;  // a block's positions when segments are short
static_assert(kMinNetwork == uint32_t(kItems), "the smallest network is one thread's positions");

template <typename K>
using NetworkKey = std::conditional_t<sizeof(K) < 4, uint32_t, K>;

// What the network sorts: bare radix keys (keys only, whole keys), or keys
// with their position in the segment.
template <typename K, bool kWithIndex>
using NetworkItem = std::conditional_t<kWithIndex, SortKeyIndex<NetworkKey<K>>, NetworkKey<K>>;

__device__ __forceinline__ uint64_t list_entry(const SegmentNetworkArgs &args, uint64_t g) {
    if (!args.list) return g;
    if (args.list_wide) return static_cast<const unsigned long long *>(args.list)[g];
    return static_cast<const uint32_t *>(args.list)[g];
}

template <typename K, int kValueBytes, bool kWithIndex>
__global__ void __launch_bounds__(kMaxNetwork / kItems) segment_network_sort_kernel(const SegmentNetworkArgs args) {
    if (args.bounds.skipped()) return;  // offsets failed a deferred check
    if (args.in_kernel.offsets && in_kernel_offsets_fail(args.in_kernel)) return;  // every thread alike
    using N = NetworkKey<K>;
    using Item = NetworkItem<K, kWithIndex>;
    using V = typename UnsignedBits<kValueBytes == 0 ? 4 : kValueBytes>::type;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Item *buffers = reinterpret_cast<Item *>(shared_bytes);

    const uint32_t group_threads = args.network / kItems;
    const uint32_t lane = threadIdx.x % group_threads;  // thread within the segment's group
    const uint64_t block_first = args.group_base + uint64_t(blockIdx.x) * (blockDim.x / group_threads);
    uint64_t groups = args.groups;
    if (args.group_count) groups = min(groups, uint64_t(*args.group_count));
    if (block_first >= groups) return;  // every thread of the block alike
    const uint64_t group = block_first + threadIdx.x / group_threads;
    uint64_t s = 0, begin = 0, length = 0;
    if (group < groups) {
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
                    if (args.values == SegmentValueSource::kCopy)
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
                if (args.values != SegmentValueSource::kNone)
                    static_cast<V *>(args.values_out)[out_first + rank] = out_values[e];
        }
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

}  // namespace

template <typename K, int kValueBytes, bool kWithIndex>
void launch_network_sort(const DeviceEnv &env, SegmentNetworkArgs args) {
    const uint32_t positions = block_positions(args.network);
    const int threads = int(positions / kItems);
    const uint64_t per_block = positions / args.network;
    const uint64_t blocks = ceil_div(args.groups, per_block);
    if (blocks == 0) return;
    auto kernel = segment_network_sort_kernel<K, kValueBytes, kWithIndex>;
    const size_t shared = network_shared_bytes<K, kValueBytes, kWithIndex>(args.network);
    if (shared > 48 * 1024 &&
        resident_blocks(env, reinterpret_cast<const void *>(kernel), threads, shared, "segmented sort shared memory") == 0)
        fail(GPUPRIM_ERROR_INTERNAL, "segmented sort: a %u-key network does not fit this device's shared memory",
             args.network);
    if (env.measuring) return;
    // A grid holds at most 2^31 - 1 blocks: 2^38 segments of up to 4 keys
    // (128 a block) take two launches.
    for (uint64_t first = 0; first < blocks; first += kMaxGridX) {
        args.group_base = first * per_block;
        kernel<<<uint32_t(std::min(kMaxGridX, blocks - first)), threads, shared, env.stream>>>(args);
        check_launch("segmented sort launch");
    }
}

template <typename K, int kValueBytes, bool kWithIndex>
uint32_t largest_network(const DeviceEnv &env) {
    uint32_t network = kMaxNetwork;
    const size_t limit = std::max<size_t>(48 * 1024, env.max_shared_per_block_optin);
    while (network > kBlockPositions && network_shared_bytes<K, kValueBytes, kWithIndex>(network) > limit)
        network >>= 1;
    return network;
}

// The instances: every key width with no values (keys only), or with values
// of every width or generated indices (kWithIndex).
#define GPUPRIM_NETWORK_INSTANCE(key_bytes, value_bytes, with_index)                                             \
    template void launch_network_sort<UnsignedBits<key_bytes>::type, value_bytes, with_index>(const DeviceEnv &, \
                                                                                               SegmentNetworkArgs); \
    template uint32_t largest_network<UnsignedBits<key_bytes>::type, value_bytes, with_index>(const DeviceEnv &);
#define GPUPRIM_NETWORK_INSTANCES(key_bytes)      \
    GPUPRIM_NETWORK_INSTANCE(key_bytes, 0, false) \
    GPUPRIM_NETWORK_INSTANCE(key_bytes, 1, true)  \
    GPUPRIM_NETWORK_INSTANCE(key_bytes, 2, true)  \
    GPUPRIM_NETWORK_INSTANCE(key_bytes, 4, true)  \
    GPUPRIM_NETWORK_INSTANCE(key_bytes, 8, true)
GPUPRIM_NETWORK_INSTANCES(1)
GPUPRIM_NETWORK_INSTANCES(2)
GPUPRIM_NETWORK_INSTANCES(4)
GPUPRIM_NETWORK_INSTANCES(8)
#undef GPUPRIM_NETWORK_INSTANCES
#undef GPUPRIM_NETWORK_INSTANCE

}  // namespace gpuprim::cuda
