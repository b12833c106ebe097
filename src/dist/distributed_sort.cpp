// SPDX-License-Identifier: Apache-2.0
// Distributed sort and argsort (docs/DISTRIBUTED.md): a local stable sort,
// exact splitters (splitters.cpp), one exchange, and a stable merge of the
// sorted runs received (Backend::merge_sorted_runs), which arrive in
// source-rank order: equal keys end up in (rank, position) order, the global
// stable order.
#include "dist/distributed.h"
#include "dist/splitters.h"

#include "core/checked_size.h"

namespace gpuprim::dist {
namespace {

// The blocks of one array (element bytes `width`) in the exchange: what this
// rank sends each peer from `sorted` and where what each peer sends lands
// in `received`, peers' blocks in rank order.
std::vector<PeerTransfer> transfers_of(const GlobalLayout &layout, const std::vector<uint64_t> &splits,
                                       uint32_t width, const void *sorted, void *received) {
    const size_t ranks = size_t(layout.ranks), me = size_t(layout.rank);
    const uint64_t *my_splits = &splits[me * (ranks + 1)];
    std::vector<PeerTransfer> transfers(ranks);
    uint64_t landed = 0;
    for (size_t peer = 0; peer < ranks; ++peer) {
        const uint64_t *theirs = &splits[peer * (ranks + 1)];
        PeerTransfer &t = transfers[peer];
        t.send = static_cast<const char *>(sorted) + my_splits[peer] * width;
        t.send_bytes = (my_splits[peer + 1] - my_splits[peer]) * width;
        const uint64_t coming = theirs[me + 1] - theirs[me];
        t.receive = static_cast<char *>(received) + landed * width;
        t.receive_bytes = coming * width;
        landed += coming;
    }
    return transfers;
}

}  // namespace

SortScratch plan_sort_scratch(const SortRequest &request, int32_t ranks) {
    SortScratch scratch{};
    const uint64_t n = request.count;
    scratch.sorted_keys = scratch.plan.add(checked_mul(n, request.key_bytes, "the distributed sort's local keys"));
    scratch.sorted_values =
        scratch.plan.add(checked_mul(n, request.value_bytes, "the distributed sort's local values"));
    // The runs received, merged from there into the outputs.
    scratch.received_keys =
        scratch.plan.add(checked_mul(n, request.key_bytes, "the distributed sort's received keys"));
    scratch.received_values =
        scratch.plan.add(checked_mul(n, request.value_bytes, "the distributed sort's received values"));
    // Argsort without keys_out: the merged keys still need a place.
    scratch.merged_keys = scratch.plan.add(
        request.keys_out ? 0 : checked_mul(n, request.key_bytes, "the distributed argsort's merged keys"));
    plan_splitter_scratch(scratch.plan, ranks, &scratch.candidates, &scratch.counts);
    return scratch;
}

void sort(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const SortRequest &request,
          const SortScratch &scratch, void *block) {
    const uint64_t n = layout.local_count();
    if (layout.ranks == 1) {
        if (n) backend.sort(request);
        backend.synchronize();
        return;
    }
    if (layout.total() == 0) return;

    // 1. The local stable sort, into scratch (argsort: global positions).
    SortRequest local = request;
    local.keys_out = scratch.plan.part(block, scratch.sorted_keys);
    local.values_out = request.value_bytes ? scratch.plan.part(block, scratch.sorted_values) : nullptr;
    if (n) {
        backend.sort(local);
        if (request.values_are_indices && layout.local_offset())
            backend.add_to_indices(local.values_out, n, request.value_bytes, layout.local_offset());
    }

    // 2. Exact splitters over the sorted keys.
    SortRequest sorted = request;
    sorted.keys_in = local.keys_out;
    const std::vector<uint64_t> splits =
        find_splits(backend, communicator, layout, sorted, scratch.plan.part<uint64_t>(block, scratch.candidates),
                    scratch.plan.part<uint64_t>(block, scratch.counts));

    // 3. One exchange of keys (and values), into scratch: block p of what
    // lands comes from rank p.
    void *received_keys = scratch.plan.part(block, scratch.received_keys);
    void *received_values = request.value_bytes ? scratch.plan.part(block, scratch.received_values) : nullptr;
    const std::vector<PeerTransfer> key_transfers =
        transfers_of(layout, splits, request.key_bytes, local.keys_out, received_keys);
    communicator.exchange(key_transfers);
    if (request.value_bytes)
        communicator.exchange(transfers_of(layout, splits, request.value_bytes, local.values_out, received_values));

    // 4. The runs received, in source-rank order, each sorted: their stable
    // merge (equal keys: lower rank first) into the outputs, with the local
    // sorted scratch (free after the exchange) as the merge's spare.
    if (n) {
        std::vector<uint64_t> run_starts(key_transfers.size() + 1, 0);
        for (size_t peer = 0; peer < key_transfers.size(); ++peer)
            run_starts[peer + 1] = run_starts[peer] + key_transfers[peer].receive_bytes / request.key_bytes;
        SortRequest runs = request;
        runs.keys_in = received_keys;
        runs.keys_out = request.keys_out ? request.keys_out : scratch.plan.part(block, scratch.merged_keys);
        runs.values_in = received_values;
        runs.values_out = request.value_bytes ? request.values_out : nullptr;
        runs.values_are_indices = false;
        runs.largest_index = UINT64_MAX;
        backend.merge_sorted_runs(runs, run_starts.data(), static_cast<uint32_t>(key_transfers.size()),
                                  local.keys_out, local.values_out);
    }
    backend.synchronize();
}

}  // namespace gpuprim::dist
