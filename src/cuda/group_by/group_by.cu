// SPDX-License-Identifier: Apache-2.0
// group-by (group_by/group_by.h): a stable argsort of the keys through the
// sort's front door (the sorted keys and the permutation in the side
// workspace: the sort and reduce-by-key reserve the main one), then
// reduce-by-key over the sorted keys (reduce_by_key/reduce_by_key.h
// reduce_sorted_groups): its runs are the groups, in the keys' radix order;
// the argsort is stable, so each group's values, taken through the
// permutation, come in input order; the runs' lengths are the counts, and
// the tile kernel writes each element's group through the permutation (the
// inverse). No gather pass and no copy of the values.
#include "cuda/group_by/group_by.h"

#include "core/checked_size.h"
#include "core/error.h"
#include "cuda/engine/count_sink.cuh"
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
    // The permutation's indices: 4 bytes while every position fits them.
    const uint32_t index_bytes = request.count - 1 <= uint64_t(UINT32_MAX) ? 4 : 8;
    WorkspaceLayout layout;
    const WorkspacePart sorted_part = layout.add(request.count, request.key_bytes);
    const WorkspacePart order_part = layout.add(request.count, index_bytes);
    void *side = env.side_workspace->reserve(layout.bytes());
    void *sorted_keys = WorkspaceLayout::at<unsigned char>(side, sorted_part);
    void *order = WorkspaceLayout::at<unsigned char>(side, order_part);

    SortRequest argsort{};
    argsort.key_kind = request.key_kind;
    argsort.key_bytes = request.key_bytes;
    argsort.begin_bit = 0;
    argsort.end_bit = 0;
    argsort.descending = false;
    argsort.keys_in = request.keys;
    argsort.keys_out = sorted_keys;  // given: the sort takes no side workspace
    argsort.value_bytes = index_bytes;
    argsort.values_in = nullptr;
    argsort.values_out = order;
    argsort.count = request.count;
    argsort.values_are_indices = true;
    argsort.largest_index = request.count - 1;
    sort(env, argsort);

    SortedGroupsRequest groups{};
    groups.runs.key_bytes = request.key_bytes;
    groups.runs.keys = sorted_keys;
    groups.runs.count = request.count;
    groups.runs.op = request.op;
    groups.runs.value_dtype = request.value_dtype;
    groups.runs.values = request.values;
    groups.runs.keys_out = request.keys_out;
    groups.runs.results = request.results;
    groups.runs.lengths = request.counts;
    groups.runs.length_bytes = request.count_bytes;
    groups.runs.runs = request.groups;
    groups.value_order = order;
    groups.value_order_bytes = index_bytes;
    groups.element_runs = request.inverse;
    groups.element_run_bytes = request.inverse_bytes;
    reduce_sorted_groups(env, groups);
}

}  // namespace gpuprim::cuda
