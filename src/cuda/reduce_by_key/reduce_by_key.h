// SPDX-License-Identifier: Apache-2.0
// The reduce-by-key primitive's front door (reduce_by_key.cu):
// gpuprim_reduce_by_key (ReduceByKeyRequest), and the same over keys that
// group-by has sorted (its permutation picks the values, and each element's
// run goes out by the permutation: group_by/group_by.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

// For each run of equal key bits, in order: its key, the op over its values
// (deterministic: an association fixed by the data), its length; the number
// of runs goes to request.runs. Stream-ordered on env.stream, except that a
// host count waits for the stream. Reserves env.workspace when the input
// spans more than one tile (reduce_by_key_policy.cuh): 44 bytes a tile.
void reduce_by_key(const DeviceEnv &env, const ReduceByKeyRequest &request);

// reduce_by_key over sorted keys, where element j's value is
// values[value_order[j]] and element_runs[value_order[j]] receives element
// j's run. runs.values may be nullptr (then runs.results too): no aggregate.
struct SortedGroupsRequest {
    ReduceByKeyRequest runs;
    const void *value_order = nullptr;  // runs.count indices, 4 or 8 bytes (value_order_bytes)
    uint32_t value_order_bytes = 0;
    void *element_runs = nullptr;       // nullptr: not wanted
    uint32_t element_run_bytes = 0;     // 4 or 8
};
void reduce_sorted_groups(const DeviceEnv &env, const SortedGroupsRequest &request);

}  // namespace gpuprim::cuda
