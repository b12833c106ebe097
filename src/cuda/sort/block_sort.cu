// SPDX-License-Identifier: Apache-2.0
// Small inputs: one block, one launch. Keys become radix keys paired with
// their input index (equal keys stay in input order), a bitonic network sorts
// the pairs in registers and shared memory (block/block_bitonic_sort.cuh),
// and values are gathered by index from a shared-memory copy, so in-place
// calls are safe: everything is read before anything is written. Without
// values the network sorts the bare radix keys: equal radix keys are equal
// input bits, so their order is invisible, and half the shuffles and compares
// go (the index doubled a 4-byte item).
#include "cuda/sort/block_sort.cuh"

#include "core/dtype.h"
#include "core/key_transform.h"
#include "cuda/block/block_bitonic_sort.cuh"
#include "cuda/sort/sort_policy.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace gpuprim::cuda {
namespace {

struct BlockSortArgs {
    const void *keys_in;
    void *keys_out;         // NULL: an argsort that does not return the keys
    const void *values_in;  // NULL: an argsort (the values are the positions)
    void *values_out;
    uint32_t count;
    KeyKind kind;
    bool descending;
};

template <int kValueBytes>
using BlockSortValue = typename UnsignedBits<kValueBytes == 0 ? 4 : kValueBytes>::type;

// The network's key: 1- and 2-byte radix keys ride as 32-bit ones (a
// padding key, all ones, then still sorts after every real key).
template <typename K>
using NetworkKey = std::conditional_t<sizeof(K) < 4, uint32_t, K>;

constexpr int kItemsPerThread = kBlockSortItemsPerThread;
constexpr uint32_t kMinNetwork = 32 * kItemsPerThread;  // one whole warp

// What the network sorts: bare radix keys, or keys with their input index.
template <typename K, int kValueBytes>
using BlockSortItem = std::conditional_t<kValueBytes == 0, NetworkKey<K>, SortKeyIndex<NetworkKey<K>>>;

template <typename K, int kValueBytes>
using Sorter = BlockBitonicSort<BlockSortItem<K, kValueBytes>, kItemsPerThread>;

template <typename K, int kValueBytes>
size_t block_sort_shared_bytes(uint32_t network) {
    return 2 * size_t(Sorter<K, kValueBytes>::buffer_items(network)) * sizeof(BlockSortItem<K, kValueBytes>) +
           size_t(network) * kValueBytes;
}

template <typename K, int kValueBytes>
__global__ void __launch_bounds__(kBlockSortMaxThreads) block_sort_kernel(const BlockSortArgs args) {
    using Item = BlockSortItem<K, kValueBytes>;
    using V = BlockSortValue<kValueBytes>;
    constexpr int kItems = kItemsPerThread;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const uint32_t network = blockDim.x * kItems;
    Item *buffers = reinterpret_cast<Item *>(shared_bytes);
    V *staged_values = reinterpret_cast<V *>(buffers + 2 * Sorter<K, kValueBytes>::buffer_items(network));

    // Coalesced loads: slot e of thread t takes input e * blockDim.x + t (any
    // assignment works: the index travels with the key).
    const K *keys_in = static_cast<const K *>(args.keys_in);
    Item items[kItems];
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t i = uint32_t(e) * blockDim.x + threadIdx.x;
        // Padding sorts after every key: largest radix key, larger index
        // (bare keys: a padding key equal to a real one is the same bits, so
        // the first count positions are right either way).
        using N = NetworkKey<K>;
        items[e] = i < args.count
                       ? sort_item_of<Item>(N(to_radix_key<K>(keys_in[i], args.kind, args.descending)), i)
                       : sort_item_of<Item>(~N(0), i);
    }
    if constexpr (kValueBytes != 0) {
        // An argsort's values are the input positions themselves.
        const V *values_in = static_cast<const V *>(args.values_in);
        for (uint32_t i = threadIdx.x; i < args.count; i += blockDim.x)
            staged_values[i] = values_in ? values_in[i] : V(i);
    }
    __syncthreads();  // all inputs read before any output is written

    Sorter<K, kValueBytes>::sort(items, buffers);
    if constexpr (kValueBytes != 0) __syncthreads();  // staged values complete

    K *keys_out = static_cast<K *>(args.keys_out);
    V *values_out = static_cast<V *>(args.values_out);
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t i = threadIdx.x * kItems + e;
        if (i < args.count) {
            if (keys_out)  // an argsort may not want the keys
                keys_out[i] = from_radix_key<K>(K(sort_item_key_of<NetworkKey<K>>(items[e])), args.kind, args.descending);
            if constexpr (kValueBytes != 0) values_out[i] = staged_values[sort_item_index(items[e])];
        }
    }
}

uint32_t network_size(uint64_t count) {
    uint32_t network = kMinNetwork;
    while (network < count) network <<= 1;
    return network;
}

template <typename K, int kValueBytes>
void launch_block_sort(const DeviceEnv &env, const SortRequest &request) {
    BlockSortArgs args{};
    args.keys_in = request.keys_in;
    args.keys_out = request.keys_out;
    args.values_in = request.values_in;
    args.values_out = request.values_out;
    args.count = uint32_t(request.count);
    args.kind = request.key_kind;
    args.descending = request.descending;
    const uint32_t network = network_size(request.count);
    const size_t shared = block_sort_shared_bytes<K, kValueBytes>(network);
    auto kernel = block_sort_kernel<K, kValueBytes>;
    const int threads = int(network / kItemsPerThread);
    if (shared > 48 * 1024 &&  // the opt-in, once per context and shape
        resident_blocks(env, reinterpret_cast<const void *>(kernel), threads, shared, "block sort shared memory") == 0)
        fail(GPUPRIM_ERROR_INTERNAL, "block sort: %u keys do not fit this device's shared memory", network);
    if (env.measuring) return;
    kernel<<<1, threads, shared, env.stream>>>(args);
    check_launch("block sort launch");
}

template <typename K>
void dispatch_values(const DeviceEnv &env, const SortRequest &request) {
    if (request.value_bytes == 0) return launch_block_sort<K, 0>(env, request);
    dispatch_width(request.value_bytes, "block sort: unsupported value width", [&](auto value_bits) {
        launch_block_sort<K, int(sizeof(value_bits))>(env, request);
    });
}

}  // namespace

bool block_sort_fits(const DeviceEnv &env, const SortRequest &request) {
    if (request.count > uint64_t(kBlockSortMaxThreads) * kItemsPerThread) return false;
    // The network compares whole keys: a bit range takes the radix path.
    if (!sorts_whole_key(request)) return false;
    const uint32_t network = network_size(request.count);
    // Bare keys without values, else key and index (packed to twice the key's width).
    const uint64_t key_bytes = std::max<uint64_t>(request.key_bytes, 4);  // NetworkKey
    const uint64_t item_bytes = request.value_bytes == 0 ? key_bytes : 2 * key_bytes;
    const uint64_t shared = 2 * uint64_t(network + network / 16) * item_bytes + uint64_t(network) * request.value_bytes;
    return shared <= std::max<uint64_t>(48 * 1024, env.max_shared_per_block_optin);
}

void block_sort(const DeviceEnv &env, const SortRequest &request) {
    dispatch_width(request.key_bytes, "block sort: unsupported key width",
                   [&](auto key_bits) { dispatch_values<decltype(key_bits)>(env, request); });
}

}  // namespace gpuprim::cuda
