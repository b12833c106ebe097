// SPDX-License-Identifier: Apache-2.0
// The group-by primitive's front door (group_by.cu): gpuprim_group_by
// (GroupByRequest).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

namespace gpuprim::cuda {

// The groups of equal key bits in ascending radix order, each group's values
// folded in input order: keys_out, counts, results per group, inverse per
// element; the number of groups to request.groups. Stream-ordered on
// env.stream, except that a host count waits for the stream. Reserves
// env.side_workspace: the sorted keys and the permutation (key_bytes + 4
// bytes an element, 8 past 2^32 elements), and env.workspace as the sort and
// reduce-by-key do.
void group_by(const DeviceEnv &env, const GroupByRequest &request);

}  // namespace gpuprim::cuda
