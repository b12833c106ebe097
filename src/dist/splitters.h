// SPDX-License-Identifier: Apache-2.0
// Exact splitters of a distributed sort: where each rank's locally sorted
// keys divide so that rank b receives global sorted positions
// offsets[b] .. offsets[b+1] - 1, equal keys taken in rank order (stable).
#pragma once

#include "core/backend.h"
#include "core/communicator.h"
#include "dist/agreement.h"
#include "dist/scratch.h"

#include <cstdint>
#include <vector>

namespace gpuprim::dist {

// The backend memory the search needs: candidate values and their counts.
void plan_splitter_scratch(ScratchPlan &plan, int32_t ranks, size_t *candidates_part, size_t *counts_part);

// sorted: this rank's keys, sorted as sorted describes (keys_in, count =
// its local count). Returns, for every rank i and boundary b = 0..ranks,
// splits[i * (ranks + 1) + b]: the first of rank i's sorted keys that goes to
// rank b or later (splits[i][0] = 0, splits[i][ranks] = count of rank i).
std::vector<uint64_t> find_splits(Backend &backend, Communicator &communicator, const GlobalLayout &layout,
                                  const SortRequest &sorted, uint64_t *candidates, uint64_t *counts);

}  // namespace gpuprim::dist
