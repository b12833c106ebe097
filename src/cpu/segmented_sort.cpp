// SPDX-License-Identifier: Apache-2.0
// The CPU segmented sort and argsort (see cpu/segmented.h). A segment of at
// most kShortSegment keys (or any segment when the flat sort would use one
// thread for it) is sorted on one thread by its task: its radix keys, or its
// sort bits packed with the position within the segment (unique, so stable),
// sorted in the segment's own slice of one scratch array, then keys and
// values written out (argsort: the positions are the indices). Longer
// segments go one at a time through the flat parallel sort
// (cpu/sort_by_width.h) with a request for their slice. The workspace is
// reserved once, for the most any of them needs, before anything is written.
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/offsets_check.h"
#include "cpu/segmented.h"
#include "cpu/sort.h"
#include "cpu/sort_by_width.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kShortSegment = uint64_t(1) << 16;

// Keys only, the whole key: the radix keys sorted in scratch (the
// segment's slice of it: scratch covers only what the segments cover).
template <typename KeyBits>
void sort_short_keys(const SortRequest &request, KeyBits *scratch, uint64_t begin, uint64_t n) {
    const auto *in = static_cast<const KeyBits *>(request.keys_in) + begin;
    auto *out = static_cast<KeyBits *>(request.keys_out) + begin;
    KeyBits *a = scratch;
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    for (uint64_t i = 0; i < n; ++i) a[i] = to_radix_key(in[i], kind, descending);
    small_sort(a, n);
    for (uint64_t i = 0; i < n; ++i) out[i] = from_radix_key(a[i], kind, descending);
}

// out[k] = in[position of a[k]]; through stage (then copied) when out is in.
template <typename V, typename Packed>
void gather(const Packed *a, uint64_t n, const V *in, V *out, V *stage) {
    V *to = stage ? stage : out;
    for (uint64_t k = 0; k < n; ++k) to[k] = in[packed_position(a[k])];
    if (stage) std::memcpy(out, stage, n * sizeof(V));
}

template <typename I, typename Packed>
void write_indices(const Packed *a, uint64_t n, I *out) {
    for (uint64_t k = 0; k < n; ++k) out[k] = I(packed_position(a[k]));
}

// Pairs, argsort or a bit range: (sort bits, position) packed, sorted, then
// keys and values written out. scratch: the segment's slice of the packed
// scratch; staging: its slice of the scratch for in-place gathers, stride
// bytes per element (the wider of key and value), so that the segments'
// regions of it are disjoint whatever is staged in them.
template <typename KeyBits, typename Packed>
void sort_short_packed(const SortRequest &request, Packed *scratch, unsigned char *staging, uint64_t begin,
                       uint64_t n) {
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in) + begin;
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    const bool whole = sorts_whole_key(request);
    const uint32_t begin_bit = request.begin_bit, end_bit = sort_end_bit(request);
    Packed *a = scratch;
    for (uint64_t i = 0; i < n; ++i) {
        const KeyBits key = to_radix_key(keys_in[i], kind, descending);
        a[i] = pack<Packed>(whole ? uint64_t(key) : sort_bits(key, begin_bit, end_bit), i);
    }
    small_sort(a, n);
    if (request.keys_out) {
        auto *keys_out = static_cast<KeyBits *>(request.keys_out) + begin;
        if (whole) {
            for (uint64_t k = 0; k < n; ++k) keys_out[k] = from_radix_key(KeyBits(packed_bits(a[k])), kind, descending);
        } else {
            KeyBits *stage =
                request.keys_out == request.keys_in ? reinterpret_cast<KeyBits *>(staging) : nullptr;
            gather(a, n, keys_in, keys_out, stage);
        }
    }
    if (request.values_are_indices) {
        if (request.value_bytes == 4) write_indices(a, n, static_cast<uint32_t *>(request.values_out) + begin);
        else write_indices(a, n, static_cast<uint64_t *>(request.values_out) + begin);
    } else if (request.value_bytes != 0) {
        dispatch_width(request.value_bytes, "segmented sort: unsupported value width", [&](auto value_bits) {
            using V = decltype(value_bits);
            V *stage = request.values_out == request.values_in ? reinterpret_cast<V *>(staging) : nullptr;
            gather(a, n, static_cast<const V *>(request.values_in) + begin, static_cast<V *>(request.values_out) + begin,
                   stage);
        });
    }
}

// The flat sort's request for one segment's slice.
SortRequest slice_of(const SortRequest &request, uint64_t begin, uint64_t n) {
    SortRequest slice = request;
    const uint64_t kb = request.key_bytes, vb = request.value_bytes;
    slice.keys_in = static_cast<const unsigned char *>(request.keys_in) + begin * kb;
    if (request.keys_out) slice.keys_out = static_cast<unsigned char *>(request.keys_out) + begin * kb;
    if (request.values_in) slice.values_in = static_cast<const unsigned char *>(request.values_in) + begin * vb;
    if (request.values_out) slice.values_out = static_cast<unsigned char *>(request.values_out) + begin * vb;
    slice.count = n;
    return slice;
}

void flat_sort(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    if (request.key_bytes <= 2) sort_narrow_keys(parallel, workspace, request, measure);
    else sort_wide_keys(parallel, workspace, request, measure);
}

uint64_t scratch_bytes(uint64_t count, uint64_t size) {
    return CheckedSize(count, "segmented sort scratch").times(size).aligned(64).value();
}

