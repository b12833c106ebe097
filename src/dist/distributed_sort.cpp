// SPDX-License-Identifier: Apache-2.0
// Distributed sort and argsort (docs/DISTRIBUTED.md): a local stable sort
// (done, when the ranks' keys already follow each other in rank order),
// exact splitters (splitters.cpp), one exchange, and a stable merge of the
// sorted runs received (Backend::merge_sorted_runs), which arrive in
// source-rank order: equal keys end up in (rank, position) order, the global
// stable order.
#include "dist/distributed.h"
#include "dist/local_workspace.h"
#include "dist/splitters.h"

#include "core/checked_size.h"
#include "core/key_transform.h"

#include <cstring>

namespace gpuprim::dist {
namespace {

// The blocks of one array (element bytes `width`) in the exchange, into
// transfers (ranks entries): what this rank sends each peer from `sorted`
// and where what each peer sends lands in `received`, peers' blocks in rank
// order.
const std::vector<PeerTransfer> &transfers_of(const GlobalLayout &layout, const std::vector<uint64_t> &splits,
                                              uint32_t width, const void *sorted, void *received,
                                              std::vector<PeerTransfer> &transfers) {
    const size_t ranks = size_t(layout.ranks), me = size_t(layout.rank);
    const uint64_t *my_splits = &splits[me * (ranks + 1)];
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

SortScratch plan_sort_scratch(const SortRequest &request, Communicator &communicator) {
    const int32_t ranks = communicator.size();
    SortScratch scratch{};
    const uint64_t n = request.count;
    const uint64_t key_bytes = checked_mul(n, request.key_bytes, "the distributed sort's keys");
    const uint64_t value_bytes = checked_mul(n, request.value_bytes, "the distributed sort's values");
    // Argsort without keys_out: the local keys still need a place.
    scratch.own_keys = scratch.plan.add(request.keys_out ? 0 : key_bytes);
    // The runs received, merged from there into the outputs, with the spare
    // the merge ping-pongs through.
    scratch.received_keys = scratch.plan.add(key_bytes);
    scratch.received_values = scratch.plan.add(value_bytes);
    scratch.spare_keys = scratch.plan.add(key_bytes);
    scratch.spare_values = scratch.plan.add(value_bytes);
    plan_splitter_scratch(scratch.plan, ranks, &scratch.candidates, &scratch.counts);
    if (ranks > 1) {
        scratch.splitter_host = SplitterHostArrays(ranks);
        scratch.transfers = host_array<PeerTransfer>(uint64_t(ranks), "the distributed sort's exchange");
        scratch.run_starts = host_array<uint64_t>(uint64_t(ranks) + 1, "the distributed sort's runs");
        // Each exchange (keys, then values) sends at most and receives
        // exactly this rank's count of elements.
        const uint64_t widest = key_bytes > value_bytes ? key_bytes : value_bytes;
        communicator.reserve_exchange(widest, widest);
    }
    return scratch;
}

namespace {

// A rank's first and last key after its local sort, as sort bits (the order
// the sort compares), for the check that the ranks already hold the sorted
// order.
struct KeyRange {
    uint64_t has_keys;
    uint64_t first;
    uint64_t last;
};

uint64_t sort_bits_of(const SortRequest &request, const unsigned char *bytes) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes, request.key_bytes);  // little-endian: the key's value
    auto order = [&](auto radix) {
        using Bits = decltype(radix);
        return sort_bits(to_radix_key<Bits>(Bits(bits), request.key_kind, request.descending), request.begin_bit,
                         sort_end_bit(request));
    };
    switch (request.key_bytes) {
    case 1: return order(uint8_t());
    case 2: return order(uint16_t());
    case 4: return order(uint32_t());
    default: return order(uint64_t());
    }
}

// Whether the ranks' sorted keys already follow each other in rank order
// (every rank's first key at or after the last key of the ranks before it):
// then the global stable order is what every rank holds, and nothing moves.
// Catches presorted data, all keys equal, and all keys on one rank.
bool already_in_rank_order(Backend &backend, Communicator &communicator, const SortRequest &sorted, uint64_t n) {
    KeyRange mine{};
    if (n) {
        unsigned char first[8] = {}, last[8] = {};
        backend.download(first, sorted.keys_out, sorted.key_bytes);
        backend.download(last, static_cast<const char *>(sorted.keys_out) + (n - 1) * sorted.key_bytes,
                         sorted.key_bytes);
        mine = {1, sort_bits_of(sorted, first), sort_bits_of(sorted, last)};
    }
    const unsigned char *ranges = communicator.host_allgather(&mine, sizeof mine);
    bool seen = false;
    uint64_t last = 0;
    for (int32_t r = 0; r < communicator.size(); ++r) {
        const KeyRange range = gathered_record<KeyRange>(ranges, r);
        if (!range.has_keys) continue;
        if (seen && range.first < last) return false;
        seen = true;
        last = range.last;
    }
    return true;
}

// The scratch parts the steps use (values' parts null without values).
struct SortParts {
    void *own_keys, *received_keys, *received_values, *spare_keys, *spare_values;
};

SortParts parts_of(const SortRequest &request, const SortScratch &scratch, void *block) {
    const bool values = request.value_bytes != 0;
    return {scratch.plan.part(block, scratch.own_keys), scratch.plan.part(block, scratch.received_keys),
            values ? scratch.plan.part(block, scratch.received_values) : nullptr,
            scratch.plan.part(block, scratch.spare_keys),
            values ? scratch.plan.part(block, scratch.spare_values) : nullptr};
}

// Step 1's request: the local stable sort straight into the outputs; an
// argsort without keys_out sorts its keys into scratch.
SortRequest local_sort_of(const SortRequest &request, const SortParts &parts) {
    SortRequest local = request;
    if (!local.keys_out) local.keys_out = parts.own_keys;
    return local;
}

// Step 4's request: the runs received merged back into the outputs.
SortRequest merge_of(const SortRequest &request, const SortRequest &local, const SortParts &parts) {
    SortRequest runs = request;
    runs.keys_in = parts.received_keys;
    runs.keys_out = local.keys_out;
    runs.values_in = parts.received_values;
    runs.values_out = local.values_out;
    runs.values_are_indices = false;
    runs.largest_index = UINT64_MAX;
    return runs;
}

}  // namespace

void take_sort_workspace(Backend &backend, const SortRequest &request, const SortScratch &scratch, void *block,
                         int32_t ranks) {
    const uint64_t n = request.count;
    if (n == 0) return;
    take_local_workspace(backend, [&] {
        if (ranks == 1) return backend.sort(request);
        const SortParts parts = parts_of(request, scratch, block);
        const SortRequest local = local_sort_of(request, parts);
        backend.sort(local);
        // What the merge takes depends on the count and the number of runs
        // only (Backend::merge_sorted_runs), so any runs of n keys measure it.
        std::vector<uint64_t> run_starts(size_t(ranks) + 1);
        for (size_t r = 0; r <= size_t(ranks); ++r) run_starts[r] = n / uint64_t(ranks) * r;
        run_starts[size_t(ranks)] = n;
        backend.merge_sorted_runs(merge_of(request, local, parts), run_starts.data(), uint32_t(ranks),
                                  parts.spare_keys, parts.spare_values);
    });
}

void sort(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const SortRequest &request,
          SortScratch &scratch, void *block) {
    const uint64_t n = layout.local_count();
    if (layout.ranks == 1) {
        if (n) backend.sort(request);
        backend.synchronize();
        return;
    }
    if (layout.total() == 0) return;

    // 1. The local stable sort, straight into the outputs (argsort: global
    // positions); what moves later is exchanged from there.
    const SortParts parts = parts_of(request, scratch, block);
    const SortRequest local = local_sort_of(request, parts);
    if (n) {
        backend.sort(local);
        if (request.values_are_indices && layout.local_offset())
            backend.add_to_indices(local.values_out, n, request.value_bytes, layout.local_offset());
    }
    if (already_in_rank_order(backend, communicator, local, n)) {
        backend.synchronize();
        return;
    }

    // 2. Exact splitters over the sorted keys.
    SortRequest sorted = request;
    sorted.keys_in = local.keys_out;
    find_splits(backend, communicator, layout, sorted, scratch.plan.part<uint64_t>(block, scratch.candidates),
                scratch.plan.part<uint64_t>(block, scratch.counts), scratch.splitter_host);
    const std::vector<uint64_t> &splits = scratch.splitter_host.splits;

    // 3. One exchange of keys (and values), into scratch: block p of what
    // lands comes from rank p. The runs the keys make, for step 4.
    const std::vector<PeerTransfer> &key_transfers =
        transfers_of(layout, splits, request.key_bytes, local.keys_out, parts.received_keys, scratch.transfers);
    std::vector<uint64_t> &run_starts = scratch.run_starts;
    const size_t ranks = size_t(layout.ranks);
    run_starts[0] = 0;
    for (size_t peer = 0; peer < ranks; ++peer)
        run_starts[peer + 1] = run_starts[peer] + key_transfers[peer].receive_bytes / request.key_bytes;
    communicator.exchange(key_transfers);
    if (request.value_bytes)
        communicator.exchange(transfers_of(layout, splits, request.value_bytes, local.values_out,
                                           parts.received_values, scratch.transfers));

    // 4. The runs received, in source-rank order, each sorted: their stable
    // merge (equal keys: lower rank first) back into the outputs.
    if (n)
        backend.merge_sorted_runs(merge_of(request, local, parts), run_starts.data(), static_cast<uint32_t>(ranks),
                                  parts.spare_keys, parts.spare_values);
    backend.synchronize();
}

}  // namespace gpuprim::dist
