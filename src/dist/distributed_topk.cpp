// SPDX-License-Identifier: Apache-2.0
// Distributed top-k (docs/DISTRIBUTED.md): each rank's own top min(k, n)
// with global positions, gathered on every rank in rank order, then the
// first k of a stable sort of those candidates. Within a rank's block the
// candidates are in top-k order (ties by position) and the blocks follow
// rank order, so ties come out by global position, as gpuprim_topk() gives.
#include "dist/distributed.h"

#include "core/checked_size.h"
#include "dist/local_workspace.h"

#include <algorithm>

namespace gpuprim::dist {
namespace {

uint64_t candidates_of(const GlobalLayout &layout, uint64_t k, size_t rank) {
    return std::min(k, layout.counts[rank]);
}

// Every rank's block of `width`-byte candidates, gathered in rank order into
// `gathered`, where this rank's block is already in place: the blocks, in
// the scratch's host arrays.
const std::vector<PeerTransfer> &gather_transfers(const GlobalLayout &layout, uint64_t k, uint32_t width,
                                                  void *gathered, TopkScratch &scratch) {
    const size_t ranks = size_t(layout.ranks), me = size_t(layout.rank);
    std::vector<PeerTransfer> &transfers = scratch.transfers;
    std::vector<uint64_t> &starts = scratch.starts;
    std::fill(transfers.begin(), transfers.end(), PeerTransfer{});
    starts[0] = 0;
    for (size_t r = 0; r < ranks; ++r) starts[r + 1] = starts[r] + candidates_of(layout, k, r);
    char *base = static_cast<char *>(gathered);
    for (size_t peer = 0; peer < ranks; ++peer) {
        if (peer == me) continue;
        transfers[peer].send = base + starts[me] * width;
        transfers[peer].send_bytes = candidates_of(layout, k, me) * width;
        transfers[peer].receive = base + starts[peer] * width;
        transfers[peer].receive_bytes = candidates_of(layout, k, peer) * width;
    }
    return transfers;
}

SegmentLayout one_row_of(uint64_t n) {
    SegmentLayout one_row{};
    one_row.segments = 1;
    one_row.row_length = n;
    one_row.data_count = n;
    return one_row;
}

// The steps' requests and where this rank's candidates start in the
// gathered arrays.
struct TopkSteps {
    uint64_t mine = 0;   // this rank's candidates
    uint64_t start = 0;  // where they go in the gathered arrays
    uint64_t total = 0;  // every rank's
    char *keys = nullptr, *indices = nullptr;  // the gathered arrays (indices: null without)
    TopkRequest local{};
    SortRequest order{};
};

TopkSteps steps_of(const GlobalLayout &layout, const TopkRequest &request, const TopkScratch &scratch, void *block) {
    TopkSteps steps;
    const size_t me = size_t(layout.rank);
    for (size_t r = 0; r < size_t(layout.ranks); ++r) {
        if (r == me) steps.start = steps.total;
        steps.total += candidates_of(layout, request.k, r);
    }
    steps.mine = candidates_of(layout, request.k, me);
    steps.keys = scratch.plan.part<char>(block, scratch.keys);
    steps.indices = request.indices ? scratch.plan.part<char>(block, scratch.indices) : nullptr;

    // 1. This rank's candidates, straight into its block of the gathered arrays.
    steps.local = request;
    steps.local.k = steps.mine;
    steps.local.keys_out = steps.keys + steps.start * request.key_bytes;
    steps.local.indices = steps.indices ? steps.indices + steps.start * request.index_bytes : nullptr;

    // 3. The stable sort of every rank's candidates.
    SortRequest &order = steps.order;
    order.key_kind = request.key_kind;
    order.key_bytes = request.key_bytes;
    order.descending = request.descending;
    order.keys_in = steps.keys;
    order.keys_out = scratch.plan.part(block, scratch.sorted_keys);
    order.count = steps.total;
    if (steps.indices) {
        order.value_bytes = request.index_bytes;
        order.values_in = steps.indices;
        order.values_out = scratch.plan.part(block, scratch.sorted_indices);
    }
    return steps;
}

}  // namespace

TopkScratch plan_topk_scratch(const TopkRequest &request, const GlobalLayout &layout, Communicator &communicator) {
    uint64_t candidates = 0;
    for (size_t r = 0; r < size_t(layout.ranks); ++r)
        candidates = checked_add(candidates, candidates_of(layout, request.k, r), "the distributed top-k's candidates");
    TopkScratch scratch{};
    const uint64_t key_bytes = checked_mul(candidates, request.key_bytes, "the distributed top-k's candidates");
    const uint64_t index_bytes =
        request.indices ? checked_mul(candidates, request.index_bytes, "the distributed top-k's candidates") : 0;
    scratch.keys = scratch.plan.add(key_bytes);
    scratch.indices = scratch.plan.add(index_bytes);
    scratch.sorted_keys = scratch.plan.add(key_bytes);
    scratch.sorted_indices = scratch.plan.add(index_bytes);
    if (layout.ranks > 1 && request.k > 0) {
        scratch.transfers = host_array<PeerTransfer>(uint64_t(layout.ranks), "the distributed top-k's gather");
        scratch.starts = host_array<uint64_t>(uint64_t(layout.ranks) + 1, "the distributed top-k's gather");
        // Each gather sends this rank's candidates to every other rank and
        // receives theirs: at most every rank's candidates, each way.
        const uint64_t widest = key_bytes > index_bytes ? key_bytes : index_bytes;
        const uint64_t mine = checked_mul(candidates_of(layout, request.k, size_t(layout.rank)),
                                          request.key_bytes > request.index_bytes ? request.key_bytes
                                                                                  : request.index_bytes,
                                          "the distributed top-k's candidates");
        communicator.reserve_exchange(checked_mul(mine, uint64_t(layout.ranks), "the distributed top-k's gather"),
                                      widest);
    }
    return scratch;
}

void take_topk_workspace(Backend &backend, const GlobalLayout &layout, const TopkRequest &request,
                         const TopkScratch &scratch, void *block) {
    if (request.k == 0) return;
    const SegmentLayout one_row = one_row_of(layout.local_count());
    take_local_workspace(backend, [&] {
        if (layout.ranks == 1) return backend.topk(request, one_row);
        const TopkSteps steps = steps_of(layout, request, scratch, block);
        if (steps.mine) backend.topk(steps.local, one_row);
        backend.sort(steps.order);
    });
}

void topk_candidates(Backend &backend, const GlobalLayout &layout, const TopkRequest &request,
                     const TopkScratch &scratch, void *block) {
    if (request.k == 0 || layout.ranks == 1) return;
    const TopkSteps steps = steps_of(layout, request, scratch, block);
    if (steps.mine) {
        backend.topk(steps.local, one_row_of(layout.local_count()));
        if (steps.local.indices && layout.local_offset())
            backend.add_to_indices(steps.local.indices, steps.mine, request.index_bytes, layout.local_offset());
    }
}

void topk(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const TopkRequest &request,
          TopkScratch &scratch, void *block) {
    const uint64_t k = request.k;
    if (k == 0) return;
    if (layout.ranks == 1) {
        backend.topk(request, one_row_of(layout.local_count()));
        backend.synchronize();
        return;
    }
    const TopkSteps steps = steps_of(layout, request, scratch, block);

    // 2. Every rank's candidates (step 1, topk_candidates, put this rank's
    // in place) on every rank.
    communicator.exchange(gather_transfers(layout, k, request.key_bytes, steps.keys, scratch));
    if (steps.indices) communicator.exchange(gather_transfers(layout, k, request.index_bytes, steps.indices, scratch));

    // 3. The first k of their stable sort.
    backend.sort(steps.order);
    if (request.keys_out) backend.copy(request.keys_out, steps.order.keys_out, k * request.key_bytes);
    if (request.indices) backend.copy(request.indices, steps.order.values_out, k * request.index_bytes);
    backend.synchronize();
}

}  // namespace gpuprim::dist
