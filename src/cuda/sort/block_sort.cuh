// SPDX-License-Identifier: Apache-2.0
// Small inputs: one block sorts everything in shared memory, by a bitonic
// network (block_sort.cu) or by 8-bit radix passes (block_radix_sort.cu);
// the sort's tuning picks (sort_policy.cuh, block_network_max).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

// Whether block_sort can take this request (count and shared memory).
bool block_sort_fits(const DeviceEnv &env, const SortRequest &request);
// One launch; stable; keys_out/values_out may equal keys_in/values_in.
void block_sort(const DeviceEnv &env, const SortRequest &request);
// The same by radix passes: up to 4096 keys, bit ranges too (the network
// compares whole keys).
bool block_radix_sort_fits(const DeviceEnv &env, const SortRequest &request);
void block_radix_sort(const DeviceEnv &env, const SortRequest &request);

}  // namespace gpuprim::cuda
