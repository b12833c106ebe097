// SPDX-License-Identifier: Apache-2.0
// The CPU backend's stable merge of sorted runs (Backend::merge_sorted_runs,
// merge_runs.cpp): rounds of pairwise merges, ping-ponging between the
// output and the spare buffers so the last round lands in the output.
#pragma once

#include "core/backend.h"
#include "cpu/parallel.h"

#include <cstdint>

namespace gpuprim {
namespace cpu {

void merge_sorted_runs(Parallel &parallel, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                       void *spare_keys, void *spare_values);

// gpuprim_merge: the stable merge of two sorted runs in separate buffers
// (core/backend.h MergeRequest), in pieces of 2^16 outputs by merge-path
// splits (ties to a), in parallel.
void merge_two(Parallel &parallel, const MergeRequest &request);

}  // namespace cpu
}  // namespace gpuprim
