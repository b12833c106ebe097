// SPDX-License-Identifier: Apache-2.0
// group-by (group_by/group_by.h): a stable sort of the keys through the
// sort's front door into the side workspace (the sort and reduce-by-key
// reserve the main one), then reduce-by-key over the sorted keys
// (reduce_by_key/reduce_by_key.h reduce_sorted_groups): its runs are the
// groups, in the keys' radix order, and their lengths the counts. The sort
// is stable, so each group's values come in input order either way:
// - no inverse: the values ride the sort as its pairs' values (by width),
//   and the reduce reads them in order, coalesced;
// - inverse: the sort is an argsort; the reduce reads the values through
//   the permutation (no gathered copy) and writes each element's group
//   through it.
// Without values or inverse the keys sort alone.
#include "cuda/group_by/group_by.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "cuda/engine/count_sink.cuh"
#include "cuda/engine/reserve_first.h"
#include "cuda/reduce_by_key/reduce_by_key.h"
#include "cuda/sort/sort.h"
#include "cuda/util/check.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprim::cuda {

void group_by(const DeviceEnv &env, const GroupByRequest &request) {
    const char *what = "group-by";
    if (request.count == 0) return write_zero_count(env, request.groups, what);
    if (!request.values != !request.results)
        fail(GPUPRIM_ERROR_INTERNAL, "%s: values and results must be both given or both absent", what);
    // The permutation (for the inverse): 4-byte indices while every position fits them.
    const bool permuted = request.inverse != nullptr;
    const uint32_t index_bytes = request.count - 1 <= uint64_t(UINT32_MAX) ? 4 : 8;
    const uint32_t carried_bytes = request.values && !permuted ? uint32_t(dtype_size(request.value_dtype)) : 0;
    WorkspaceLayout layout;
    const WorkspacePart sorted_part = layout.add(request.count, request.key_bytes);
    const WorkspacePart second_part = layout.add(permuted ? request.count : 0, index_bytes);  // empty parts take no bytes
    const WorkspacePart carried_part = layout.add(request.count, carried_bytes);
    void *side = env.side_workspace->reserve(layout.bytes());
    void *sorted_keys = WorkspaceLayout::at<unsigned char>(side, sorted_part);
    void *order = WorkspaceLayout::at<unsigned char>(side, second_part);  // nullptr when empty
    void *sorted_values = WorkspaceLayout::at<unsigned char>(side, carried_part);

    SortRequest sort_request{};
    sort_request.key_kind = request.key_kind;
    sort_request.key_bytes = request.key_bytes;
    sort_request.begin_bit = 0;
    sort_request.end_bit = 0;
    sort_request.descending = false;
    sort_request.keys_in = request.keys;
    sort_request.keys_out = sorted_keys;  // given: the sort takes no side workspace
    sort_request.count = request.count;
    if (permuted) {
        sort_request.value_bytes = index_bytes;
        sort_request.values_out = order;
        sort_request.values_are_indices = true;
        sort_request.largest_index = request.count - 1;
    } else if (carried_bytes) {
        sort_request.value_bytes = carried_bytes;
        sort_request.values_in = request.values;
        sort_request.values_out = sorted_values;
    }

    SortedGroupsRequest groups{};
    groups.runs.key_bytes = request.key_bytes;
    groups.runs.keys = sorted_keys;
    groups.runs.count = request.count;
    groups.runs.op = request.op;
    groups.runs.value_dtype = request.value_dtype;
    groups.runs.values = permuted ? request.values : sorted_values;
    groups.runs.keys_out = request.keys_out;
    groups.runs.results = request.results;
    groups.runs.lengths = request.counts;
    groups.runs.length_bytes = request.count_bytes;
    groups.runs.runs = request.groups;
    groups.value_order = order;  // nullptr without the inverse: the values were sorted with the keys
    groups.value_order_bytes = permuted ? index_bytes : 0;
    groups.element_runs = request.inverse;
    groups.element_run_bytes = request.inverse_bytes;
    // Reduce-by-key's workspace, taken before the sort enqueues anything: a
    // shortage (a workspace held still, growth while the stream captures)
    // then fails the call before any work is on the stream. It reserves the
    // main block only (the side block holds the sorted keys).
    env.workspace->reserve(
        workspace_needs(env, [&](const DeviceEnv &recording) { reduce_sorted_groups(recording, groups); }).main_bytes);
    sort(env, sort_request);
    reduce_sorted_groups(env, groups);
}

}  // namespace gpuprim::cuda
