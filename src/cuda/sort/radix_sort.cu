// SPDX-License-Identifier: Apache-2.0
// The radix path's entry point: 4- and 8-byte keys here, 1- and 2-byte keys
// in radix_sort_narrow.cu (radix_sort_by_width.cuh instantiates both).
#include "cuda/sort/radix_sort_by_width.cuh"

namespace gpuprim::cuda {

void radix_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    switch (request.key_bytes) {
    case 1:
    case 2: return radix_sort_narrow_keys(env, request, tuning);
    case 4: return radix_detail::sort_by_values<uint32_t>(env, request, tuning);
    case 8: return radix_detail::sort_by_values<uint64_t>(env, request, tuning);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "radix sort: unsupported key width %u", request.key_bytes);
}

}  // namespace gpuprim::cuda
