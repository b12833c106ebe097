// SPDX-License-Identifier: Apache-2.0
// gpuprim::cuda::sort: picks the path by size (thresholds in sort_policy.cuh).
// Up to 4096 keys: one block, by a bitonic network (block_sort.cu; keys
// alone, pairs up to 2048) or radix passes (block_radix_sort.cu; pairs past
// 2048, bit ranges). Up to 128 tiles of 2048 keys: the whole radix sort in
// one cooperative launch. Beyond: Onesweep, one histogram kernel and one
// kernel per pass, with a small tile up to 2^19 keys and a large one after
// (radix_sort.cu).
#include "cuda/sort/sort.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "cuda/sort/block_sort.cuh"
#include "cuda/device_env.h"
#include "cuda/sort/radix_sort.cuh"
#include "cuda/sort/sort_policy.cuh"

namespace gpuprim::cuda {
namespace {

// An argsort on the radix path: the pass kernels make the values (the keys'
// positions) in the first pass, where a pair sort reads values_in. Keys not
// returned go to the side workspace (the passes before the last need the
// room), and the last pass leaves them unwritten.
SortRequest argsort_as_pairs(const DeviceEnv &env, const SortRequest &request) {
    SortRequest pairs = request;
    pairs.values_in = nullptr;
    if (!pairs.keys_out) {
        pairs.keys_out =
            env.side_workspace->reserve(checked_mul(request.count, request.key_bytes, "argsort's sorted keys"));
        pairs.keys_discarded = true;
    }
    return pairs;
}

}  // namespace

void sort(const DeviceEnv &env, const SortRequest &request) {
    if (!is_dtype_width(request.key_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "sort: unsupported key width %u", request.key_bytes);
    if (request.value_bytes != 0 && !is_dtype_width(request.value_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "sort: unsupported value width %u", request.value_bytes);
    if (request.count == 0) return;
    const SortTuning tuning = sort_tuning(env.code_arch, request.key_bytes, request.value_bytes);
    if (request.values_are_indices && request.value_bytes != 4 && request.value_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "argsort: unsupported index width %u", request.value_bytes);
    if (request.count <= tuning.block_sort_max) {
        // The network compares whole keys: a bit range takes radix passes.
        const bool network = request.count <= tuning.block_network_max && sorts_whole_key(request);
        if (network && block_sort_fits(env, request)) return block_sort(env, request);
        if (block_radix_sort_fits(env, request)) return block_radix_sort(env, request);
    }
    if (request.values_are_indices) return radix_sort(env, argsort_as_pairs(env, request), tuning);
    radix_sort(env, request, tuning);
}

void sort_bound(const DeviceEnv &env, const SortRequest &request) {
    if (!env.measuring) fail(GPUPRIM_ERROR_INTERNAL, "sort_bound: not in a workspace query");
    DeviceEnv any_count = env;
    any_count.measuring_any_count = true;
    SortRequest part = request;
    for (uint64_t count = 1; count < request.count; count <<= 1) {
        part.count = count;
        sort(any_count, part);
    }
    sort(any_count, request);
}

}  // namespace gpuprim::cuda
