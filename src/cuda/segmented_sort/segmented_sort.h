// SPDX-License-Identifier: Apache-2.0
// The segmented sort primitive's front door (segmented_sort.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

namespace gpuprim::cuda {

// Sorts every segment of layout on its own (keys, pairs, argsort); checks
// layout's offsets first.
void segmented_sort(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout);

}  // namespace gpuprim::cuda
