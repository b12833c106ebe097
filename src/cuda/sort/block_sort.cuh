// SPDX-License-Identifier: Apache-2.0
// Small inputs: one block sorts everything in shared memory (block_sort.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

// Whether block_sort can take this request (count and shared memory).
bool block_sort_fits(const DeviceEnv &env, const SortRequest &request);
// One launch; stable; keys_out/values_out may equal keys_in/values_in.
void block_sort(const DeviceEnv &env, const SortRequest &request);

}  // namespace gpuprim::cuda
