// SPDX-License-Identifier: Apache-2.0
// The segmented entry points: the segments descriptor, and sort, argsort,
// reduce and scan per segment.
#include "api/requests.h"
#include "api/validate.h"
#include "core/context.h"

#include <gpuprim/gpuprim.h>

#include <cstring>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

void gpuprim_segments_init_rows(gpuprim_segments_t *segments, uint64_t row_count, uint64_t row_length) {
    if (!segments) return;
    std::memset(segments, 0, sizeof *segments);
    segments->struct_size = sizeof *segments;
    segments->offsets = nullptr;
    segments->row_count = row_count;
    segments->row_length = row_length;
}

void gpuprim_segments_init_offsets(gpuprim_segments_t *segments, gpuprim_buffer_t offsets) {
    if (!segments) return;
    gpuprim_segments_init_rows(segments, 0, 0);
    segments->offsets = offsets;
    if (!offsets) segments->row_count = segments->row_length = segments->max_segment_length = kNullOffsetsMark;
}

gpuprim_status_t gpuprim_segmented_sort(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                        gpuprim_buffer_t keys_in, gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                                        gpuprim_buffer_t values_out, const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        SortKeys keys = sort_keys_for(ctx, options, keys_in, keys_out, false);
        add_sort_values(ctx, keys.request, *keys.in, *keys.out, values_in, values_out);
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, keys.in->count);
        require_offsets_apart(segments, ctx, *keys.out, "keys_out");
        if (values_out) require_offsets_apart(segments, ctx, ctx.resolve(values_out, "values_out"), "values_out");
        if (layout.segments == 0 && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->segmented_sort(keys.request, layout);
    });
}

gpuprim_status_t gpuprim_segmented_argsort(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                           gpuprim_buffer_t keys_in, gpuprim_buffer_t keys_out,
                                           gpuprim_buffer_t indices, const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        SortKeys keys = sort_keys_for(ctx, options, keys_in, keys_out, true);
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, keys.in->count);
        // Rows: the longest segment is known here; offsets: the backend
        // checks the longest segment against the indices' dtype.
        add_argsort_indices(ctx, keys.request, *keys.in, keys.out, indices,
                            longest_segment_by_shape(layout, keys.in->count), layout.offsets == nullptr);
        if (keys.out) require_offsets_apart(segments, ctx, *keys.out, "keys_out");
        require_offsets_apart(segments, ctx, ctx.resolve(indices, "indices"), "indices");
        if (layout.segments == 0 && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->segmented_sort(keys.request, layout);
    });
}

gpuprim_status_t gpuprim_segmented_reduce(gpuprim_context_t context, gpuprim_op_t op,
                                          const gpuprim_segments_t *segments, gpuprim_buffer_t input,
                                          gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(output, "output");
        require_same_dtype(in, "input", out, "output");
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, in.count);
        if (out.count != layout.segments)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'output' has %llu elements but there are %llu segments",
                 static_cast<unsigned long long>(out.count), static_cast<unsigned long long>(layout.segments));
        require_no_overlap(in, "input", out, "output", false);
        require_offsets_apart(segments, ctx, out, "output");
        if (layout.segments == 0 && !layout.offsets) return;
        ctx.backend->segmented_reduce(op, in.dtype, layout, in.data, out.data);
    });
}

gpuprim_status_t gpuprim_segmented_scan(gpuprim_context_t context, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                                        const gpuprim_segments_t *segments, gpuprim_buffer_t input,
                                        gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        const ScanOperands operands = scan_operands(ctx, op, kind, input, output);
        const Buffer &in = *operands.in, &out = *operands.out;
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, in.count);
        require_offsets_apart(segments, ctx, out, "output");
        if (layout.segments == 0 && !layout.offsets) return;
        ctx.backend->segmented_scan(op, kind, in.dtype, layout, in.data, out.data);
    });
}

}  // extern "C"
