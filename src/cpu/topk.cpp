// SPDX-License-Identifier: Apache-2.0
// The CPU top-k (gpuprim_topk, gpuprim_segmented_topk). Each key becomes its
// radix key (core/key_transform.h; descending is the complement) packed with
// its position in the segment, so the wanted result is exactly the m
// smallest packed values, m = min(k, length), in increasing order: packed
// values are unique, so the selection (std::nth_element) and the order are
// the stable sort's, ties lower position first.
//
// Short segments run whole on one thread, many to a task (cpu/segmented.h).
// A long segment is cut into chunks of kChunk keys: each chunk keeps its own
// m smallest in parallel, then one selection over the survivors (at most
// chunks * m) finds the segment's m. When m is more than a quarter of the
// segment, chunking saves nothing and the segment is selected whole. The
// chunks' bounds depend only on the segment, and the result is unique, so it
// is the same for every thread count. The scratch (one packed value per key)
// is reserved from the workspace before anything is written.
#include "core/portable.h"
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "cpu/segmented.h"
#include "cpu/sort.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kChunk = uint64_t(1) << 16;

// p[0, n) loses all but its m smallest, which end up sorted in p[0, m).
template <typename Packed>
void keep_smallest(Packed *p, uint64_t n, uint64_t m) {
    if (m < n) std::nth_element(p, p + m, p + n, [](const Packed &a, const Packed &b) { return a < b; });
    small_sort(p, m);
}

template <typename KeyBits, typename Packed>
void pack_keys(const TopkRequest &request, const KeyBits *keys, uint64_t first, uint64_t n, Packed *to) {
    for (uint64_t i = 0; i < n; ++i)
        to[i] = pack<Packed>(uint64_t(to_radix_key(keys[i], request.key_kind, request.descending)), first + i);
}

// Result j of the segment whose slots start at slot.
template <typename KeyBits, typename Packed>
void write_result(const TopkRequest &request, uint64_t slot, uint64_t j, const Packed &p) {
    if (request.keys_out)
        static_cast<KeyBits *>(request.keys_out)[slot + j] =
            from_radix_key(KeyBits(packed_bits(p)), request.key_kind, request.descending);
    if (request.indices) {
        if (request.index_bytes == 4) static_cast<uint32_t *>(request.indices)[slot + j] = uint32_t(packed_position(p));
        else static_cast<uint64_t *>(request.indices)[slot + j] = packed_position(p);
    }
}

template <typename KeyBits, typename Packed>
void write_results(const TopkRequest &request, const Packed *p, uint64_t m, uint64_t slot) {
    for (uint64_t j = 0; j < m; ++j) write_result<KeyBits>(request, slot, j, p[j]);
}

// One segment on the calling thread; scratch holds its length.
template <typename KeyBits, typename Packed>
void select_short(const TopkRequest &request, uint64_t begin, uint64_t n, uint64_t slot, Packed *scratch) {
    const uint64_t m = std::min(request.k, n);
    pack_keys(request, static_cast<const KeyBits *>(request.keys_in) + begin, 0, n, scratch);
    keep_smallest(scratch, n, m);
    write_results<KeyBits>(request, scratch, m, slot);
}

// One long segment on every thread.
// merge_scratch: sort_scratch_elements(parallel, n) elements.
template <typename KeyBits, typename Packed>
void select_long(Parallel &parallel, const TopkRequest &request, uint64_t begin, uint64_t n, uint64_t slot,
                 Packed *scratch, Packed *merge_scratch) {
    const uint64_t m = std::min(request.k, n);
    const auto *keys = static_cast<const KeyBits *>(request.keys_in) + begin;
    const uint64_t chunks = ceil_div(n, kChunk);
    if (m > n / 4) {
        parallel.for_each(chunks, [&](size_t c) {
            const uint64_t first = c * kChunk;
            pack_keys(request, keys + first, first, std::min(kChunk, n - first), scratch + first);
        });
        if (m < n)
            std::nth_element(scratch, scratch + m, scratch + n, [](const Packed &a, const Packed &b) { return a < b; });
        sort_and_emit(parallel, scratch, merge_scratch, m,
                      [&](uint64_t j, const Packed &p) { write_result<KeyBits>(request, slot, j, p); });
        return;
    }
    parallel.for_each(chunks, [&](size_t c) {
        const uint64_t first = c * kChunk;
        const uint64_t length = std::min(kChunk, n - first);
        pack_keys(request, keys + first, first, length, scratch + first);
        keep_smallest(scratch + first, length, std::min(m, length));
    });
    // The survivors to the front, chunk by chunk (each chunk's lies at or
    // after the place it moves to).
    uint64_t survivors = 0;
    for (uint64_t c = 0; c < chunks; ++c) {
        const uint64_t first = c * kChunk;
        const uint64_t kept = std::min(m, std::min(kChunk, n - first));
        std::memmove(scratch + survivors, scratch + first, kept * sizeof(Packed));
        survivors += kept;
    }
    keep_smallest(scratch, survivors, m);
    write_results<KeyBits>(request, scratch, m, slot);
}

