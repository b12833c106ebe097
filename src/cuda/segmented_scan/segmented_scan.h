// SPDX-License-Identifier: Apache-2.0
// The front door of the segmented scan and the segmented reduce
// (segmented_scan.cu): one primitive, since both are the same single-pass
// tile kernel (segmented_scan/agent_segmented_scan.cuh), the reduce storing one
// value a segment; uniform rows reduce without it (segmented_reduce_direct.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <gpuprim/gpuprim.h>

namespace gpuprim::cuda {

// Each checks layout's offsets first.
void segmented_reduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                      const void *input, void *output);
void segmented_scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                    const SegmentLayout &layout, const void *input, void *output);

}  // namespace gpuprim::cuda
