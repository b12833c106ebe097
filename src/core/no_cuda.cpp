// SPDX-License-Identifier: Apache-2.0
// Built in place of src/cuda when libgpuprim is configured without CUDA:
// asking for the CUDA backend then reports that it was not built.
#include "core/backend.h"
#include "core/error.h"

namespace gpuprim {

bool cuda_backend_built() { return false; }

bool cuda_device_usable(int32_t) { return false; }

std::unique_ptr<Backend> make_cuda_backend(int32_t, void *, const HostAllocator &) {
    fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
         "the CUDA backend was asked for, but this libgpuprim was built without CUDA "
         "(configure with -DGPUPRIM_WITH_CUDA=ON and a CUDA toolkit)");
}

}  // namespace gpuprim
