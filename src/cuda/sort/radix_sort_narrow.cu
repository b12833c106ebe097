// SPDX-License-Identifier: Apache-2.0
// The radix sort of 1- and 2-byte keys (see radix_sort_by_width.cuh).
#include "cuda/sort/radix_sort_by_width.cuh"

namespace gpuprim::cuda {

void radix_sort_narrow_keys(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    if (request.key_bytes == 1) return radix_detail::sort_by_values<uint8_t>(env, request, tuning);
    if (request.key_bytes == 2) return radix_detail::sort_by_values<uint16_t>(env, request, tuning);
    fail(GPUPRIM_ERROR_INTERNAL, "radix sort: %u-byte keys are not narrow", request.key_bytes);
}

}  // namespace gpuprim::cuda
