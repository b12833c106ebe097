// SPDX-License-Identifier: Apache-2.0
// Distributed top-k (docs/DISTRIBUTED.md): each rank's own top min(k, n)
// with global positions, gathered on every rank in rank order, then the
// first k of a stable sort of those candidates. Within a rank's block the
// candidates are in top-k order (ties by position) and the blocks follow
// rank order, so ties come out by global position, as gpuprim_topk() gives.
#include "dist/distributed.h"

#include "core/checked_size.h"

#include <algorithm>

namespace gpuprim::dist {
namespace {

uint64_t candidates_of(const GlobalLayout &layout, uint64_t k, size_t rank) {
    return std::min(k, layout.counts[rank]);
}

// Every rank's block of `width`-byte candidates, gathered in rank order into
// `gathered`, where this rank's block is already in place.
std::vector<PeerTransfer> gather_transfers(const GlobalLayout &layout, uint64_t k, uint32_t width, void *gathered) {
    const size_t ranks = size_t(layout.ranks), me = size_t(layout.rank);
    std::vector<PeerTransfer> transfers(ranks);
    std::vector<uint64_t> starts(ranks + 1, 0);
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

}  // namespace

TopkScratch plan_topk_scratch(const TopkRequest &request, const GlobalLayout &layout) {
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
    return scratch;
}

void topk(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const TopkRequest &request,
          const TopkScratch &scratch, void *block) {
    const uint64_t n = layout.local_count(), k = request.k;
    if (k == 0) return;
    const size_t ranks = size_t(layout.ranks), me = size_t(layout.rank);
    SegmentLayout one_row{};
    one_row.segments = 1;
    one_row.row_length = n;
    one_row.data_count = n;
    if (ranks == 1) {
        backend.topk(request, one_row);
        backend.synchronize();
        return;
    }

    // 1. This rank's candidates, straight into its block of the gathered arrays.
    uint64_t start = 0, total = 0;
    for (size_t r = 0; r < ranks; ++r) {
        if (r == me) start = total;
        total += candidates_of(layout, k, r);
    }
    char *keys = scratch.plan.part<char>(block, scratch.keys);
    char *indices = request.indices ? scratch.plan.part<char>(block, scratch.indices) : nullptr;
    const uint64_t mine = candidates_of(layout, k, me);
    if (mine) {
        TopkRequest local = request;
        local.k = mine;
        local.keys_out = keys + start * request.key_bytes;
        local.indices = indices ? indices + start * request.index_bytes : nullptr;
        backend.topk(local, one_row);
        if (indices && layout.local_offset())
            backend.add_to_indices(local.indices, mine, request.index_bytes, layout.local_offset());
    }

    // 2. Every rank's candidates on every rank.
    communicator.exchange(gather_transfers(layout, k, request.key_bytes, keys));
    if (indices) communicator.exchange(gather_transfers(layout, k, request.index_bytes, indices));

    // 3. The first k of their stable sort.
    SortRequest order{};
    order.key_kind = request.key_kind;
    order.key_bytes = request.key_bytes;
    order.descending = request.descending;
    order.keys_in = keys;
    order.keys_out = scratch.plan.part(block, scratch.sorted_keys);
    order.count = total;
    if (indices) {
        order.value_bytes = request.index_bytes;
        order.values_in = indices;
        order.values_out = scratch.plan.part(block, scratch.sorted_indices);
    }
    backend.sort(order);
    if (request.keys_out) backend.copy(request.keys_out, order.keys_out, k * request.key_bytes);
    if (request.indices) backend.copy(request.indices, order.values_out, k * request.index_bytes);
    backend.synchronize();
}

}  // namespace gpuprim::dist
