// SPDX-License-Identifier: Apache-2.0
// The argreduce primitive's front door: argmin / argmax (argreduce.cu).
#pragma once

#include "cuda/device_env.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::cuda {

// The first position of the least (op MIN) or greatest (op MAX) of count >= 1
// elements of dtype (core/ops.h ArgKey: the first NaN wins, -0.0 ties with
// +0.0), written by a kernel to `position`: one uint64_t of device memory or
// mapped pinned host memory. Stream-ordered: the caller synchronizes.
void argreduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
               uint64_t *position);

}  // namespace gpuprim::cuda
