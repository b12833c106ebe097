// SPDX-License-Identifier: Apache-2.0
// The scan primitive's front door (scan.cu).
#pragma once

#include "cuda/device_env.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::cuda {

// output may equal input. initial: nullptr, or a host pointer to one element
// of dtype the scan starts from (Backend::scan).
void scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
          const void *input, void *output, uint64_t count, const void *initial = nullptr);

}  // namespace gpuprim::cuda
