// SPDX-License-Identifier: Apache-2.0
// The adjacent-difference primitive's front door (adjacent_difference.cu).
#pragma once

#include "cuda/device_env.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::cuda {

// output[0] = input[0], output[i] = input[i] - input[i - 1] (core/ops.h
// DifferenceOp) for count >= 1 elements of dtype. output is input (in place)
// or lies apart from it. Stream-ordered.
void adjacent_difference(const DeviceEnv &env, gpuprim_dtype_t dtype, const void *input, void *output,
                         uint64_t count);

}  // namespace gpuprim::cuda
