// SPDX-License-Identifier: Apache-2.0
// The sort primitive's front door: the flat sort (keys, pairs, argsort;
// sort.cu) and the segmented Onesweep sort of long segments that the
// segmented sort hands over (segmented_radix_sort.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

void sort(const DeviceEnv &env, const SortRequest &request);
// Sorts the segments [bounds[2s], bounds[2s+1]) of request's buffers (host
// array, `segments` pairs; they must not overlap) each on its own in one
// Onesweep sort; nothing else is touched. False (nothing done) for what it
// does not take: keys other than 4 or 8 bytes, values other than none, 4 or
// 8 bytes, no keys_out, segments of 2^30 keys or more, more than 2^24
// segments.
bool segmented_radix_sort(const DeviceEnv &env, const SortRequest &request, const unsigned long long *bounds,
                          uint64_t segments);
// A workspace query's bound on segmented_radix_sort: reserves (on
// env.workspace, a recorder) the most it takes for up to `segments` segments
// of request.count keys in all; nothing for widths it does not take.
void segmented_radix_sort_bound(const DeviceEnv &env, const SortRequest &request, uint64_t segments);
// A workspace query's bound on one flat sort of any count up to
// request.count (a segment's, known only to the real call): the sort's
// workspace follows its size tiers (sort_policy.cuh, at powers of two) and
// the fused path's limit (the tiles resident at once) as well as the count,
// so it records the sort at every power of two below the count, at the
// count, and the fused path at its largest (DeviceEnv::measuring_any_count).
void sort_bound(const DeviceEnv &env, const SortRequest &request);

}  // namespace gpuprim::cuda
