// SPDX-License-Identifier: Apache-2.0
// The CPU backend's stable merge of sorted runs (Backend::merge_sorted_runs,
// merge_runs.cpp): rounds of pairwise merges, ping-ponging between the
// output and the spare buffers so the last round lands in the output.
#pragma once

#include "core/backend.h"
#include "core/workspace.h"
#include "cpu/parallel.h"

#include <cstdint>

namespace gpuprim {
namespace cpu {

// Its bookkeeping (run bounds, pairs, pieces) comes from the workspace:
// merge_sorted_runs_bytes() of it, reading no data.
void merge_sorted_runs(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                       const uint64_t *run_starts, uint32_t runs, void *spare_keys, void *spare_values);
uint64_t merge_sorted_runs_bytes(const SortRequest &request, uint32_t runs);

// gpuprim_merge: the stable merge of two sorted runs in separate buffers
// (core/backend.h MergeRequest), in pieces of 2^16 outputs by merge-path
// splits (ties to a), in parallel.
void merge_two(Parallel &parallel, const MergeRequest &request);

}  // namespace cpu
}  // namespace gpuprim
