// SPDX-License-Identifier: Apache-2.0
// CUB DeviceMerge on check_merge's buffers: the bar for the merge of two
// sorted runs (keys u32, or pairs u32/u32 when values is non-null).
#include "harness.h"

#include <cub/device/device_merge.cuh>
#include <cub/version.cuh>

// Median ms of reps merges of keys[copy][0, first_count) and
// keys[copy][first_count, n) into keys_out (values alike), after warm-ups.
double cub_merge_ms(cudaStream_t stream, void *const keys[3], void *const values[3], uint64_t first_count,
                    uint64_t n, void *keys_out, void *values_out, int reps, int *cub_version) {
    *cub_version = CUB_VERSION;
    const auto second_count = static_cast<int64_t>(n - first_count);
    const auto first = static_cast<int64_t>(first_count);
    auto *out_keys = static_cast<uint32_t *>(keys_out);
    auto *out_values = static_cast<uint32_t *>(values_out);
    auto call = [&](void *temp, size_t &temp_bytes, int copy) {
        const auto *k = static_cast<const uint32_t *>(keys[copy]);
        if (values) {
            const auto *v = static_cast<const uint32_t *>(values[copy]);
            return cub::DeviceMerge::MergePairs(temp, temp_bytes, k, v, first, k + first, v + first, second_count,
                                                out_keys, out_values, cuda::std::less<uint32_t>{}, stream);
        }
        return cub::DeviceMerge::MergeKeys(temp, temp_bytes, k, first, k + first, second_count, out_keys,
                                           cuda::std::less<uint32_t>{}, stream);
    };
    size_t temp_bytes = 0;
    CK(call(nullptr, temp_bytes, 0));
    void *temp = nullptr;
    CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    const double ms = kernel_check::median_ms(stream, reps, [&](int copy) {
        size_t bytes = temp_bytes;
        CK(call(temp, bytes, copy));
    });
    CK(cudaStreamSynchronize(stream));
    CK(cudaFree(temp));
    return ms;
}
