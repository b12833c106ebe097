// SPDX-License-Identifier: Apache-2.0
// device_code_arch (code_arch.h): the PTX version of an empty kernel compiled
// with the library's architecture list, which is every kernel's on this
// device (each translation unit gets the same list).
#include "cuda/util/code_arch.h"

#include "cuda/util/check.h"

#include <cuda_runtime.h>

namespace gpuprim::cuda {
namespace {

__global__ void code_arch_probe_kernel() {}

}  // namespace

int device_code_arch() {
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, code_arch_probe_kernel),
          "cudaFuncGetAttributes (device code architecture)");
    return attributes.ptxVersion;
}

}  // namespace gpuprim::cuda
