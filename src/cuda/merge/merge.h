// SPDX-License-Identifier: Apache-2.0
// The merge primitive's front door (merge.cu): the stable merge of sorted
// runs that lie back to back (Backend::merge_sorted_runs).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

// request.keys_in (values_in when request.value_bytes) hold `runs` runs,
// run r being elements [run_starts[r], run_starts[r + 1]) (host array,
// run_starts[0] == 0, run_starts[runs] == request.count), each sorted by
// its sort bits (core/key_transform.h). Writes their stable merge (ties: the
// lower run first) to keys_out (values_out), which do not overlap the
// inputs; spare_keys / spare_values (request.count elements each) are
// clobbered. Stream-ordered on env.stream; reserves env.workspace.
void merge_sorted_runs(const DeviceEnv &env, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                       void *spare_keys, void *spare_values);

// gpuprim_merge: the stable merge of two sorted runs in separate buffers
// (core/backend.h MergeRequest) into the output, by the same merge-path
// tiles in one round. Stream-ordered; reserves env.workspace (8 bytes per
// tile of outputs).
void merge_two(const DeviceEnv &env, const MergeRequest &request);

}  // namespace gpuprim::cuda
