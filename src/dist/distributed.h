// SPDX-License-Identifier: Apache-2.0
// The distributed calls' algorithms (docs/DISTRIBUTED.md), written once over
// the Backend (local primitives) and the Communicator (NCCL or MPI). src/api
// checks the arguments, sizes the scratch with the plan_* functions, takes
// it, and runs the Agreement before calling these. Each returns when its
// outputs are complete.
#pragma once

#include "core/backend.h"
#include "core/communicator.h"
#include "dist/agreement.h"
#include "dist/scratch.h"
#include "dist/splitters.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <vector>

namespace gpuprim::dist {

// Sort and argsort. request: this rank's local sort (count = its count);
// argsort: values_are_indices with 8-byte indices, keys_out may be null.
// The scratch: backend memory (plan, parts of the block), and the host
// arrays of the steps after the agreement, taken before it (as every host
// array a distributed call uses after the ranks agree: a rank failing for
// memory then would leave the others waiting in the next collective).
struct SortScratch {
    ScratchPlan plan;
    size_t own_keys, received_keys, received_values, spare_keys, spare_values, candidates, counts;
    SplitterHostArrays splitter_host;
    std::vector<PeerTransfer> transfers;  // one exchange's blocks, one per rank
    std::vector<uint64_t> run_starts;     // the merge's runs (ranks + 1)
};
// Sizes the scratch, takes its host arrays and the communicator's room for
// the exchanges (Communicator::reserve_exchange). OUT_OF_MEMORY.
SortScratch plan_sort_scratch(const SortRequest &request, Communicator &communicator);
// The local steps' workspace (dist/local_workspace.h), taken inside the
// agreement's local checks, after the scratch; ranks: the communicator's.
void take_sort_workspace(Backend &backend, const SortRequest &request, const SortScratch &scratch, void *block,
                         int32_t ranks);
void sort(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const SortRequest &request,
          SortScratch &scratch, void *block);

// Top-k: request.keys_in holds this rank's local count keys; request.k is
// the global k (validated against the global count by the caller). Indices
// are global positions of request.index_bytes.
struct TopkScratch {
    ScratchPlan plan;
    size_t keys, indices, sorted_keys, sorted_indices;
    std::vector<PeerTransfer> transfers;  // the gather's blocks, one per rank
    std::vector<uint64_t> starts;         // where each rank's candidates start (ranks + 1)
};
// Sized from the layout (every rank's candidates: min(k, its count)), so
// taken after the agreement and confirmed across ranks (Agreement::confirm),
// with its host arrays and the communicator's room for the gathers.
TopkScratch plan_topk_scratch(const TopkRequest &request, const GlobalLayout &layout, Communicator &communicator);
// The local steps' workspace, taken with the scratch in the confirmation.
void take_topk_workspace(Backend &backend, const GlobalLayout &layout, const TopkRequest &request,
                         const TopkScratch &scratch, void *block);
// Step 1, this rank's candidates into the scratch (nothing with one rank),
// run inside the confirmation: it writes no output, and the host memory the
// local top-k takes (the CPU backend's segment plan) is then had or missed
// on every rank alike.
void topk_candidates(Backend &backend, const GlobalLayout &layout, const TopkRequest &request,
                     const TopkScratch &scratch, void *block);
// The rest: the gather and the sort of the candidates into the outputs.
void topk(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const TopkRequest &request,
          TopkScratch &scratch, void *block);

// The local steps' workspace of a reduce or scan of this rank's count
// elements, taken inside the agreement's local checks.
void take_reduce_workspace(Backend &backend, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input,
                           uint64_t count);
void take_scan_workspace(Backend &backend, int32_t ranks, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                         gpuprim_dtype_t dtype, const void *input, void *output, uint64_t count);
// Reduce: the global result to host memory at result.
void reduce(Backend &backend, Communicator &communicator, const GlobalLayout &layout, gpuprim_op_t op,
            gpuprim_dtype_t dtype, const void *input, void *result);
// Scan: this rank's part of the scan of the concatenation.
void scan(Backend &backend, Communicator &communicator, const GlobalLayout &layout, gpuprim_op_t op,
          gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const void *input, void *output);

}  // namespace gpuprim::dist