template <typename KeyBits, typename Packed>
void run_topk(Parallel &parallel, const TopkRequest &request, const SegmentLayout &layout, const SegmentPlan &plan,
              const std::function<bool(uint64_t)> &is_long, Packed *scratch) {
    // scratch: one packed value per key the segments cover, then the merge scratch.
    const SegmentSpan covered = covered_span(layout);
    Packed *merge_scratch = scratch + covered.length;
    parallel.for_each(plan.tasks(), [&](size_t t) {
        for (uint64_t s = plan.task_bounds[t]; s < plan.task_bounds[t + 1]; ++s) {
            const SegmentSpan span = segment_span(layout, s);
            if (span.length == 0 || is_long(span.length)) continue;
            select_short<KeyBits>(request, span.begin, span.length, s * request.k,
                                  scratch + (span.begin - covered.begin));
        }
    });
    for (const uint64_t s : plan.long_segments) {
        const SegmentSpan span = segment_span(layout, s);
        select_long<KeyBits>(parallel, request, span.begin, span.length, s * request.k,
                             scratch + (span.begin - covered.begin), merge_scratch);
    }
}

}  // namespace

void topk(Parallel &parallel, Workspace &workspace, const TopkRequest &request, const SegmentLayout &layout) {
    check_offsets_on_host(layout);
    const bool threaded = parallel.threads() > 1;
    const std::function<bool(uint64_t)> is_long = [&](uint64_t length) { return threaded && length > kChunk; };
    const SegmentPlan plan = plan_segments(layout, is_long);
    // largest_index is UINT64_MAX without indices. Not request.indices: an
    // indices buffer of no elements (k = 0) has no data pointer, and its
    // dtype must still hold every position (as gpuprim_topk and rows check).
    if (plan.longest > 0 && plan.longest - 1 > request.largest_index)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "segmented top-k: a segment of %llu keys has index %llu, which does not fit the 'indices' (at most %llu)",
             static_cast<unsigned long long>(plan.longest), static_cast<unsigned long long>(plan.longest - 1),
             static_cast<unsigned long long>(request.largest_index));
    if (request.k == 0 || layout.data_count == 0) return;
    // (radix key << 32 | position) while both fit 32 bits, else 128 bits.
    const bool packed64 = request.key_bytes <= 4 && plan.longest <= (uint64_t(1) << 32);
    const uint64_t element = packed64 ? sizeof(uint64_t) : sizeof(Wide);
    // One packed value per key the segments cover (not the whole buffer,
    // which may be far longer), then the long segments' merge scratch.
    const uint64_t merge_elements = plan.long_segments.empty() ? 0 : sort_scratch_elements(parallel, plan.longest);
    const uint64_t bytes =
        CheckedSize(covered_span(layout).length, "top-k scratch").plus(merge_elements).times(element).value();
    void *scratch = workspace.reserve(bytes);
    dispatch_width(request.key_bytes, "top-k: unsupported key width", [&](auto key_bits) {
        using K = decltype(key_bits);
        if (packed64) run_topk<K>(parallel, request, layout, plan, is_long, static_cast<uint64_t *>(scratch));
        else run_topk<K>(parallel, request, layout, plan, is_long, static_cast<Wide *>(scratch));
    });
}

}  // namespace cpu
}  // namespace gpuprim
