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

namespace {

// A top-k output holds exactly `slots` results.
void require_slots(const Buffer &output, const char *name, uint64_t slots) {
    if (output.count != slots)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'%s' has %llu elements; top-k writes %llu", name,
             static_cast<unsigned long long>(output.count), static_cast<unsigned long long>(slots));
}

// The top-k request for keys_in: order, outputs (each NULL or exactly
// `slots` elements), and the positions the indices must hold (longest: the
// most elements one segment can have; exact unless offsets, which the
// backend checks).
gpuprim::TopkRequest topk_request_for(Context &ctx, const Buffer &kin, uint64_t k, const gpuprim_order_t &order,
                                      gpuprim_buffer_t keys_out, gpuprim_buffer_t indices, uint64_t slots,
                                      uint64_t longest, bool longest_is_exact) {
    require_order(order);
    if (!keys_out && !indices)
        fail(GPUPRIM_ERROR_NULL_POINTER, "'keys_out' and 'indices' are both NULL: top-k needs one of them to write");
    gpuprim::TopkRequest request{};
    request.key_kind = gpuprim::key_kind(kin.dtype);
    request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(kin.dtype));
    request.descending = enum_bits(order) == GPUPRIM_ORDER_DESCENDING;
    request.keys_in = kin.data;
    request.k = k;
    Buffer *kout = keys_out ? &ctx.resolve(keys_out, "keys_out") : nullptr;
    Buffer *idx = indices ? &ctx.resolve(indices, "indices") : nullptr;
    if (kout) {
        require_same_dtype(kin, "keys_in", *kout, "keys_out");
        require_slots(*kout, "keys_out", slots);
        require_no_overlap(kin, "keys_in", *kout, "keys_out", false);
        request.keys_out = kout->data;
    }
    if (idx) {
        require_index_dtype(*idx, "top-k");
        require_slots(*idx, "indices", slots);
        require_no_overlap(kin, "keys_in", *idx, "indices", false);
        if (kout) require_no_overlap(*kout, "keys_out", *idx, "indices", false);
        if (longest_is_exact) require_index_fits(*idx, longest, "top-k over");
        request.indices = idx->data;
        request.index_bytes = static_cast<uint32_t>(gpuprim::dtype_size(idx->dtype));
        request.largest_index = largest_index(idx->dtype);
    }
    return request;
}

}  // namespace

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
            topk_request_for(ctx, kin, k, order, keys_out, indices, slots, longest_segment_bound(layout, kin.count),
                             layout.offsets == nullptr);
        if (keys_out) require_offsets_apart(segments, ctx, ctx.resolve(keys_out, "keys_out"), "keys_out");
        if (indices) require_offsets_apart(segments, ctx, ctx.resolve(indices, "indices"), "indices");
        if ((layout.segments == 0 || k == 0) && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->topk(request, layout);
    });
}

}  // extern "C"
