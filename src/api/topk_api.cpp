// SPDX-License-Identifier: Apache-2.0
// The top-k entry points: top-k of all keys and per segment.
#include "api/requests.h"
#include "api/validate.h"
#include "core/checked_size.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules


extern "C" {

gpuprim_status_t gpuprim_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k, gpuprim_order_t order,
                              gpuprim_buffer_t keys_out, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        if (k > kin.count)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "k = %llu is more than the %llu keys of 'keys_in'",
                 static_cast<unsigned long long>(k), static_cast<unsigned long long>(kin.count));
        const gpuprim::TopkRequest request =
            topk_request_for(ctx, kin, k, order, keys_out, indices, k, kin.count, true);
        if (k == 0) return;
        gpuprim::SegmentLayout layout{};
        layout.segments = 1;
        layout.row_length = kin.count;
        layout.data_count = kin.count;
        ctx.backend->topk(request, layout);
    });
}

gpuprim_status_t gpuprim_segmented_topk(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                        gpuprim_buffer_t keys_in, uint64_t k, gpuprim_order_t order,
                                        gpuprim_buffer_t keys_out, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, kin.count);
        if (!layout.offsets && k > layout.row_length)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "k = %llu is more than the rows' length, %llu",
                 static_cast<unsigned long long>(k), static_cast<unsigned long long>(layout.row_length));
        uint64_t slots = 0;
        if (!gpuprim::multiply_fits(layout.segments, k, &slots))
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "%llu segments of k = %llu results overflow 64 bits",
                 static_cast<unsigned long long>(layout.segments), static_cast<unsigned long long>(k));
        // Rows: the longest segment is known here; offsets: the backend
        // checks the longest segment against the indices' dtype.
        const gpuprim::TopkRequest request =
            topk_request_for(ctx, kin, k, order, keys_out, indices, slots, longest_segment_by_shape(layout, kin.count),
                             layout.offsets == nullptr);
        if (keys_out) require_offsets_apart(segments, ctx, ctx.resolve(keys_out, "keys_out"), "keys_out");
        if (indices) require_offsets_apart(segments, ctx, ctx.resolve(indices, "indices"), "indices");
        if ((layout.segments == 0 || k == 0) && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->topk(request, layout);
    });
}

}  // extern "C"
