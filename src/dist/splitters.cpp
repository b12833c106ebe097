// SPDX-License-Identifier: Apache-2.0
// The search (docs/DISTRIBUTED.md): for each rank boundary b, the key at
// global sorted position T_b = offsets[b] is found digit by digit from the
// top of its sort bits, 8 bits a round. A round asks every rank how many of
// its keys lie below 255 candidates per boundary (binary searches in its
// sorted keys, count_keys_below) and sums the answers over ranks (one
// allreduce); the largest candidate with at most T_b keys below it fixes the
// digit. After the last round, each rank's counts below and up to the key
// are gathered, and the keys equal to it are split in rank order.
#include "dist/splitters.h"

#include "core/checked_size.h"
#include "core/error.h"

#include <algorithm>
#include <cstring>

namespace gpuprim::dist {
namespace {

constexpr uint32_t kDigitBits = 8;
constexpr uint64_t kCandidatesPerBoundary = (uint64_t(1) << kDigitBits) - 1;

}  // namespace

void plan_splitter_scratch(ScratchPlan &plan, int32_t ranks, size_t *candidates_part, size_t *counts_part) {
    const uint64_t boundaries = ranks > 1 ? uint64_t(ranks - 1) : 1;
    const uint64_t slots = checked_mul(boundaries, kCandidatesPerBoundary, "the splitter search's candidates");
    *candidates_part = plan.add(checked_mul(slots, 8, "the splitter search's candidates"));
    *counts_part = plan.add(checked_mul(slots, 8, "the splitter search's counts"));
}

SplitterHostArrays::SplitterHostArrays(int32_t ranks) {
    const uint64_t p = uint64_t(ranks > 1 ? ranks : 1);
    const char *what = "the splitter search's host arrays";
    searched = host_array<size_t>(p, what);
    value = host_array<uint64_t>(p, what);
    candidates = host_array<uint64_t>(CheckedSize(p - 1, what).times(kCandidatesPerBoundary).plus(2).value(), what);
    counts = host_array<uint64_t>(candidates.size(), what);
    mine = host_array<uint64_t>(CheckedSize(p, what).times(2).value(), what);
    splits = host_array<uint64_t>(CheckedSize(p, what).times(p + 1).value(), what);
    everyone = host_array<unsigned char>(CheckedSize(p, what).times(p).times(16).value(), what);
}

void find_splits(Backend &backend, Communicator &communicator, const GlobalLayout &layout, const SortRequest &sorted,
                 uint64_t *candidates, uint64_t *counts, SplitterHostArrays &host) {
    const size_t ranks = size_t(layout.ranks);
    const uint64_t total = layout.total();
    const uint64_t local = layout.local_count();
    const uint32_t width = sort_end_bit(sorted) - sorted.begin_bit;
    const uint64_t largest = width >= 64 ? UINT64_MAX : (uint64_t(1) << width) - 1;

    // The boundaries that fall inside the data (a boundary at the end, after
    // trailing empty ranks, takes every key).
    if (host.value.size() < ranks || host.splits.size() < ranks * (ranks + 1))
        fail(GPUPRIM_ERROR_INTERNAL, "the splitter search's host arrays were taken for fewer than %zu ranks", ranks);
    std::vector<size_t> &searched = host.searched;  // capacity: ranks
    searched.clear();
    for (size_t b = 1; b < ranks; ++b)
        if (layout.offsets[b] < total) searched.push_back(b);
    std::vector<uint64_t> &value = host.value;
    std::fill(value.begin(), value.end(), 0);
    std::vector<uint64_t> &host_candidates = host.candidates;
    std::vector<uint64_t> &host_counts = host.counts;

    for (uint32_t bits_left = width; bits_left > 0 && !searched.empty();) {
        const uint32_t digit = std::min(bits_left, kDigitBits);
        bits_left -= digit;
        const uint64_t per_boundary = (uint64_t(1) << digit) - 1;
        const uint64_t used = searched.size() * per_boundary;
        for (size_t s = 0; s < searched.size(); ++s)
            for (uint64_t d = 1; d <= per_boundary; ++d)
                host_candidates[s * per_boundary + d - 1] = value[searched[s]] + (d << bits_left);
        backend.upload(candidates, host_candidates.data(), used * 8);
        backend.count_keys_below(sorted, candidates, used, counts);
        communicator.allreduce_sum(counts, used);
        backend.download(host_counts.data(), counts, used * 8);
        for (size_t s = 0; s < searched.size(); ++s) {
            const uint64_t target = layout.offsets[searched[s]];
            uint64_t chosen = 0;  // the counts grow with d: the last d whose count stays <= target
            for (uint64_t d = 1; d <= per_boundary; ++d)
                if (host_counts[s * per_boundary + d - 1] <= target) chosen = d;
            value[searched[s]] += chosen << bits_left;
        }
    }

    // Each rank's keys below the splitter key and up to it, per boundary.
    std::vector<uint64_t> &mine = host.mine;  // [lt, le] per boundary; unsearched: all of them
    std::fill(mine.begin(), mine.begin() + 2 * ranks, local);
    if (!searched.empty()) {
        // The keys asked: each splitter key and the one after it.
        std::vector<uint64_t> &asked = host_candidates;
        const size_t asked_count = 2 * searched.size();
        for (size_t s = 0; s < searched.size(); ++s) {
            const uint64_t key = value[searched[s]];
            asked[2 * s] = key;
            asked[2 * s + 1] = key == largest ? key : key + 1;
        }
        backend.upload(candidates, asked.data(), asked_count * 8);
        backend.count_keys_below(sorted, candidates, asked_count, counts);
        backend.download(host_counts.data(), counts, asked_count * 8);
        for (size_t s = 0; s < searched.size(); ++s) {
            const size_t b = searched[s];
            mine[2 * b] = host_counts[2 * s];
            mine[2 * b + 1] = value[b] == largest ? local : host_counts[2 * s + 1];
        }
    }
    const unsigned char *gathered = communicator.host_allgather_into(mine.data(), 2 * ranks * 8, host.everyone);
    // Rank i's count below (j = 2b) or up to (j = 2b + 1) splitter key b.
    auto everyone = [&](size_t i, size_t j) {
        uint64_t count;
        std::memcpy(&count, gathered + (i * 2 * ranks + j) * 8, 8);
        return count;
    };

    std::vector<uint64_t> &splits = host.splits;
    for (size_t i = 0; i < ranks; ++i) {
        splits[i * (ranks + 1)] = 0;
        splits[i * (ranks + 1) + ranks] = layout.counts[i];
    }
    for (size_t b = 1; b < ranks; ++b) {
        const uint64_t target = layout.offsets[b];
        uint64_t below = 0;  // keys of every rank below the splitter key
        for (size_t i = 0; i < ranks; ++i) below += everyone(i, 2 * b);
        // Of the keys equal to it, the first target - below go before the
        // boundary, in rank order.
        uint64_t equal_before = below;
        for (size_t i = 0; i < ranks; ++i) {
            const uint64_t lt = everyone(i, 2 * b), le = everyone(i, 2 * b + 1);
            const uint64_t equal = le - lt;
            const uint64_t wanted = target > equal_before ? target - equal_before : 0;
            splits[i * (ranks + 1) + b] = lt + std::min(wanted, equal);
            equal_before += equal;
        }
    }
}

}  // namespace gpuprim::dist
