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

// The search's host arrays, sized by the number of ranks and taken before
// the ranks agree (a rank failing for memory once they have would leave
// the others waiting in the next collective). OUT_OF_MEMORY.
struct SplitterHostArrays {
    SplitterHostArrays() = default;  // empty: no search (one rank)
    explicit SplitterHostArrays(int32_t ranks);
    std::vector<size_t> searched;      // the boundaries searched (capacity ranks)
    std::vector<uint64_t> value;       // the splitter key found so far, per boundary
    std::vector<uint64_t> candidates;  // a round's candidates, then the final keys asked
    std::vector<uint64_t> counts;      // their counts below
    std::vector<uint64_t> mine;        // this rank's counts below and up to each splitter key
    std::vector<unsigned char> everyone;  // every rank's `mine`, gathered (16 * ranks^2 bytes)
    // The result: for every rank i and boundary b = 0..ranks,
    // splits[i * (ranks + 1) + b] is the first of rank i's sorted keys that
    // goes to rank b or later (splits[i][0] = 0, splits[i][ranks] = count
    // of rank i).
    std::vector<uint64_t> splits;
};

// sorted: this rank's keys, sorted as sorted describes (keys_in, count =
// its local count). Fills host.splits.
void find_splits(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const SortRequest &sorted,
                 uint64_t *candidates, uint64_t *counts, SplitterHostArrays &host);

}  // namespace gpuprim::dist
