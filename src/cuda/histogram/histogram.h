// SPDX-License-Identifier: Apache-2.0
// The histogram primitive's front door: even bins, bins by edges, bincount
// (histogram.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

namespace gpuprim::cuda {

// counts[b] = the number of the request's elements in bin b
// (core/backend.h HistogramRequest). Stream-ordered; no workspace.
void histogram(const DeviceEnv &env, const HistogramRequest &request);

}  // namespace gpuprim::cuda
