// Small inputs: one block, one launch. Keys become radix keys paired with
// their input index (equal keys stay in input order), a bitonic network sorts
// the pairs in registers and shared memory (block/sort_block_bitonic.cuh),
// and values are gathered by index from a shared-memory copy, so in-place
// calls are safe: everything is read before anything is written.
#include "cuda/block_sort.cuh"

#include "core/key_transform.h"
#include "cuda/block/sort_block_bitonic.cuh"
#include "cuda/sort_tuning.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace gpuprim::cuda {
namespace {

struct BlockSortArgs {
    const void *keys_in;
    void *keys_out;
    const void *values_in;
    void *values_out;
    uint32_t count;
    uint32_t network;  // power of two >= count
    KeyKind kind;
    bool descending;
};

template <int kValueBytes>
using BlockSortValue = std::conditional_t<kValueBytes == 8, uint64_t, uint32_t>;

template <typename K, int kValueBytes>
size_t block_sort_shared_bytes(uint32_t network) {
    return 2 * size_t(network) * sizeof(SortKeyIndex<K>) + size_t(network) * kValueBytes;
}

template <typename K, int kValueBytes>
__global__ void __launch_bounds__(kBlockSortThreads) block_sort_kernel(const BlockSortArgs args) {
    using Item = SortKeyIndex<K>;
    using V = BlockSortValue<kValueBytes>;
    constexpr int kThreads = kBlockSortThreads;
    constexpr int kItems = kBlockSortMaxItemsPerThread;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    Item *buffers = reinterpret_cast<Item *>(shared_bytes);
    V *staged_values = reinterpret_cast<V *>(buffers + 2 * args.network);

    const K *keys_in = static_cast<const K *>(args.keys_in);
    Item items[kItems];
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t i = uint32_t(e) * kThreads + threadIdx.x;
        if (uint32_t(e) * kThreads < args.network) {
            // Padding sorts after every key: largest radix key, larger index.
            items[e] = i < args.count
                           ? sort_make_item(to_radix_key<K>(keys_in[i], args.kind, args.descending), i)
                           : sort_make_item(~K(0), i);
        }
    }
    if constexpr (kValueBytes != 0) {
        const V *values_in = static_cast<const V *>(args.values_in);
        for (uint32_t i = threadIdx.x; i < args.count; i += blockDim.x) staged_values[i] = values_in[i];
    }
    __syncthreads();  // all inputs read before any output is written

    BlockBitonicSort<Item, kThreads, kItems>::sort(items, args.network, buffers);

    K *keys_out = static_cast<K *>(args.keys_out);
    V *values_out = static_cast<V *>(args.values_out);
#pragma unroll
    for (int e = 0; e < kItems; ++e) {
        const uint32_t i = uint32_t(e) * kThreads + threadIdx.x;
        if (uint32_t(e) * kThreads < args.network && i < args.count) {
            keys_out[i] = from_radix_key<K>(sort_item_key(items[e]), args.kind, args.descending);
            if constexpr (kValueBytes != 0) values_out[i] = staged_values[sort_item_index(items[e])];
        }
    }
}

uint32_t network_size(uint64_t count) {
    uint32_t network = 1;
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
    args.network = network_size(request.count);
    args.kind = request.key_kind;
    args.descending = request.descending;
    const size_t shared = block_sort_shared_bytes<K, kValueBytes>(args.network);
    auto kernel = block_sort_kernel<K, kValueBytes>;
    if (shared > 48 * 1024)
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
              "block sort cudaFuncSetAttribute");
    const uint32_t threads = std::max<uint32_t>(32, std::min<uint32_t>(args.network, kBlockSortThreads));
    kernel<<<1, threads, shared, env.stream>>>(args);
    check_launch("block sort launch");
}

template <typename K>
void dispatch_values(const DeviceEnv &env, const SortRequest &request) {
    switch (request.value_bytes) {
    case 0: return launch_block_sort<K, 0>(env, request);
    case 4: return launch_block_sort<K, 4>(env, request);
    case 8: return launch_block_sort<K, 8>(env, request);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "block sort: unsupported value width %u", request.value_bytes);
}

}  // namespace

bool block_sort_fits(const DeviceEnv &env, const SortRequest &request) {
    if (request.count > uint64_t(kBlockSortThreads) * kBlockSortMaxItemsPerThread) return false;
    const uint64_t network = network_size(request.count);
    const uint64_t item_bytes = request.key_bytes == 4 ? 8 : 16;
    const uint64_t shared = 2 * network * item_bytes + network * request.value_bytes;
    return shared <= std::max<uint64_t>(48 * 1024, env.max_shared_per_block_optin);
}

void block_sort(const DeviceEnv &env, const SortRequest &request) {
    if (request.key_bytes == 4) return dispatch_values<uint32_t>(env, request);
    if (request.key_bytes == 8) return dispatch_values<uint64_t>(env, request);
    fail(GPUPRIM_ERROR_INTERNAL, "block sort: unsupported key width %u", request.key_bytes);
}

}  // namespace gpuprim::cuda
