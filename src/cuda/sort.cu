// gpuprim::cuda::sort: picks the path by size. Small inputs sort in one block
// (block_sort.cu); everything else runs the Onesweep radix sort
// (radix_sort.cu), with a smaller tile for middle sizes (sort_tuning.cuh).
#include "cuda/block_sort.cuh"
#include "cuda/device_env.h"
#include "cuda/radix_sort.cuh"
#include "cuda/sort_tuning.cuh"

namespace gpuprim::cuda {

void sort(const DeviceEnv &env, const SortRequest &request) {
    if (request.key_bytes != 4 && request.key_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "sort: unsupported key width %u", request.key_bytes);
    if (request.value_bytes != 0 && request.value_bytes != 4 && request.value_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "sort: unsupported value width %u", request.value_bytes);
    if (request.count == 0) return;
    const SortTuning tuning = sort_tuning(env.compute_capability, request.key_bytes, request.value_bytes);
    if (request.count <= tuning.block_sort_max && block_sort_fits(env, request))
        return block_sort(env, request);
    radix_sort(env, request, tuning);
}

}  // namespace gpuprim::cuda