// What the short segments use over n covered elements: the packed elements
// (or radix keys), one per element, then the staging of in-place gathers.
struct ShortScratch {
    bool keys_only, packed64, stage;
    uint64_t stride;      // a staged element's bytes
    uint64_t staging_at;  // where the staging starts
    uint64_t bytes;       // in all
};
ShortScratch short_scratch(const SortRequest &request, uint64_t n) {
    ShortScratch scratch{};
    const bool whole = sorts_whole_key(request);
    scratch.keys_only = whole && request.value_bytes == 0 && !request.values_are_indices;
    const uint32_t sort_width = sort_end_bit(request) - request.begin_bit;
    scratch.packed64 = sort_width <= 32;
    const uint64_t element_bytes =
        scratch.keys_only ? request.key_bytes : scratch.packed64 ? sizeof(uint64_t) : sizeof(Wide);
    scratch.stage = (!whole && request.keys_out && request.keys_out == request.keys_in) ||
                    (!request.values_are_indices && request.value_bytes != 0 &&
                     request.values_out == request.values_in);
    scratch.stride = std::max(request.key_bytes, request.value_bytes);
    scratch.staging_at = scratch_bytes(n, element_bytes);
    scratch.bytes = checked_add(scratch.staging_at, scratch.stage ? scratch_bytes(n, scratch.stride) : 0,
                                "segmented sort scratch");
    return scratch;
}

}  // namespace

void segmented_sort(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                    const SegmentLayout &layout, uint64_t *measure) {
    // Offsets, then each segment's last index against the indices' type
    // (rows: checked by the api). A measure reads no offsets.
    if (!measure) check_offsets_on_host(layout, request.values_are_indices ? request.largest_index : UINT64_MAX);
    if (!layout.offsets && layout.row_length == 0) {  // no keys (the row count may be anything)
        if (measure) *measure = 0;
        return;
    }
    const bool threaded = parallel.threads() > 1;
    // Long: the flat sort would cut it into several runs (or, on one thread,
    // it is too long for 32-bit positions in the packed form).
    const auto is_long = [&](uint64_t length) {
        return length > kShortSegment && (!threaded || sort_runs(parallel, length) > 1);
    };
    if (measure) {
        // Rows: every segment is long or none is. Offsets (not read): any
        // segment may be short, and one as long as the data or the promise.
        const uint64_t longest = longest_segment_bound(layout);
        uint64_t need = 0;
        if (layout.segments != 0 && (layout.offsets || !is_long(longest)))
            need = short_scratch(request, layout.data_count).bytes;
        if (layout.segments != 0 && is_long(longest)) {
            uint64_t bytes = 0;
            flat_sort(parallel, workspace, slice_of(request, 0, longest), &bytes);
            need = std::max(need, bytes);
        }
        *measure = need;
        return;
    }
    const SegmentPlan plan = plan_segments(layout, is_long);

    // Scratch for what the segments cover, not the whole buffer (which may
    // be far longer): a segment's slice starts at its offset from covered.begin.
    const SegmentSpan covered = covered_span(layout);
    const bool any_short = plan.long_segments.size() < layout.segments;
    const ShortScratch shorts = any_short ? short_scratch(request, covered.length) : ShortScratch{};
    const bool keys_only = shorts.keys_only, packed64 = shorts.packed64, stage = shorts.stage;
    const uint64_t stride = shorts.stride, staging_at = shorts.staging_at, short_bytes = shorts.bytes;
    uint64_t need = short_bytes;
    for (const uint64_t s : plan.long_segments) {
        const SegmentSpan span = segment_span(layout, s);
        uint64_t bytes = 0;
        flat_sort(parallel, workspace, slice_of(request, span.begin, span.length), &bytes);
        need = std::max(need, bytes);
    }
    // Reserved once: the flat sorts below then find it big enough.
    auto *base = need ? static_cast<unsigned char *>(workspace.reserve(need)) : nullptr;

    if (short_bytes) {
        unsigned char *staging = stage ? base + staging_at : nullptr;
        dispatch_width(request.key_bytes, "segmented sort: unsupported key width", [&](auto key_bits) {
            using K = decltype(key_bits);
            auto run = [&](auto sort_one) {
                parallel.for_each(plan.tasks(), [&](size_t t) {
                    for (uint64_t s = plan.task_bounds[t]; s < plan.task_bounds[t + 1]; ++s) {
                        const SegmentSpan span = segment_span(layout, s);
                        if (span.length == 0 || is_long(span.length)) continue;
                        sort_one(span.begin, span.begin - covered.begin, span.length);
                    }
                });
            };
            // at: the segment's position in the scratch.
            const auto staging_of = [&](uint64_t at) { return staging ? staging + at * stride : nullptr; };
            if (keys_only)
                run([&](uint64_t b, uint64_t at, uint64_t len) {
                    sort_short_keys<K>(request, reinterpret_cast<K *>(base) + at, b, len);
                });
            else if (packed64)
                run([&](uint64_t b, uint64_t at, uint64_t len) {
                    sort_short_packed<K, uint64_t>(request, reinterpret_cast<uint64_t *>(base) + at, staging_of(at),
                                                   b, len);
                });
            else
                run([&](uint64_t b, uint64_t at, uint64_t len) {
                    sort_short_packed<K, Wide>(request, reinterpret_cast<Wide *>(base) + at, staging_of(at), b, len);
                });
        });
    }
    for (const uint64_t s : plan.long_segments) {
        const SegmentSpan span = segment_span(layout, s);
        flat_sort(parallel, workspace, slice_of(request, span.begin, span.length), nullptr);
    }
}

}  // namespace cpu
}  // namespace gpuprim
