// SPDX-License-Identifier: Apache-2.0
// The segmented reduce of uniform rows (segmented_reduce_rows.cu): a lane
// group per short row, a block per chunk of a long one, no look-back.
#pragma once

#include "cuda/device_env.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::cuda {

// Writes output[r] for every row; false (nothing launched) when the shape is
// left to the general kernel (no rows, empty rows, more chunks than a grid).
bool reduce_uniform_rows(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, uint64_t rows,
                         uint64_t length, const void *input, void *output);

}  // namespace gpuprim::cuda
