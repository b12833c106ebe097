// SPDX-License-Identifier: Apache-2.0
// CUDA error checks for host code: the floor below every driver and the
// backend (defined in util/check.cpp, which depends on nothing above it).
#pragma once

#include <cuda_runtime.h>

namespace gpuprim::cuda {

// Throws Error(GPUPRIM_ERROR_DEVICE) with CUDA's name and text of the error
// ("radix sort pass 2 launch: cudaErrorInvalidValue: invalid argument").
// cudaErrorMemoryAllocation becomes GPUPRIM_ERROR_OUT_OF_MEMORY.
void check(cudaError_t result, const char *what);
// check(cudaGetLastError(), what) after a launch.
void check_launch(const char *what);

}  // namespace gpuprim::cuda
