// SPDX-License-Identifier: Apache-2.0
// The top-k primitive's front door (topk.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

namespace gpuprim::cuda {

// Top-k of every segment; a flat top-k is one row. Checks layout's offsets
// first.
void topk(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout);

}  // namespace gpuprim::cuda
