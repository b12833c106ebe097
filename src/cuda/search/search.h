// SPDX-License-Identifier: Apache-2.0
// The search primitive's front door: searchsorted (search.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

namespace gpuprim::cuda {

// For each query of request its lower or upper bound among the sorted keys
// (core/backend.h SearchRequest), written to request.indices.
// Stream-ordered; no workspace.
void searchsorted(const DeviceEnv &env, const SearchRequest &request);

}  // namespace gpuprim::cuda
