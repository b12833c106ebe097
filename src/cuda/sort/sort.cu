// SPDX-License-Identifier: Apache-2.0
// gpuprim::cuda::sort: picks the path by size (thresholds in sort_policy.cuh).
// Up to 4096 keys (2048 for 8-byte keys with values): one block, bitonic in
// registers and shared memory (block_sort.cu). Up to 128 tiles of 2048 keys:
// the whole radix sort in one cooperative launch. Beyond: Onesweep, one
// histogram kernel and one kernel per pass, with a small tile up to 2^19
// keys and a large one after (radix_sort.cu).
#include "core/dtype.h"
#include "cuda/sort/block_sort.cuh"
#include "cuda/device_env.h"
#include "cuda/sort/radix_sort.cuh"
#include "cuda/sort/sort_policy.cuh"
#include "cuda/util/check.h"

#include <algorithm>

namespace gpuprim::cuda {
namespace {

template <typename V>
__global__ void fill_positions_kernel(V *values, uint64_t count) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) values[i] = V(i);
}

// An argsort on the radix path: the positions are written to the indices and
// sorted in place with the keys (the block sort generates them itself).
// Keys not returned go to the side workspace.
SortRequest argsort_as_pairs(const DeviceEnv &env, const SortRequest &request) {
    SortRequest pairs = request;
    const uint32_t blocks =
        uint32_t(std::min<uint64_t>((request.count + 255) / 256, uint64_t(env.sm_count) * 16));
    if (request.value_bytes == 4)
        fill_positions_kernel<<<blocks, 256, 0, env.stream>>>(static_cast<uint32_t *>(request.values_out),
                                                              request.count);
    else
        fill_positions_kernel<<<blocks, 256, 0, env.stream>>>(
            static_cast<unsigned long long *>(request.values_out), request.count);
    check_launch("argsort positions launch");
    pairs.values_in = request.values_out;
    pairs.values_are_indices = false;
    if (!pairs.keys_out) pairs.keys_out = env.side_workspace->reserve(request.count * request.key_bytes);
    return pairs;
}

}  // namespace

void sort(const DeviceEnv &env, const SortRequest &request) {
    if (!is_dtype_width(request.key_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "sort: unsupported key width %u", request.key_bytes);
    if (request.value_bytes != 0 && !is_dtype_width(request.value_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "sort: unsupported value width %u", request.value_bytes);
    if (request.count == 0) return;
    const SortTuning tuning = sort_tuning(env.compute_capability, request.key_bytes, request.value_bytes);
    if (request.values_are_indices && request.value_bytes != 4 && request.value_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "argsort: unsupported index width %u", request.value_bytes);
    if (request.count <= tuning.block_sort_max && block_sort_fits(env, request))
        return block_sort(env, request);
    if (request.values_are_indices) return radix_sort(env, argsort_as_pairs(env, request), tuning);
    radix_sort(env, request, tuning);
}

}  // namespace gpuprim::cuda
