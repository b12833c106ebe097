// SPDX-License-Identifier: Apache-2.0
// The distributed calls' support kernels (distributed_support.cu): what the
// backend's operations for src/dist need besides the primitives
// (core/backend.h: add_to_indices, count_keys_below). Stream-ordered on
// env.stream like every driver; nothing here synchronizes.
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

// indices[i] += offset for count indices of index_bytes (4 or 8) bytes in
// device memory, wrapping in the unsigned type.
void add_to_indices(const DeviceEnv &env, void *indices, uint64_t count, uint32_t index_bytes, uint64_t offset);

// counts[j] = the number of keys.keys_in's keys.count keys (sorted by their
// sort bits, as keys asks) whose sort bits are below candidates[j], for the
// candidate_count candidates; candidates and counts in device memory.
void count_keys_below(const DeviceEnv &env, const SortRequest &keys, const uint64_t *candidates,
                      uint64_t candidate_count, uint64_t *counts);

}  // namespace gpuprim::cuda
