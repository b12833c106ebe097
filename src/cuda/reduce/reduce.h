// SPDX-License-Identifier: Apache-2.0
// The reduce primitive's front door: reduce and dot (reduce.cu).
#pragma once

#include "cuda/device_env.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::cuda {

// result: one element, device memory or mapped pinned host memory.
void reduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input,
            uint64_t count, void *result);
void dot(const DeviceEnv &env, gpuprim_dtype_t dtype, const void *a, const void *b,
         uint64_t count, void *result);

}  // namespace gpuprim::cuda
