// SPDX-License-Identifier: Apache-2.0
#include "cuda/util/check.h"

#include "core/error.h"

namespace gpuprim::cuda {

void check(cudaError_t result, const char *what) {
    if (result == cudaSuccess) return;
    // Clear a non-sticky error so the context stays usable (sticky errors,
    // e.g. an illegal address, persist and are reported again by CUDA).
    (void)cudaGetLastError();
    gpuprim_status_t status = result == cudaErrorMemoryAllocation ? GPUPRIM_ERROR_OUT_OF_MEMORY
                                                                  : GPUPRIM_ERROR_DEVICE;
    fail(status, "%s: %s: %s", what, cudaGetErrorName(result), cudaGetErrorString(result));
}

void check_launch(const char *what) { check(cudaGetLastError(), what); }

}  // namespace gpuprim::cuda
